package share

import (
	"context"
	"testing"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tenLog is fakeLog over two batches of ten records each (0..9, 10..19).
type tenLog struct{ fakeLog }

func (tenLog) Bounds(string, int32) (int64, int64, error) { return 0, 20, nil }

func (tenLog) Read(_ string, _ int32, offset int64, _ int) ([][]byte, error) {
	var out [][]byte
	for _, base := range []int64{0, 10} {
		if offset <= base+9 {
			out = append(out, batchHeader(base, 9, false))
		}
	}
	return out, nil
}

// modeFetch opens member's session and fetches at most max records in
// acquire mode mode; it returns the acquired offsets, first and last.
func modeFetch(t *testing.T, c *Coordinator, member string, max int32, mode int8) (int64, int64) {
	t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	group := "g"
	req.GroupID, req.MemberID, req.MaxRecords, req.MaxBytes, req.ShareAcquireMode = &group, &member, max, 1<<20, mode
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = topicID
	rt.Partitions = append(rt.Partitions, kmsg.NewShareFetchRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp := c.Fetch(context.Background(), req, "", nil)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch of %s: %+v", member, resp)
	}
	ar := resp.Topics[0].Partitions[0].AcquiredRecords
	if len(ar) != 1 {
		t.Fatalf("fetch of %s acquired %+v, want one range", member, ar)
	}
	return ar[0].FirstOffset, ar[0].LastOffset
}

// MaxRecords "can be exceeded for alignment of batch boundaries": in
// batch-optimized mode (ShareAcquireMode 0) a batch an acquisition began
// below MaxRecords is acquired to its end, so the batch the response
// carries is not sent again for its rest; in record-limit mode (1)
// MaxRecords is a hard bound.
func TestBatchOptimizedAcquiresWholeBatches(t *testing.T) {
	store, err := offsets.Open(t.TempDir(), offsets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	c, err := NewCoordinator(store, tenLog{}, nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.configs["g"] = map[string]string{ConfigAutoOffsetReset: "earliest"}
	for _, m := range []string{"a", "b"} {
		if resp := join(c, m); resp.ErrorCode != 0 {
			t.Fatalf("join %s: error %d", m, resp.ErrorCode)
		}
	}
	if first, last := modeFetch(t, c, "a", 5, 0); first != 0 || last != 9 {
		t.Fatalf("batch-optimized fetch of 5 acquired %d..%d, want the whole first batch 0..9", first, last)
	}
	if first, last := modeFetch(t, c, "b", 5, 1); first != 10 || last != 14 {
		t.Fatalf("record-limit fetch of 5 acquired %d..%d, want 10..14", first, last)
	}
}
