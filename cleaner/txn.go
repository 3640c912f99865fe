package cleaner

import (
	"cmp"
	"github.com/kgateway/kgateway/recordbatch"
	"slices"
)

// The cleaner and transactions (compaction of transactions, resolver/doc.go "Compaction"), as Kafka's
// LogCleaner and CleanedTransactionMetadata have it: a pass cleans only
// below the last stable offset (planClean), so every transaction with a
// batch in the range has ended and the aborted-transaction index knows
// which ended in an abort.

// txnFilter is one pass's view of the transactions of the range it
// cleans.
type txnFilter struct {
	// aborted is the aborted-index entries whose transaction starts in
	// the range, by producer, in first-offset order.
	aborted map[int64][]Aborted
	// byMarker is the same entries by their ABORT marker's offset.
	byMarker map[Offset]Aborted
	// seen is the producers whose current transaction has a batch read
	// by this pass since the producer's last marker: that marker is
	// still needed (markers kept while needed).
	seen map[int64]bool
	// dropped is the index entries of the ABORT markers this pass drops
	// (marker removal): they leave the index before the swap.
	dropped []Aborted
}

// newTxnFilter takes the aborted transactions starting before end, the
// end of the range a pass may clean (Partition.AbortedBefore).
func newTxnFilter(aborted []Aborted) *txnFilter {
	t := &txnFilter{aborted: map[int64][]Aborted{}, byMarker: map[Offset]Aborted{}, seen: map[int64]bool{}}
	for _, a := range aborted {
		t.aborted[a.PID] = append(t.aborted[a.PID], a)
		t.byMarker[a.Last] = a
	}
	for _, as := range t.aborted {
		slices.SortFunc(as, func(a, b Aborted) int { return cmp.Compare(a.First, b.First) })
	}
	return t
}

// abortedBatch reports a data batch of an aborted transaction (aborted batches dropped): a
// transactional batch of a producer between the first offset of one of
// its aborted transactions and that transaction's marker. A producer has
// one transaction at a time, so the intervals of one producer never
// overlap.
func (t *txnFilter) abortedBatch(h recordbatch.Header) bool {
	if !h.Transactional() || h.Control() {
		return false
	}
	as := t.aborted[h.ProducerID]
	i, found := slices.BinarySearchFunc(as, h.BaseOffset, func(a Aborted, off Offset) int { return cmp.Compare(a.First, off) })
	if !found {
		i-- // the last one starting before the batch
	}
	return i >= 0 && as[i].First <= h.BaseOffset && h.BaseOffset < as[i].Last
}

// readBatch notes a transactional data batch read by the rewrite: its
// transaction's marker is needed (markers kept while needed).
func (t *txnFilter) readBatch(h recordbatch.Header) {
	if h.Transactional() && !h.Control() {
		t.seen[h.ProducerID] = true
	}
}

// markerNeeded reports whether the marker h still ends a transaction of
// which the pass read a batch, and forgets that transaction.
func (t *txnFilter) markerNeeded(h recordbatch.Header) bool {
	needed := t.seen[h.ProducerID]
	delete(t.seen, h.ProducerID)
	return needed
}

// markerAction implements markers kept while needed and marker removal for a control batch: kept while a batch of
// its transaction remains (or it is its producer's last batch, which
// carries the producer's epoch, as Kafka keeps it for fencing); then
// given a delete horizon, delete.retention.ms ahead, by the first pass
// that finds it unneeded; removed by a pass after that horizon. An ABORT
// marker's index entry is removed with it.
func (f *batchFilter) markerAction(h recordbatch.Header) batchAction {
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
	if a, ok := f.txn.byMarker[h.BaseOffset]; ok && a.PID == h.ProducerID {
		f.txn.dropped = append(f.txn.dropped, a)
	}
	return dropBatch
}

// noteHorizon records a delete horizon kept by this pass (the cleanable range: a later
// pass is due at the earliest).
func (f *batchFilter) noteHorizon(h int64) {
	if f.minHorizon < 0 || h < f.minHorizon {
		f.minHorizon = h
	}
}

// withHorizon rewrites control batch b with its records as they are and
// the delete horizon h (the tombstone horizon's encoding).
func (f *batchFilter) withHorizon(b []byte, h int64) ([]byte, error) {
	recs, err := recordbatch.ParseRecords(recordbatch.DecodeHeader(b), b[recordbatch.HeaderLen:])
	if err != nil {
		return nil, err
	}
	return recordbatch.Rebuild(b, recs, h)
}
