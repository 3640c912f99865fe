package share

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tenLog is fakeLog over two batches of ten records each (0..9, 10..19).
type tenLog struct{ fakeLog }

func (tenLog) Bounds(string, int32) (int64, int64, error) { return 0, 20, nil }

func (tenLog) Read(_ string, _ int32, offset int64, _ int, _ Wire) ([][]byte, error) {
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

// A batch-optimized acquisition does not begin a batch the in-flight
// window cannot hold whole while records are in flight before it
// (fitsLocked): the batch would be sent whole for the records before the
// bound and whole again for the rest. A batch larger than the window
// bound is still taken, in parts, once nothing is in flight before it.
func TestBatchOptimizedWaitsForRoomForTheWholeBatch(t *testing.T) {
	now := time.Unix(1000, 0)
	whole := func(member string, max, locks int) acquireArgs {
		a := args(member, max, locks, now)
		a.wholeBatches = true
		return a
	}
	p := newPartition(0)
	if got := p.acquireLocked(spans(t, batchHeader(0, 9, false)), whole("a", 5, 15)); !reflect.DeepEqual(got, []acquiredRange{{0, 9, 1}}) {
		t.Fatalf("first batch: acquired %v, want 0..9", got)
	}
	next := spans(t, batchHeader(10, 9, false))
	if got := p.acquireLocked(next, whole("b", 5, 15)); len(got) != 0 {
		t.Fatalf("a batch the window cannot hold whole: acquired %v, want nothing", got)
	}
	if got := p.acquireLocked(next, args("b", 5, 15, now)); !reflect.DeepEqual(got, []acquiredRange{{10, 14, 1}}) {
		t.Fatalf("record-limit: acquired %v, want 10..14", got)
	}
	big := newPartition(0)
	if got := big.acquireLocked(spans(t, batchHeader(0, 29, false)), whole("a", 5, 15)); !reflect.DeepEqual(got, []acquiredRange{{0, 14, 1}}) {
		t.Fatalf("a batch larger than the window, nothing in flight: acquired %v, want 0..14", got)
	}
}

// tenWaitLog is tenLog recording the end of each long-poll wait.
type tenWaitLog struct {
	tenLog
	until *[]time.Time
}

func (l tenWaitLog) Wait(_ context.Context, _ []offsets.TopicPartition, _ []<-chan struct{}, until time.Time) bool {
	*l.until = append(*l.until, until)
	return false
}

// A holder's fetch that read a batch the window cannot hold whole is
// answered as a holder's fetch with nothing to take (answerHolderLocked):
// at once the first time, then after ownBlockWait at most — not after
// MaxWaitMillis, with the member's acknowledgement, the only thing that
// can make room, behind it.
func TestHolderFetchOnABatchThatDoesNotFitAnswersAtOnce(t *testing.T) {
	now := time.Unix(1000, 0)
	var until []time.Time
	c := clockedCoordinator(t, tenWaitLog{until: &until}, 15, func() time.Time { return now })
	if resp := join(c, "a"); resp.ErrorCode != 0 {
		t.Fatalf("join: error %d", resp.ErrorCode)
	}
	if first, last := modeFetch(t, c, "a", 5, 0); first != 0 || last != 9 {
		t.Fatalf("acquired %d..%d, want 0..9", first, last)
	}
	for epoch := int32(1); epoch <= 2; epoch++ {
		req := kmsg.NewPtrShareFetchRequest()
		group, member := "g", "a"
		req.GroupID, req.MemberID, req.ShareSessionEpoch, req.MaxRecords, req.MaxBytes, req.MaxWaitMillis = &group, &member, epoch, 5, 1<<20, 10_000
		if resp := c.Fetch(context.Background(), req, "", nil); resp.ErrorCode != 0 {
			t.Fatalf("fetch %d: error %d", epoch, resp.ErrorCode)
		}
		if epoch == 1 && len(until) != 0 {
			t.Fatalf("the holder's first fetch after its records waited until %v, want an answer at once", until)
		}
	}
	if len(until) != 1 || !until[0].Equal(now.Add(ownBlockWait)) {
		t.Fatalf("the holder's second fetch waited until %v, want %v", until, now.Add(ownBlockWait))
	}
}
