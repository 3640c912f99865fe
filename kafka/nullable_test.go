package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Nullable fields are encoded as Apache Kafka 4.4 encodes them (checked
// against a real broker): kmsg encodes a nil slice as null and decodes a
// null as nil, an empty one as empty, so the decoded response tells them
// apart.

// A Fetch error partition carries empty records and no bounds (-1), at
// every version: librdkafka refuses a whole response holding a null
// record set. AbortedTransactions is null for read_uncommitted, a list
// for read_committed (when the partition is read).
func TestFetchNullableFieldsAsKafka(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"n": 1})
	g.produce("n", 0)
	topic, _ := g.s.cfg.Resolver.Topic("n")
	for _, v := range []int16{4, 11, 12, 13} {
		for _, c := range []struct {
			name      string
			offset    int64
			iso       int8
			code      int16
			abortedOK func([]kmsg.FetchResponseTopicPartitionAbortedTransaction) bool
		}{
			{"out of range", 1000, 0, kerr.OffsetOutOfRange.Code, isNil},
			{"out of range, read_committed", 1000, 1, kerr.OffsetOutOfRange.Code, isNil},
			{"at the end", 1, 0, 0, isNil},
			{"at the end, read_committed", 1, 1, 0, isEmpty},
		} {
			req := fetchReq(0, -1, []fetchPart{{topic: "n", offset: c.offset}}, nil)
			req.SetVersion(v)
			req.IsolationLevel = c.iso
			if v >= 13 {
				req.Topics[0].TopicID = topic.ID
			}
			p := onlyPartition(t, g.fetch(req))
			if p.ErrorCode != c.code || p.RecordBatches == nil || len(p.RecordBatches) != 0 {
				t.Fatalf("v%d %s: code %d, records nil %v len %d", v, c.name, p.ErrorCode, p.RecordBatches == nil, len(p.RecordBatches))
			}
			if c.code != 0 && (p.HighWatermark != -1 || p.LastStableOffset != -1 || p.LogStartOffset != -1) {
				t.Fatalf("v%d %s: bounds %d %d %d, want -1", v, c.name, p.HighWatermark, p.LastStableOffset, p.LogStartOffset)
			}
			if !c.abortedOK(p.AbortedTransactions) && v >= 4 {
				t.Fatalf("v%d %s: aborted transactions nil %v len %d", v, c.name, p.AbortedTransactions == nil, len(p.AbortedTransactions))
			}
		}
	}
	// An unknown topic id (v13+) is an error partition too.
	req := fetchReq(0, -1, []fetchPart{{topic: "", offset: 0}}, nil)
	req.SetVersion(13)
	req.Topics[0].TopicID = [16]byte{1, 2, 3}
	p := onlyPartition(t, g.fetch(req))
	if p.ErrorCode != kerr.UnknownTopicID.Code || p.RecordBatches == nil {
		t.Fatalf("unknown topic id: code %d, records nil %v", p.ErrorCode, p.RecordBatches == nil)
	}
}

func isNil(a []kmsg.FetchResponseTopicPartitionAbortedTransaction) bool { return a == nil }
func isEmpty(a []kmsg.FetchResponseTopicPartitionAbortedTransaction) bool {
	return a != nil && len(a) == 0
}

// A CreateTopics error carries an empty Configs list, not null (Kafka's
// default for the field).
func TestCreateTopicsErrorConfigsEmpty(t *testing.T) {
	g := newSessionRig(t, Config{}, map[string]int32{"exists": 1})
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "exists", 1, 1
	req.Topics = append(req.Topics, rt)
	resp := ask(g.c, req).(*kmsg.CreateTopicsResponse)
	got := resp.Topics[0]
	if got.ErrorCode != kerr.TopicAlreadyExists.Code || got.Configs == nil {
		t.Fatalf("code %d, configs nil %v", got.ErrorCode, got.Configs == nil)
	}
}
