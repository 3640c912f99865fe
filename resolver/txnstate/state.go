package txnstate

import (
	"fmt"
	"slices"

	"github.com/kgateway/kgateway/recordbatch"
	"github.com/kgateway/kgateway/storage"
)

// Offset is a log offset.
type Offset = storage.Offset

// Entry is one producer's transaction on a partition.
type Entry struct {
	Epoch int16
	// first is the offset of the transaction's first batch; -1 while the
	// producer is registered (AddTxnPartition) but has written nothing.
	First Offset
	// Decided: the coordinator decided the transaction (Decide) while
	// the producer had written nothing here; no batch may start it now
	// (a decided registration takes no first batch).
	Decided bool
}

// Aborted is one entry of the aborted-transaction index: producer, the
// transaction's first offset and its ABORT marker's offset (Kafka's
// AbortedTxn firstOffset and lastOffset).
type Aborted struct {
	PID         int64
	First, Last Offset
}

// Set is the append side. Not safe for concurrent use.
type Set struct {
	// Open is each producer's transaction on the partition.
	Open map[int64]*Entry
	// dirtyOpen are producers whose open transaction changed (started,
	// re-epoched or ended) since the last checkpoint.
	dirtyOpen map[int64]struct{}
	// dirtyAborted are aborted-index entries to write (by marker offset),
	// or to delete (nil), at the next checkpoint (the aborted-transaction index).
	dirtyAborted map[Offset]*Aborted
}

func NewSet() *Set {
	return &Set{Open: map[int64]*Entry{}, dirtyOpen: map[int64]struct{}{}, dirtyAborted: map[Offset]*Aborted{}}
}

func (s *Set) Dirty() bool { return len(s.dirtyOpen) > 0 || len(s.dirtyAborted) > 0 }

// Verify is KIP-890 part 1 (KIP-890 partition verification) and fencing (epoch fencing) for one batch: a
// transactional batch is accepted only from a producer registered on the
// partition, or with an open transaction there, at its current epoch.
func (s *Set) Verify(h recordbatch.Header, epochOf func(pid int64) (int16, bool)) error {
	if !h.Transactional() {
		return nil
	}
	e := s.Open[h.ProducerID]
	switch {
	case e != nil && h.ProducerEpoch < e.Epoch:
		return fmt.Errorf("%w: producer %d epoch %d is fenced by %d", ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, e.Epoch)
	case e != nil && h.ProducerEpoch == e.Epoch && e.First < 0 && e.Decided:
		return fmt.Errorf("%w: producer %d epoch %d: its transaction is decided and has no batch on this partition",
			ErrConcurrentTransactions, h.ProducerID, h.ProducerEpoch)
	case e != nil && h.ProducerEpoch == e.Epoch:
		return nil
	case e == nil:
		if known, ok := epochOf(h.ProducerID); ok && h.ProducerEpoch < known {
			return fmt.Errorf("%w: producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, known)
		}
	}
	return fmt.Errorf("%w: producer %d epoch %d has no transaction on this partition", ErrInvalidTxnState, h.ProducerID, h.ProducerEpoch)
}

// Register is AddTxnPartition under the append lock (KIP-890 partition verification, epoch fencing).
func (s *Set) Register(pid int64, epoch int16, epochOf func(pid int64) (int16, bool)) error {
	if known, ok := epochOf(pid); ok && epoch < known {
		return fmt.Errorf("%w: producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, pid, epoch, known)
	}
	e := s.Open[pid]
	switch {
	case e == nil:
		s.Open[pid] = &Entry{Epoch: epoch, First: -1}
	case epoch < e.Epoch:
		return fmt.Errorf("%w: producer %d epoch %d is fenced by %d", ErrInvalidProducerEpoch, pid, epoch, e.Epoch)
	case epoch > e.Epoch:
		e.Epoch, e.Decided = epoch, false
		if e.First >= 0 {
			s.dirtyOpen[pid] = struct{}{}
		}
	}
	return nil
}

// Decide notes that the coordinator decided pid's transaction at epoch
// (PrepareCommit or PrepareAbort): a registration at that epoch without a
// batch takes no first batch from now until its marker ends it (a decided
// registration takes no first batch). A transaction that wrote a batch
// here goes on taking batches until its marker, as in Kafka, whose
// partitions verify only a producer's first batch of a transaction.
func (s *Set) Decide(pid int64, epoch int16) {
	if e := s.Open[pid]; e != nil && e.Epoch == epoch && e.First < 0 {
		e.Decided = true
	}
}

// Begin notes that pid's transactional batch is written at off; it
// reports whether that batch starts the transaction.
func (s *Set) Begin(pid int64, epoch int16, off Offset) bool {
	e := s.Open[pid]
	if e == nil {
		e = &Entry{Epoch: epoch, First: -1}
		s.Open[pid] = e
	}
	if epoch > e.Epoch {
		e.Epoch = epoch
		s.dirtyOpen[pid] = struct{}{}
	}
	if e.First >= 0 {
		return false
	}
	e.First = off
	s.dirtyOpen[pid] = struct{}{}
	return true
}

// End ends pid's transaction with a marker at off and returns the entry
// ended and, for an abort of a transaction that wrote data, the new
// aborted-index entry.
func (s *Set) End(pid int64, off Offset, commit bool) (*Entry, *Aborted) {
	e := s.Open[pid]
	if e == nil {
		return nil, nil
	}
	delete(s.Open, pid)
	if e.First < 0 {
		return e, nil
	}
	s.dirtyOpen[pid] = struct{}{}
	if commit {
		return e, nil
	}
	a := &Aborted{PID: pid, First: e.First, Last: off}
	s.dirtyAborted[off] = a
	return e, a
}

// View is the read side, under the partition's read lock.
type View struct {
	// open maps each open transaction's first offset to its producer.
	Open map[Offset]int64
	// firstOpen is the smallest key of open, -1 when it is empty.
	FirstOpen Offset
	// aborted is the aborted-transaction index, by marker offset.
	Aborted []Aborted
}

func NewView() View { return View{Open: map[Offset]int64{}, FirstOpen: -1} }

func (v *View) AddOpen(first Offset, pid int64) {
	v.Open[first] = pid
	if v.FirstOpen < 0 || first < v.FirstOpen {
		v.FirstOpen = first
	}
}

func (v *View) RemoveOpen(first Offset) {
	delete(v.Open, first)
	if first != v.FirstOpen {
		return
	}
	v.FirstOpen = -1
	for f := range v.Open {
		if v.FirstOpen < 0 || f < v.FirstOpen {
			v.FirstOpen = f
		}
	}
}

// AddAborted inserts a in marker-offset order (markers of concurrent
// transactions may become durable in any order).
func (v *View) AddAborted(a Aborted) {
	i, found := slices.BinarySearchFunc(v.Aborted, a.Last, func(x Aborted, last Offset) int { return cmpOffset(x.Last, last) })
	if found {
		v.Aborted[i] = a
		return
	}
	v.Aborted = slices.Insert(v.Aborted, i, a)
}

// LSO is the last stable offset under a snapshot with log start start and
// high watermark end (the LSO): the first offset of the earliest open
// transaction, else the high watermark; never below the log start.
func (v *View) LSO(start, end Offset) Offset {
	l := end
	if v.FirstOpen >= 0 && v.FirstOpen < l {
		l = v.FirstOpen
	}
	return max(l, start)
}

// AbortedIn lists the aborted transactions that overlap [from, to): their
// marker at or after from and their first offset before to (Kafka's
// collectAbortedTxns), in first-offset order; nil when there is none, so
// a read_committed fetch over a log without aborts allocates nothing (read_committed at no extra cost).
func (v *View) AbortedIn(from, to Offset) []AbortedTxn {
	i, _ := slices.BinarySearchFunc(v.Aborted, from, func(x Aborted, off Offset) int { return cmpOffset(x.Last, off) })
	var out []AbortedTxn
	for _, a := range v.Aborted[i:] {
		if a.First < to {
			out = append(out, AbortedTxn{ProducerID: a.PID, FirstOffset: a.First})
		}
	}
	slices.SortStableFunc(out, func(a, b AbortedTxn) int { return cmpOffset(a.FirstOffset, b.FirstOffset) })
	return out
}

// PruneBelow drops the aborted entries whose marker is below start (their
// transaction is wholly trimmed) and returns them (the aborted-transaction index).
func (v *View) PruneBelow(start Offset) []Aborted {
	i, _ := slices.BinarySearchFunc(v.Aborted, start, func(x Aborted, off Offset) int { return cmpOffset(x.Last, off) })
	if i == 0 {
		return nil
	}
	gone := slices.Clone(v.Aborted[:i])
	v.Aborted = slices.Delete(v.Aborted, 0, i)
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

// ViewOf builds the read view of a recovered partition: every open
// transaction of set that wrote a batch, and the aborted index.
func ViewOf(set *Set, aborted []Aborted) View {
	v := NewView()
	for pid, e := range set.Open {
		if e.First >= 0 {
			v.AddOpen(e.First, pid)
		}
	}
	for _, a := range aborted {
		v.AddAborted(a)
	}
	return v
}

// Starts reports whether a transactional batch of pid would start its
// transaction on the partition (its first batch).
func (s *Set) Starts(pid int64) bool {
	e := s.Open[pid]
	return e == nil || e.First < 0
}

// AbortedTxn is one aborted transaction of a partition as a fetch reports
// it (Kafka's AbortedTransactions in a Fetch response).
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset Offset
}

// RemoveAborted drops the index entry of the ABORT marker at last.
func (v *View) RemoveAborted(last Offset) {
	i, found := slices.BinarySearchFunc(v.Aborted, last, func(x Aborted, off Offset) int { return cmpOffset(x.Last, off) })
	if found {
		v.Aborted = slices.Delete(v.Aborted, i, i+1)
	}
}

// ForgetAborted makes the next checkpoint delete the aborted-index entry
// of the ABORT marker at last (the aborted-transaction index).
func (s *Set) ForgetAborted(last Offset) { s.dirtyAborted[last] = nil }

// AbortedPending reports whether the aborted-index entry at last has a
// write or a deletion the next checkpoint has yet to make.
func (s *Set) AbortedPending(last Offset) bool {
	_, pending := s.dirtyAborted[last]
	return pending
}
