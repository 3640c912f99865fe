package test

import (
	"testing"

	"github.com/kgateway/kgateway/kafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestShareGroupBounds: what a client controls is bounded (the share bounds):
// members per group, share sessions in total, records in flight per
// partition (the in-flight window bound), and acknowledgement batches; an acknowledgement of
// records the member does not hold changes nothing (acknowledgement by the lock holder).
func TestShareGroupBounds(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{share: share.Config{MaxSize: 2, MaxShareSessions: 2, PartitionMaxRecordLocks: 100}})
	const topic, group = "sb", "sb-group"
	g.createTopic(topic, 1)
	produceNumbered(t, g.addr, topic, 300)
	setGroupConfigs(t, g.addr, group, share.ConfigAutoOffsetReset, "earliest")

	a := joinRaw(t, g.addr, group, topic, "member-a-000000000001")
	b := joinRaw(t, g.addr, group, topic, "member-b-000000000001")
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = group, "member-c-000000000001", []string{topic}
	if r := request[*kmsg.ShareGroupHeartbeatResponse](t, a.cl, hb); r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Errorf("third member of a group of at most 2: %v, want GROUP_MAX_SIZE_REACHED", kerr.ErrorForCode(r.ErrorCode))
	}

	// The in-flight window bound: a's fetch takes the whole window; b gets nothing until a
	// finishes some.
	held := a.fetch(0)
	if len(held) != 100 {
		t.Fatalf("acquired %d records with max.record.locks 100, want 100", len(held))
	}
	if got := b.fetch(0); len(got) != 0 {
		t.Fatalf("b acquired %d records while the window was full", len(got))
	}

	// Two sessions are open (a, b): a third is refused.
	other := joinRaw(t, g.addr, "sb-other", topic, "member-d-000000000001")
	req := kmsg.NewPtrShareFetchRequest()
	req.GroupID, req.MemberID, req.MaxRecords = &other.group, &other.id, 10
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = other.topic
	rt.Partitions = []kmsg.ShareFetchRequestTopicPartition{kmsg.NewShareFetchRequestTopicPartition()}
	req.Topics = []kmsg.ShareFetchRequestTopic{rt}
	if r := request[*kmsg.ShareFetchResponse](t, other.cl, req); r.ErrorCode != kerr.ShareSessionLimitReached.Code {
		t.Errorf("third share session of at most 2: %v, want SHARE_SESSION_LIMIT_REACHED", kerr.ErrorForCode(r.ErrorCode))
	}

	ack := func(m *rawMember, batches ...kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch) int16 {
		req := kmsg.NewPtrShareAcknowledgeRequest()
		req.Version = 2
		req.GroupID, req.MemberID, req.ShareSessionEpoch = &m.group, &m.id, m.sepoch
		rt := kmsg.NewShareAcknowledgeRequestTopic()
		rt.TopicID = m.topic
		rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
		rp.AcknowledgementBatches = batches
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		r := request[*kmsg.ShareAcknowledgeResponse](t, m.cl, req)
		if r.ErrorCode != 0 {
			t.Fatalf("share acknowledge: %v", kerr.ErrorForCode(r.ErrorCode))
		}
		m.sepoch++
		return r.Topics[0].Partitions[0].ErrorCode
	}
	batch := func(first, last int64, typ int8) kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch {
		return kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{FirstOffset: first, LastOffset: last, AcknowledgeTypes: []int8{typ}}
	}
	many := make([]kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch, 1001)
	for i := range many {
		many[i] = batch(int64(i), int64(i), 1)
	}
	for name, bs := range map[string][]kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{
		"1001 batches":         many,
		"overlapping batches":  {batch(0, 5, 1), batch(5, 9, 1)},
		"a range beyond locks": {batch(0, 100, 1)},
		"an unknown type":      {batch(0, 0, 9)},
		"renew without v2 ack": {batch(0, 0, 4)},
	} {
		if code := ack(a, bs...); code != kerr.InvalidRequest.Code {
			t.Errorf("%s: %v, want INVALID_REQUEST", name, kerr.ErrorForCode(code))
		}
	}
	// b holds nothing: its accept of a's records is refused and changes
	// nothing, a's own accept of the first 50 goes through.
	if code := ack(b, batch(0, 49, 1)); code != kerr.InvalidRecordState.Code {
		t.Errorf("accepting records another member holds: %v, want INVALID_RECORD_STATE", kerr.ErrorForCode(code))
	}
	if code := ack(a, batch(0, 49, 1)); code != 0 {
		t.Fatalf("accepting held records: %v", kerr.ErrorForCode(code))
	}
	if got := shareOffset(t, g.addr, group, topic); got != 50 {
		t.Errorf("start offset %d after accepting 0-49, want 50", got)
	}
	got := b.fetch(0)
	if len(got) != 50 {
		t.Errorf("b acquired %d records after 50 left the window, want 50", len(got))
	}
	for off := range got {
		if off < 100 || off >= 150 {
			t.Errorf("b acquired offset %d, want 100-149", off)
		}
	}
}
