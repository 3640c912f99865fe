package quota

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestConnectionLimit(t *testing.T) {
	limits := map[string]int{"10.0.0.1": 2, "10.0.0.2": 0}
	for _, c := range []struct {
		ip      string
		def     int
		open    int
		limit   int
		refused bool
	}{
		{"10.0.0.1", 5, 1, 2, false},
		{"10.0.0.1", 5, 2, 2, true},
		{"10.0.0.2", 5, 0, 0, true}, // an override of 0 refuses all
		{"10.0.0.3", 5, 4, 5, false},
		{"10.0.0.3", 5, 5, 5, true},
		{"10.0.0.3", 0, 100, 0, false}, // no default: unbounded
	} {
		limit, refused := ConnectionLimit(limits, c.def, c.ip, c.open)
		if limit != c.limit || refused != c.refused {
			t.Errorf("ConnectionLimit(%s, def %d, open %d) = %d, %v; want %d, %v", c.ip, c.def, c.open, limit, refused, c.limit, c.refused)
		}
	}
}

func TestStrictMutations(t *testing.T) {
	if Strict(keyCreateTopics, 5) || !Strict(keyCreateTopics, 6) || Strict(keyDeleteTopics, 4) || !Strict(keyDeleteTopics, 5) ||
		Strict(keyCreatePartitions, 2) || !Strict(keyCreatePartitions, 3) {
		t.Fatal("strict versions are KIP-599's: CreateTopics v6, DeleteTopics v5, CreatePartitions v3")
	}
	if !Mutating(keyCreateTopics) || Mutating(keyApiVersions) || !Exempt(keyApiVersions) || Exempt(keyCreateTopics) {
		t.Fatal("mutating and exempt keys")
	}
}

func TestThrottledFetch(t *testing.T) {
	full := func() *kmsg.FetchResponse {
		fr := kmsg.NewPtrFetchResponse()
		fr.SessionID = 7
		fr.Topics = []kmsg.FetchResponseTopic{{Partitions: []kmsg.FetchResponseTopicPartition{{RecordBatches: []byte{1}}}}}
		return fr
	}
	var removed []int32
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.SessionEpoch = 12, 0 // opening a session
	fr := full()
	ThrottledFetch(r, fr, func(id int32) { removed = append(removed, id) })
	if len(fr.Topics) != 0 || fr.Topics == nil || fr.SessionID != 0 || len(removed) != 1 || removed[0] != 7 {
		t.Fatalf("session-opening fetch: topics %v session %d removed %v", fr.Topics, fr.SessionID, removed)
	}
	r.SessionEpoch = 3 // incremental
	fr = full()
	ThrottledFetch(r, fr, func(int32) { t.Fatal("incremental session removed") })
	if b := fr.Topics[0].Partitions[0].RecordBatches; b == nil || len(b) != 0 || fr.SessionID != 7 {
		t.Fatalf("incremental fetch: batches %v session %d", b, fr.SessionID)
	}
}
