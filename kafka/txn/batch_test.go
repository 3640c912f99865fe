package txn

import (
	"sync"
	"testing"

	"github.com/kgateway/kgateway/offsets"
)

// batchParts is faultParts as a MarkerBatcher: it records each batch and
// writes its markers one by one through faultParts (failures included).
type batchParts struct {
	*faultParts
	mu      sync.Mutex
	batches [][]offsets.TopicPartition
}

func (p *batchParts) WriteTxnMarkers(pid int64, epoch int16, commit bool, ce int32, tps []offsets.TopicPartition) []error {
	p.mu.Lock()
	p.batches = append(p.batches, append([]offsets.TopicPartition(nil), tps...))
	p.mu.Unlock()
	errs := make([]error, len(tps))
	for i, tp := range tps {
		errs[i] = p.faultParts.WriteTxnMarker(tp.Topic, tp.Partition, pid, epoch, commit, ce)
	}
	return errs
}

func (p *batchParts) takeBatches() [][]offsets.TopicPartition {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.batches
	p.batches = nil
	return b
}

// EndTxn hands a MarkerBatcher all of the transaction's partitions in
// one call (one decision transaction), and completes the transaction
// only once every marker of the batch is durable: a partition whose
// marker failed keeps it in PrepareCommit until the retry writes it.
func TestEndTxnMarkersInOneBatch(t *testing.T) {
	var bp *batchParts
	h := newHarness(t, Config{})
	h.wrap = func(fp *faultParts) Partitions {
		bp = &batchParts{faultParts: fp}
		return bp
	}
	h.reopen()
	pid, e := h.mustInit("x")
	wantCode(t, "add", h.add("x", pid, e, 3, tp("a", 0), tp("a", 1), tp("b", 2)), nil)
	h.parts.mu.Lock()
	h.parts.failOn = map[offsets.TopicPartition]bool{tp("a", 1): true}
	h.parts.mu.Unlock()
	wantCode(t, "commit", h.end("x", pid, e, true, 3), nil)
	h.settle()
	if b := bp.takeBatches(); len(b) != 1 || len(b[0]) != 3 {
		t.Fatalf("markers handed over in %d batches %v, want the 3 partitions in one", len(b), b)
	}
	s := h.state("x")
	if s.State != "PrepareCommit" || len(s.Topics) != 1 || s.Topics[0].Topic != "a" || len(s.Topics[0].Partitions) != 1 || s.Topics[0].Partitions[0] != 1 {
		t.Fatalf("a marker failed: state %s topics %+v, want PrepareCommit with a-1 alone", s.State, s.Topics)
	}
	h.parts.mu.Lock()
	h.parts.failOn = nil
	h.parts.mu.Unlock()
	h.c.AbortTimedOut() // retries the completion (the transaction timeout)
	if s := h.state("x"); s.State != "CompleteCommit" || len(s.Topics) != 0 {
		t.Fatalf("completed: state %s topics %+v", s.State, s.Topics)
	}
}
