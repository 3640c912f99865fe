package resolver

import (
	"fmt"
	"github.com/kgateway/kgateway/recordbatch"
	"slices"
)

// The cleaner and transactions (L12–L15, doc.go "Compaction"), as Kafka's
// LogCleaner and CleanedTransactionMetadata have it: a pass cleans only
// below the last stable offset (planClean), so every transaction with a
// batch in the range has ended and the aborted-transaction index knows
// which ended in an abort.

// txnFilter is one pass's view of the transactions of the range it
// cleans.
type txnFilter struct {
	// aborted is the aborted-index entries whose transaction starts in
	// the range, by producer, in first-offset order.
	aborted map[int64][]abortedTxn
	// byMarker is the same entries by their ABORT marker's offset.
	byMarker map[Offset]abortedTxn
	// seen is the producers whose current transaction has a batch read
	// by this pass since the producer's last marker: that marker is
	// still needed (L14).
	seen map[int64]bool
	// dropped is the index entries of the ABORT markers this pass drops
	// (L15): they leave the index before the swap.
	dropped []abortedTxn
}

// newTxnFilter takes the partition's aborted transactions starting before
// end, the end of the range a pass may clean.
func (p *partition) newTxnFilter(end Offset) *txnFilter {
	t := &txnFilter{aborted: map[int64][]abortedTxn{}, byMarker: map[Offset]abortedTxn{}, seen: map[int64]bool{}}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.mu.txn.aborted {
		if a.first < end {
			t.aborted[a.pid] = append(t.aborted[a.pid], a)
			t.byMarker[a.last] = a
		}
	}
	for _, as := range t.aborted {
		slices.SortFunc(as, func(a, b abortedTxn) int { return cmpOffset(a.first, b.first) })
	}
	return t
}

// abortedBatch reports a data batch of an aborted transaction (L13): a
// transactional batch of a producer between the first offset of one of
// its aborted transactions and that transaction's marker. A producer has
// one transaction at a time, so the intervals of one producer never
// overlap.
func (t *txnFilter) abortedBatch(h batchHeader) bool {
	if !h.Transactional() || h.Control() {
		return false
	}
	as := t.aborted[h.ProducerID]
	i, found := slices.BinarySearchFunc(as, h.BaseOffset, func(a abortedTxn, off Offset) int { return cmpOffset(a.first, off) })
	if !found {
		i-- // the last one starting before the batch
	}
	return i >= 0 && as[i].first <= h.BaseOffset && h.BaseOffset < as[i].last
}

// readBatch notes a transactional data batch read by the rewrite: its
// transaction's marker is needed (L14).
func (t *txnFilter) readBatch(h batchHeader) {
	if h.Transactional() && !h.Control() {
		t.seen[h.ProducerID] = true
	}
}

// markerNeeded reports whether the marker h still ends a transaction of
// which the pass read a batch, and forgets that transaction.
func (t *txnFilter) markerNeeded(h batchHeader) bool {
	needed := t.seen[h.ProducerID]
	delete(t.seen, h.ProducerID)
	return needed
}

// markerAction is L14 and L15 for a control batch: kept while a batch of
// its transaction remains (or it is its producer's last batch, which
// carries the producer's epoch, as Kafka keeps it for fencing); then
// given a delete horizon, delete.retention.ms ahead, by the first pass
// that finds it unneeded; removed by a pass after that horizon. An ABORT
// marker's index entry is removed with it.
func (f *batchFilter) markerAction(h batchHeader) batchAction {
	needed := f.txn.markerNeeded(h)
	if needed || f.producersLast(h) {
		return keepBatch
	}
	hz := hdrHorizon(h)
	switch {
	case hz < 0:
		f.noteHorizon(f.nowMs + f.deleteRetentionMs)
		return markerHorizon
	case f.nowMs < hz:
		f.noteHorizon(hz)
		return keepBatch
	}
	if a, ok := f.txn.byMarker[h.BaseOffset]; ok && a.pid == h.ProducerID {
		f.txn.dropped = append(f.txn.dropped, a)
	}
	return dropBatch
}

// noteHorizon records a delete horizon kept by this pass (L2: a later
// pass is due at the earliest).
func (f *batchFilter) noteHorizon(h int64) {
	if f.minHorizon < 0 || h < f.minHorizon {
		f.minHorizon = h
	}
}

// withHorizon rewrites control batch b with its records as they are and
// the delete horizon h (L8's encoding).
func (f *batchFilter) withHorizon(b []byte, h int64) ([]byte, error) {
	recs, err := recordbatch.ParseRecords(decodeHeader(b), b[batchHeaderLen:])
	if err != nil {
		return nil, err
	}
	return recordbatch.Rebuild(b, recs, h)
}

// forgetAborted removes the index entries of the ABORT markers a pass
// drops (L15), from the read view and durably, before the pass's swap:
// once the marker is gone a listed entry would make a read_committed
// client drop its producer's later batches, while no batch of the
// transaction is left in either generation, so the entry is needed by
// neither. It fails when the removal is not durable; the pass is then
// dropped.
func (r *Resolver) forgetAborted(p *partition, gone []abortedTxn) error {
	if len(gone) == 0 {
		return nil
	}
	p.app.Lock()
	if p.app.txn == nil {
		p.app.Unlock()
		return fmt.Errorf("%w: partition not open", ErrStorage)
	}
	p.mu.Lock()
	for _, a := range gone {
		p.mu.txn.removeAborted(a.last)
	}
	p.mu.Unlock()
	for _, a := range gone {
		p.app.txn.dirtyAborted[a.last] = nil
	}
	p.app.Unlock()
	if err := r.checkpoint(p); err != nil {
		return err
	}
	p.app.Lock()
	defer p.app.Unlock()
	for _, a := range gone {
		if _, pending := p.app.txn.dirtyAborted[a.last]; pending {
			return fmt.Errorf("%w: the aborted-transaction index entry of the marker at %d was not removed durably", ErrStorage, a.last)
		}
	}
	return nil
}

// removeAborted drops the index entry of the ABORT marker at last.
func (v *txnView) removeAborted(last Offset) {
	i, found := slices.BinarySearchFunc(v.aborted, last, func(x abortedTxn, off Offset) int { return cmpOffset(x.last, off) })
	if found {
		v.aborted = slices.Delete(v.aborted, i, i+1)
	}
}

// lastStable is the partition's last stable offset under the bounds
// (X2): a pass cleans nothing at or past it (L12).
func (p *partition) lastStable(start, end Offset) Offset {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.txn.lso(start, end)
}
