package share

import (
	"encoding/binary"
	"reflect"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
)

// batchHeader is the first 27 bytes of a record batch covering
// [base, base+delta], a control batch when control is set.
func batchHeader(base int64, delta int32, control bool) []byte {
	b := make([]byte, 61)
	binary.BigEndian.PutUint64(b, uint64(base))
	if control {
		binary.BigEndian.PutUint16(b[21:], 0x20)
	}
	binary.BigEndian.PutUint32(b[23:], uint32(delta))
	return b
}

func spans(t *testing.T, batches ...[]byte) []batchSpan {
	t.Helper()
	var out []batchSpan
	for _, b := range batches {
		sp, ok := spanOf(b)
		if !ok {
			t.Fatalf("bad header %x", b[:27])
		}
		out = append(out, sp)
	}
	return out
}

func args(member string, max, locks int, now time.Time) acquireArgs {
	return acquireArgs{member: member, hwm: 1 << 40, max: max, maxLocks: locks, limit: 3, deadline: now.Add(time.Second)}
}

// One acquirer per record, the in-flight window bound, acknowledgement by the lock holder: acquisition takes available records for one member only,
// within the window; acknowledgements apply only to the holder's records
// and move the start offset over finished ones; a gap between batches
// (compaction) and a control batch are archived, never handed out.
func TestPartitionAcquireAndAck(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPartition(0)
	sp := spans(t, batchHeader(0, 4, false), batchHeader(7, 0, true), batchHeader(8, 3, false))

	got := p.acquireLocked(sp, args("a", 6, 100, now))
	want := []acquiredRange{{0, 4, 1}, {8, 8, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("a acquired %v, want %v", got, want)
	}
	for _, off := range []int64{5, 6, 7} { // gap 5-6, control 7
		if st := p.recs[off].state; st != archived {
			t.Errorf("offset %d state %d, want archived", off, st)
		}
	}
	if got := p.acquireLocked(sp, args("b", 10, 100, now)); !reflect.DeepEqual(got, []acquiredRange{{9, 11, 1}}) {
		t.Fatalf("b acquired %v, want [9-11]", got)
	}
	if e := p.checkAckLocked("b", []ackBatch{{0, 0, []int8{ackAccept}}}); e == nil {
		t.Fatal("b acknowledged a's record")
	}
	p.ackLocked([]ackBatch{{0, 3, []int8{ackAccept}}, {4, 4, []int8{ackRelease}}}, 3, now)
	if p.start != 4 {
		t.Errorf("start %d after accepting 0-3, want 4", p.start)
	}
	// The released record is the first available: a fetch reads from it.
	if from, ok := p.readFromLocked(100); from != 4 || !ok {
		t.Errorf("read from %d, %v; want 4, true", from, ok)
	}
	if got := p.acquireLocked(sp, args("b", 10, 100, now)); !reflect.DeepEqual(got, []acquiredRange{{4, 4, 2}}) {
		t.Fatalf("re-acquired %v, want [4-4 count 2]", got)
	}
}

// The in-flight window bound: the window never grows past maxLocks offsets from the start.
func TestPartitionWindowBound(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPartition(10)
	sp := spans(t, batchHeader(10, 99, false))
	got := p.acquireLocked(sp, args("a", 1000, 25, now))
	if len(got) != 1 || got[0].first != 10 || got[0].last != 34 {
		t.Fatalf("acquired %v with a window of 25, want [10-34]", got)
	}
	if _, ok := p.readFromLocked(25); ok {
		t.Error("a full window still offers records")
	}
}

// The delivery count limit, releases on lock expiry: an expired lock releases its record; at the delivery count
// limit it is archived instead, and the start offset passes it.
func TestPartitionExpiryAndLimit(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPartition(0)
	sp := spans(t, batchHeader(0, 0, false))
	for round := int32(1); round <= 3; round++ {
		got := p.acquireLocked(sp, args("a", 10, 100, now))
		if !reflect.DeepEqual(got, []acquiredRange{{0, 0, round}}) {
			t.Fatalf("round %d acquired %v", round, got)
		}
		if next, _ := p.expireLocked(now, 3); next.IsZero() {
			t.Fatal("no pending deadline while locked")
		}
		now = now.Add(2 * time.Second)
		p.expireLocked(now, 3)
	}
	if p.start != 1 || len(p.recs) != 0 {
		t.Errorf("after 3 expiries start %d, %d in flight; want 1, 0", p.start, len(p.recs))
	}
}

// Locks released at restart, acquisitions persisted as available: the persisted form has no acquired record: it reloads as
// available with the delivery count kept.
func TestPartitionPersistedReleasesLocks(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPartition(0)
	p.acquireLocked(spans(t, batchHeader(0, 9, false)), args("a", 4, 100, now))
	p.ackLocked([]ackBatch{{1, 1, []int8{ackReject}}}, 3, now)
	tp := offsets.TopicPartition{Topic: "t"}
	q := loadPartition(p.persistedLocked(tp))
	if q.start != 0 || len(q.recs) != 4 {
		t.Fatalf("reloaded start %d with %d in flight, want 0 and 4", q.start, len(q.recs))
	}
	for i, want := range []state{available, archived, available, available} {
		if r := q.recs[i]; r.state != want || r.count != 1 || r.owner != "" {
			t.Errorf("offset %d reloaded as %+v, want state %d count 1", i, r, want)
		}
	}
}

// txnBatch is a transactional batch header of producer pid.
func txnBatch(base int64, delta int32, control bool, pid int64) []byte {
	b := batchHeader(base, delta, control)
	attrs := binary.BigEndian.Uint16(b[21:]) | attrTransactional
	binary.BigEndian.PutUint16(b[21:], attrs)
	binary.BigEndian.PutUint64(b[producerIDAt:], uint64(pid))
	return b
}

// share.isolation.level=read_committed: the data of an aborted
// transaction is archived with its marker, never acquired; a committed
// transaction's and a non-transactional batch's records are acquired;
// an aborted transaction that began before the read still counts.
func TestPartitionReadCommittedSkipsAborted(t *testing.T) {
	now := time.Unix(1000, 0)
	batches := [][]byte{
		txnBatch(0, 1, false, 7), // 0-1 aborted (producer 7)
		txnBatch(2, 2, false, 8), // 2-4 committed (producer 8)
		txnBatch(5, 0, true, 7),  // 5 abort marker of 7
		txnBatch(6, 0, true, 8),  // 6 commit marker of 8
		batchHeader(7, 1, false), // 7-8 not transactional
		txnBatch(9, 0, false, 7), // 9 producer 7 again: a new transaction, committed
		txnBatch(10, 0, true, 7), // 10 its commit marker
	}
	sp := spans(t, batches...)
	markAborted(batches, sp, []AbortedTxn{{ProducerID: 7, FirstOffset: 0}})
	p := newPartition(0)
	got := p.acquireLocked(sp, args("a", 100, 100, now))
	want := []acquiredRange{{2, 4, 1}, {7, 9, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("acquired %v, want %v", got, want)
	}
	for _, off := range []int64{0, 1, 5, 6, 10} { // below the start: finished
		if off >= p.start && p.recs[off-p.start].state != archived {
			t.Errorf("offset %d state %d, want archived", off, p.recs[off-p.start].state)
		}
	}
	if p.start != 2 {
		t.Errorf("start offset %d: the aborted records before 2 are not finished", p.start)
	}
	// A read that starts inside the aborted transaction.
	sp = spans(t, batches[1:]...)
	markAborted(batches[1:], sp, []AbortedTxn{{ProducerID: 8, FirstOffset: 1}})
	if !sp[0].aborted || sp[3].aborted {
		t.Fatalf("aborted flags %+v", sp)
	}
}

// The in-flight window bound: a fetch that found the window full waits
// in the partition's queue; accepting the records at the start moves the
// window and must wake it (records past the end can be acquired now), not
// only a release that makes records available.
func TestAckAtStartWakesWindowWaiters(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPartition(0)
	sp := spans(t, batchHeader(0, 3, false), batchHeader(4, 3, false))
	p.acquireLocked(sp[:1], args("a", 4, 8, now))
	p.acquireLocked(sp[1:], args("b", 4, 8, now))
	if _, ok := p.readFromLocked(8); ok {
		t.Fatal("the window of 8 holds 8 acquired records but is not full")
	}
	w := &waiter{ch: make(chan struct{}, 1), want: 4}
	p.queueLocked(w)
	p.ackLocked([]ackBatch{{4, 7, []int8{ackAccept}}}, 3, now) // b's, not at the start
	select {
	case <-w.ch:
		t.Fatal("woken though the window did not move")
	default:
	}
	p.ackLocked([]ackBatch{{0, 3, []int8{ackAccept}}}, 3, now)
	select {
	case <-w.ch:
	default:
		t.Fatal("accepting the records at the start moved the window but woke no waiting fetch")
	}
	if from, ok := p.readFromLocked(8); !ok || from != 8 {
		t.Fatalf("after the window moved: read from %d, ok %v; want 8, true", from, ok)
	}
}
