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
