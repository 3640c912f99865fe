package fetch

import (
	"testing"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCurrentEpochOnlyKnownFromV9 checks that a client's current leader
// epoch is checked from Fetch v9 only, and only when it knows one (>= 0),
// as Kafka reads a negative one as none.
func TestCurrentEpochOnlyKnownFromV9(t *testing.T) {
	rp := kmsg.NewFetchRequestTopicPartition()
	for _, c := range []struct {
		version int16
		epoch   int32
		want    int32
	}{
		{8, 3, NoEpoch}, {9, 3, 3}, {12, -1, NoEpoch}, {12, 0, 0},
	} {
		rp.CurrentLeaderEpoch = c.epoch
		if got := currentEpoch(c.version, rp); got != c.want {
			t.Errorf("v%d epoch %d: %d, want %d", c.version, c.epoch, got, c.want)
		}
	}
}

// TestAbortedOfNullForReadUncommitted checks AbortedTransactions as Kafka
// sends it: null for read_uncommitted, a list (empty when none) for
// read_committed.
func TestAbortedOfNullForReadUncommitted(t *testing.T) {
	aborted := []resolver.AbortedTxn{{ProducerID: 7, FirstOffset: 42}}
	if got := abortedOf(resolver.ReadUncommitted, aborted); got != nil {
		t.Errorf("read_uncommitted: %v, want null", got)
	}
	if got := abortedOf(resolver.ReadCommitted, nil); got == nil || len(got) != 0 {
		t.Errorf("read_committed, none: %v, want an empty list", got)
	}
	got := abortedOf(resolver.ReadCommitted, aborted)
	if len(got) != 1 || got[0].ProducerID != 7 || got[0].FirstOffset != 42 {
		t.Errorf("read_committed: %v", got)
	}
}

// TestScratchReleasedZero checks that a released scratch holds nothing of
// the fetch that used it, up to its whole capacity, after a large fetch
// and then a small one: a kept item or answer would keep a partition, a
// batch or a lease alive, and leak into the next fetch's reads.
func TestScratchReleasedZero(t *testing.T) {
	s := new(scratch)
	for _, n := range []int{8, 3} {
		items, rd := s.itemsFor(n), s.readFor(n)
		for i := range n {
			items[i].Name = "t"
			rd.parts[i].Partition = int32(i + 1)
			rd.items[i].size = 1
		}
		s.release()
		for i, it := range s.items[:cap(s.items)] {
			if it.Name != "" {
				t.Fatalf("after a fetch of %d: item %d kept %q", n, i, it.Name)
			}
		}
		parts, reads := s.parts[:cap(s.parts)], s.reads[:cap(s.reads)]
		for i := range parts {
			if parts[i].Partition != 0 || reads[i].size != 0 {
				t.Fatalf("after a fetch of %d: answer %d kept", n, i)
			}
		}
	}
}
