package txn

import (
	"testing"

	"github.com/kgateway/kgateway/offsets"
)

// DescribeTransactions of a transaction left in PrepareCommit lists only
// the partitions still waiting for their marker: Kafka removes a
// partition from the transaction once its marker is written
// (TransactionMarkerChannelManager). The retry then completes it.
func TestDescribePrepareListsPendingMarkers(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "add", h.add("x", pid, e, 3, tp("a", 0), tp("a", 1), tp("b", 0)), nil)
	h.parts.mu.Lock()
	h.parts.failOn = map[offsets.TopicPartition]bool{tp("a", 1): true}
	h.parts.mu.Unlock()
	wantCode(t, "commit", h.end("x", pid, e, true, 3), nil)
	s := h.state("x")
	if s.State != "PrepareCommit" || len(s.Topics) != 1 || s.Topics[0].Topic != "a" || len(s.Topics[0].Partitions) != 1 || s.Topics[0].Partitions[0] != 1 {
		t.Fatalf("prepared: state %s topics %+v, want a-1 alone", s.State, s.Topics)
	}
	h.parts.mu.Lock()
	h.parts.failOn = nil
	h.parts.mu.Unlock()
	h.c.AbortTimedOut() // retries the completion (the transaction timeout)
	if s := h.state("x"); s.State != "CompleteCommit" || len(s.Topics) != 0 {
		t.Fatalf("completed: state %s topics %+v", s.State, s.Topics)
	}
}
