package resolver

import (
	"fmt"
	"slices"
)

// A partition's transaction state (the partition's transaction rules), in two views:
//
//   - txnSet (partition.app, under the append lock) is what produce and
//     markers check and change: which producers may write transactional
//     batches, the first offset of each open transaction, and what the
//     next checkpoint must persist. A marker ends a transaction here when
//     it is written.
//   - txnView (partition.mu) is what reads see: the open transactions'
//     first offsets and the aborted-transaction index. A transaction's
//     first offset enters it before its first batch is written, and leaves
//     it only once its marker is durable (the LSO), so the last stable offset
//     never passes data whose fate a crash could change.

// txnEntry is one producer's transaction on a partition.
type txnEntry struct {
	epoch int16
	// first is the offset of the transaction's first batch; -1 while the
	// producer is registered (AddTxnPartition) but has written nothing.
	first Offset
}

// abortedTxn is one entry of the aborted-transaction index: producer, the
// transaction's first offset and its ABORT marker's offset (Kafka's
// AbortedTxn firstOffset and lastOffset).
type abortedTxn struct {
	pid         int64
	first, last Offset
}

// txnSet is the append side. Not safe for concurrent use.
type txnSet struct {
	m map[int64]*txnEntry
	// dirtyOpen are producers whose open transaction changed (started,
	// re-epoched or ended) since the last checkpoint.
	dirtyOpen map[int64]struct{}
	// dirtyAborted are aborted-index entries to write (by marker offset),
	// or to delete (nil), at the next checkpoint (the aborted-transaction index).
	dirtyAborted map[Offset]*abortedTxn
}

func newTxnSet() *txnSet {
	return &txnSet{m: map[int64]*txnEntry{}, dirtyOpen: map[int64]struct{}{}, dirtyAborted: map[Offset]*abortedTxn{}}
}

func (s *txnSet) dirty() bool { return len(s.dirtyOpen) > 0 || len(s.dirtyAborted) > 0 }

// verify is KIP-890 part 1 (KIP-890 partition verification) and fencing (epoch fencing) for one batch: a
// transactional batch is accepted only from a producer registered on the
// partition, or with an open transaction there, at its current epoch.
func (s *txnSet) verify(h batchHeader, prod map[int64]*producer) error {
	if !h.Transactional() {
		return nil
	}
	e := s.m[h.ProducerID]
	switch {
	case e != nil && h.ProducerEpoch < e.epoch:
		return fmt.Errorf("%w: producer %d epoch %d is fenced by %d", ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, e.epoch)
	case e != nil && h.ProducerEpoch == e.epoch:
		return nil
	case e == nil:
		if ps := prod[h.ProducerID]; ps != nil && h.ProducerEpoch < ps.epoch {
			return fmt.Errorf("%w: producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, ps.epoch)
		}
	}
	return fmt.Errorf("%w: producer %d epoch %d has no transaction on this partition", ErrInvalidTxnState, h.ProducerID, h.ProducerEpoch)
}

// register is AddTxnPartition under the append lock (KIP-890 partition verification, epoch fencing).
func (s *txnSet) register(pid int64, epoch int16, prod map[int64]*producer) error {
	if ps := prod[pid]; ps != nil && epoch < ps.epoch {
		return fmt.Errorf("%w: producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, pid, epoch, ps.epoch)
	}
	e := s.m[pid]
	switch {
	case e == nil:
		s.m[pid] = &txnEntry{epoch: epoch, first: -1}
	case epoch < e.epoch:
		return fmt.Errorf("%w: producer %d epoch %d is fenced by %d", ErrInvalidProducerEpoch, pid, epoch, e.epoch)
	case epoch > e.epoch:
		e.epoch = epoch
		if e.first >= 0 {
			s.dirtyOpen[pid] = struct{}{}
		}
	}
	return nil
}

// begin notes that pid's transactional batch is written at off; it
// reports whether that batch starts the transaction.
func (s *txnSet) begin(pid int64, epoch int16, off Offset) bool {
	e := s.m[pid]
	if e == nil {
		e = &txnEntry{epoch: epoch, first: -1}
		s.m[pid] = e
	}
	if epoch > e.epoch {
		e.epoch = epoch
		s.dirtyOpen[pid] = struct{}{}
	}
	if e.first >= 0 {
		return false
	}
	e.first = off
	s.dirtyOpen[pid] = struct{}{}
	return true
}

// end ends pid's transaction with a marker at off and returns the entry
// ended and, for an abort of a transaction that wrote data, the new
// aborted-index entry.
func (s *txnSet) end(pid int64, off Offset, commit bool) (*txnEntry, *abortedTxn) {
	e := s.m[pid]
	if e == nil {
		return nil, nil
	}
	delete(s.m, pid)
	if e.first < 0 {
		return e, nil
	}
	s.dirtyOpen[pid] = struct{}{}
	if commit {
		return e, nil
	}
	a := &abortedTxn{pid: pid, first: e.first, last: off}
	s.dirtyAborted[off] = a
	return e, a
}

// txnView is the read side, under partition.mu.
type txnView struct {
	// open maps each open transaction's first offset to its producer.
	open map[Offset]int64
	// firstOpen is the smallest key of open, -1 when it is empty.
	firstOpen Offset
	// aborted is the aborted-transaction index, by marker offset.
	aborted []abortedTxn
}

func newTxnView() txnView { return txnView{open: map[Offset]int64{}, firstOpen: -1} }

func (v *txnView) addOpen(first Offset, pid int64) {
	v.open[first] = pid
	if v.firstOpen < 0 || first < v.firstOpen {
		v.firstOpen = first
	}
}

func (v *txnView) removeOpen(first Offset) {
	delete(v.open, first)
	if first != v.firstOpen {
		return
	}
	v.firstOpen = -1
	for f := range v.open {
		if v.firstOpen < 0 || f < v.firstOpen {
			v.firstOpen = f
		}
	}
}

// addAborted inserts a in marker-offset order (markers of concurrent
// transactions may become durable in any order).
func (v *txnView) addAborted(a abortedTxn) {
	i, found := slices.BinarySearchFunc(v.aborted, a.last, func(x abortedTxn, last Offset) int { return cmpOffset(x.last, last) })
	if found {
		v.aborted[i] = a
		return
	}
	v.aborted = slices.Insert(v.aborted, i, a)
}

// lso is the last stable offset under a snapshot with log start start and
// high watermark end (the LSO): the first offset of the earliest open
// transaction, else the high watermark; never below the log start.
func (v *txnView) lso(start, end Offset) Offset {
	l := end
	if v.firstOpen >= 0 && v.firstOpen < l {
		l = v.firstOpen
	}
	return max(l, start)
}

// abortedIn lists the aborted transactions that overlap [from, to): their
// marker at or after from and their first offset before to (Kafka's
// collectAbortedTxns), in first-offset order; nil when there is none, so
// a read_committed fetch over a log without aborts allocates nothing (read_committed at no extra cost).
func (v *txnView) abortedIn(from, to Offset) []AbortedTxn {
	i, _ := slices.BinarySearchFunc(v.aborted, from, func(x abortedTxn, off Offset) int { return cmpOffset(x.last, off) })
	var out []AbortedTxn
	for _, a := range v.aborted[i:] {
		if a.first < to {
			out = append(out, AbortedTxn{ProducerID: a.pid, FirstOffset: a.first})
		}
	}
	slices.SortStableFunc(out, func(a, b AbortedTxn) int { return cmpOffset(a.FirstOffset, b.FirstOffset) })
	return out
}

// pruneBelow drops the aborted entries whose marker is below start (their
// transaction is wholly trimmed) and returns them (the aborted-transaction index).
func (v *txnView) pruneBelow(start Offset) []abortedTxn {
	i, _ := slices.BinarySearchFunc(v.aborted, start, func(x abortedTxn, off Offset) int { return cmpOffset(x.last, off) })
	if i == 0 {
		return nil
	}
	gone := slices.Clone(v.aborted[:i])
	v.aborted = slices.Delete(v.aborted, 0, i)
	return gone
}

func cmpOffset(a, b Offset) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// viewOf builds the read view of a recovered partition: every open
// transaction of set that wrote a batch, and the aborted index.
func viewOf(set *txnSet, aborted []abortedTxn) txnView {
	v := newTxnView()
	for pid, e := range set.m {
		if e.first >= 0 {
			v.addOpen(e.first, pid)
		}
	}
	for _, a := range aborted {
		v.addAborted(a)
	}
	return v
}

// starts reports whether a transactional batch of pid would start its
// transaction on the partition (its first batch).
func (s *txnSet) starts(pid int64) bool {
	e := s.m[pid]
	return e == nil || e.first < 0
}

// openTxn adds an open transaction starting at first to the read view
// (the LSO). Needs app.
func (p *partition) openTxn(first Offset, pid int64) {
	p.mu.Lock()
	p.mu.txn.addOpen(first, pid)
	p.mu.Unlock()
}

// closeTxn removes the open transaction starting at first from the read
// view. Needs app.
func (p *partition) closeTxn(first Offset) {
	p.mu.Lock()
	p.mu.txn.removeOpen(first)
	p.mu.Unlock()
}

// pruneAborted drops the aborted-index entries whose marker is below the
// log start (the aborted-transaction index): the read view at once, their keys at the next
// checkpoint, which it makes due.
func (st *stateStore) pruneAborted(p *partition, start Offset) {
	p.app.Lock()
	if p.app.txn == nil {
		p.app.Unlock()
		return
	}
	p.mu.Lock()
	gone := p.mu.txn.pruneBelow(start)
	p.mu.Unlock()
	for _, a := range gone {
		p.app.txn.dirtyAborted[a.last] = nil
	}
	if len(gone) > 0 {
		p.app.unckpt = max(p.app.unckpt, checkpointEvery)
	}
	p.app.Unlock()
	if len(gone) > 0 {
		st.maybeCheckpoint(p)
	}
}
