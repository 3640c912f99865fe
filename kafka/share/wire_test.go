package share

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// intoLog is tenLog that notes the Wire each read was given.
type intoLog struct {
	tenLog
	into *[]Wire
}

func (l intoLog) Read(topic string, p int32, off int64, max int, into Wire) ([][]byte, error) {
	*l.into = append(*l.into, into)
	return l.tenLog.Read(topic, p, off, max, into)
}

// A ShareFetch answered by reference (FetchInto) reads into its Wire and
// answers the batches the copied answer (Fetch) carries, byte for byte,
// with the same acquired records: here 0..14 of two batches of ten, in
// record-limit mode, so that the copy concatenates two batches.
func TestFetchIntoAnswersTheCopiedBatches(t *testing.T) {
	fetch := func(w Wire) (*kmsg.ShareFetchResponse, []Wire) {
		store, err := offsets.Open(t.TempDir(), offsets.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		var seen []Wire
		c, err := NewCoordinator(store, intoLog{into: &seen}, nil, Config{})
		if err != nil {
			t.Fatal(err)
		}
		c.mu.configs["g"] = map[string]string{ConfigAutoOffsetReset: "earliest"}
		if resp := join(c, "a"); resp.ErrorCode != 0 {
			t.Fatalf("join: error %d", resp.ErrorCode)
		}
		req := kmsg.NewPtrShareFetchRequest()
		group, member := "g", "a"
		req.GroupID, req.MemberID, req.MaxRecords, req.MaxBytes, req.ShareAcquireMode = &group, &member, 15, 1<<20, 1
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = topicID
		rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		resp := c.FetchInto(context.Background(), req, "", nil, w)
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("fetch: %+v", resp)
		}
		return resp, seen
	}
	copied, seen := fetch(nil)
	for _, w := range seen {
		if w != nil {
			t.Fatal("a fetch without a Wire read into one")
		}
	}
	var w markWire
	marked, seen := fetch(&w)
	if len(seen) == 0 || seen[0] != Wire(&w) {
		t.Fatalf("the reads were given %v, not the fetch's Wire", seen)
	}
	cp, mp := copied.Topics[0].Partitions[0], marked.Topics[0].Partitions[0]
	if string(mp.Records) != "marker" || len(w.marked) != 2 {
		t.Fatalf("records %q, %d batches marked, want the marker of two", mp.Records, len(w.marked))
	}
	if joined := bytes.Join(w.marked, nil); !bytes.Equal(joined, cp.Records) || w.size != len(joined) {
		t.Fatalf("marked batches (%d bytes, size %d) differ from the copied records (%d)", len(joined), w.size, len(cp.Records))
	}
	if !reflect.DeepEqual(cp.AcquiredRecords, mp.AcquiredRecords) || cp.AcquiredRecords[0].LastOffset != 14 {
		t.Fatalf("acquired %+v by reference, %+v copied", mp.AcquiredRecords, cp.AcquiredRecords)
	}
}
