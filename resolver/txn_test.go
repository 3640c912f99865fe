package resolver

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kgateway/kgateway/recordbatch"
)

// The read_committed bound, the LSO: an open transaction holds the LSO at its first offset; its
// COMMIT marker, once durable, releases it; read_committed never returns a
// batch at or past the LSO; both levels report it.
func TestTxnLSOHeldAndReleased(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	g.produce("t", 0, plain(1, 1).encode()) // 0
	if err := g.r.AddTxnPartition("t", 0, 7, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, lso, _ := g.r.Bounds("t", 0); lso != 1 {
		t.Fatalf("registration without a batch moved the LSO: %d", lso)
	}
	g.produce("t", 0, txnBatch(7, 0, 0, 2).encode()) // 1-2
	g.produce("t", 0, plain(1, 1).encode())          // 3
	g.produce("t", 0, txnBatch(7, 0, 2, 1).encode()) // 4
	start, hwm, lso, err := g.r.Bounds("t", 0)
	if err != nil || start != 0 || hwm != 5 || lso != 1 {
		t.Fatalf("bounds %d %d %d %v, want 0 5 1", start, hwm, lso, err)
	}
	for _, iso := range []Isolation{ReadUncommitted, ReadCommitted} {
		res, err := g.r.Fetch("t", 0, 0, 1<<20, true, iso)
		if err != nil || res.LastStable != 1 || res.HighWatermark != 5 {
			t.Fatalf("iso %d: %+v %v", iso, res, err)
		}
		want := 4
		if iso == ReadCommitted {
			want = 1
		}
		if len(res.Batches) != want {
			t.Fatalf("iso %d: %d batches, want %d", iso, len(res.Batches), want)
		}
	}
	// At the LSO, read_committed is empty (a long poll waits), not out of range.
	if res, err := g.r.Fetch("t", 0, 3, 1<<20, true, ReadCommitted); err != nil || len(res.Batches) != 0 {
		t.Fatalf("read_committed past the LSO: %+v %v", res, err)
	}
	if off, _, _ := g.r.ListOffset("t", 0, -1); off != 5 {
		t.Fatalf("latest %d", off)
	}
	if err := g.r.WriteTxnMarker("t", 0, 7, 0, true, 3); err != nil {
		t.Fatal(err)
	}
	if _, hwm, lso, _ := g.r.Bounds("t", 0); hwm != 6 || lso != 6 {
		t.Fatalf("after COMMIT: hwm %d lso %d, want 6 6", hwm, lso)
	}
	got, _ := committedRead(t, g.r, "t", 0, 1<<20)
	want := []batchKey{{-1, 0}, {7, 0}, {-1, 3}, {7, 2}}
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed delivered %v, want %v", got, want)
	}
}

// The control batch format: the marker is Kafka's control batch.
func TestTxnMarkerFormat(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	for i, commit := range []bool{true, false} {
		pid := int64(10 + i)
		if err := g.r.AddTxnPartition("t", 0, pid, 4); err != nil {
			t.Fatal(err)
		}
		g.produce("t", 0, txnBatch(pid, 4, 0, 1).encode())
		if err := g.r.WriteTxnMarker("t", 0, pid, 4, commit, 17); err != nil {
			t.Fatal(err)
		}
		_, end, _, _ := g.r.Bounds("t", 0)
		res := g.fetch("t", 0, end-1, 1<<20)
		b := res.Batches[0]
		h, _, err := parseBatch(b) // magic 2, CRC32C, lengths
		if err != nil {
			t.Fatal(err)
		}
		typ := int16(0)
		if commit {
			typ = 1
		}
		rec := b[batchHeaderLen:]
		// length 16, attributes 0, deltas 0 0, key: length 4, version 0,
		// type; value: length 6, version 0, coordinator epoch; no headers.
		wantRec := []byte{32, 0, 0, 0, 8, 0, 0, 0, byte(typ), 12, 0, 0, 0, 0, 0, 17, 0}
		if h.Attributes != 0x30 || h.ProducerID != pid || h.ProducerEpoch != 4 || h.BaseSequence != -1 ||
			h.Records != 1 || h.LastOffsetDelta != 0 || string(rec) != string(wantRec) {
			t.Fatalf("marker %+v records %v, want %v", h, rec, wantRec)
		}
		if m, err := recordbatch.DecodeMarker(b); err != nil || m.Commit != commit || m.CoordinatorEpoch != 17 {
			t.Fatalf("decoded %+v %v", m, err)
		}
	}
}

// The control batch format: a marker for a producer with nothing open on the partition writes
// nothing (the coordinator re-sends markers after a restart), also right
// after the marker it repeats.
func TestTxnMarkerIdempotent(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	if err := g.r.WriteTxnMarker("t", 0, 3, 0, true, 0); err != nil {
		t.Fatal(err)
	}
	if _, hwm, _, _ := g.r.Bounds("t", 0); hwm != 0 {
		t.Fatalf("marker without a transaction wrote: hwm %d", hwm)
	}
	if err := g.r.AddTxnPartition("t", 0, 3, 0); err != nil {
		t.Fatal(err)
	}
	g.produce("t", 0, txnBatch(3, 0, 0, 1).encode())
	for i := range 3 {
		if err := g.r.WriteTxnMarker("t", 0, 3, 0, false, 0); err != nil {
			t.Fatal(err)
		}
		if _, hwm, lso, _ := g.r.Bounds("t", 0); hwm != 2 || lso != 2 {
			t.Fatalf("marker %d: hwm %d lso %d, want 2 2", i, hwm, lso)
		}
	}
	g.reopen()
	if err := g.r.WriteTxnMarker("t", 0, 3, 0, false, 0); err != nil {
		t.Fatal(err)
	}
	if _, hwm, _, _ := g.r.Bounds("t", 0); hwm != 2 {
		t.Fatalf("marker after reopen wrote: hwm %d", hwm)
	}
	// A registration with no batch still gets its marker written (the
	// coordinator ends every partition it added).
	if err := g.r.AddTxnPartition("t", 0, 4, 0); err != nil {
		t.Fatal(err)
	}
	if err := g.r.WriteTxnMarker("t", 0, 4, 0, true, 0); err != nil {
		t.Fatal(err)
	}
	if _, hwm, _, _ := g.r.Bounds("t", 0); hwm != 3 {
		t.Fatalf("registered producer's marker: hwm %d, want 3", hwm)
	}
}

// KIP-890 partition verification (KIP-890 part 1), control batches by WriteTxnMarker only: a transactional batch needs its producer's
// registration (or open transaction) at its epoch; control batches from
// clients are refused.
func TestTxnVerification(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 2, nil)
	check := func(b []byte, want error) {
		t.Helper()
		_, before, _, _ := g.r.Bounds("t", 0)
		if _, err := g.r.Produce("t", 0, b); !isErr(err, want) {
			t.Fatalf("got %v, want %v", err, want)
		}
		if _, after, _, _ := g.r.Bounds("t", 0); want != nil && after != before {
			t.Fatalf("refused batch appended: %d -> %d", before, after)
		}
	}
	check(txnBatch(1, 0, 0, 1).encode(), ErrInvalidTxnState)
	// Registered on partition 1 only.
	if err := g.r.AddTxnPartition("t", 1, 1, 0); err != nil {
		t.Fatal(err)
	}
	check(txnBatch(1, 0, 0, 1).encode(), ErrInvalidTxnState)
	if err := g.r.AddTxnPartition("t", 0, 1, 0); err != nil {
		t.Fatal(err)
	}
	check(txnBatch(1, 1, 0, 1).encode(), ErrInvalidTxnState) // a newer epoch than registered
	check(txnBatch(1, 0, 0, 1).encode(), nil)
	check(txnBatch(1, 0, 1, 1).encode(), nil) // open: no new registration needed
	if err := g.r.WriteTxnMarker("t", 0, 1, 0, true, 0); err != nil {
		t.Fatal(err)
	}
	check(txnBatch(1, 0, 2, 1).encode(), ErrInvalidTxnState) // ended by its marker
	control := idem(1, 0, 2, 1).encode()
	control[22] |= 0x20
	check(recrc(control), ErrInvalidRecord)
	if err := g.r.AddTxnPartition("nope", 0, 1, 0); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("unknown topic: %v", err)
	}
}

// Epoch fencing: a newer epoch, by registration or by a fencing ABORT marker, fences
// the older one: its batches, registrations and markers get
// ErrInvalidProducerEpoch.
func TestTxnZombieFenced(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	if err := g.r.AddTxnPartition("t", 0, 5, 0); err != nil {
		t.Fatal(err)
	}
	g.produce("t", 0, txnBatch(5, 0, 0, 2).encode())
	// The coordinator bumps the epoch and aborts the zombie's transaction.
	if err := g.r.WriteTxnMarker("t", 0, 5, 1, false, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Produce("t", 0, txnBatch(5, 0, 2, 1).encode()); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("zombie batch: %v", err)
	}
	if err := g.r.AddTxnPartition("t", 0, 5, 0); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("zombie registration: %v", err)
	}
	// The new incarnation works; its registration fences epoch 1 too.
	if err := g.r.AddTxnPartition("t", 0, 5, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Produce("t", 0, txnBatch(5, 1, 0, 1).encode()); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("epoch 1 after epoch 2 registered: %v", err)
	}
	g.produce("t", 0, txnBatch(5, 2, 0, 1).encode())
	if err := g.r.WriteTxnMarker("t", 0, 5, 1, true, 0); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("zombie marker: %v", err)
	}
	if err := g.r.WriteTxnMarker("t", 0, 5, 2, true, 0); err != nil {
		t.Fatal(err)
	}
	got, _ := committedRead(t, g.r, "t", 0, 1<<20)
	if want := []batchKey{{5, 0}}; !slices.Equal(got, want) || decodeHeader(g.fetch("t", 0, 3, 1).Batches[0]).ProducerEpoch != 2 {
		t.Fatalf("delivered %v, want %v (epoch 2's)", got, want)
	}
	// The fence survives a restart (the marker is in the log).
	g.crashReopen()
	if _, err := g.r.Produce("t", 0, txnBatch(5, 0, 3, 1).encode()); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("zombie batch after restart: %v", err)
	}
}

// The read_committed bound, the aborted-transaction index: aborted transactions are listed for every read_committed fetch
// that overlaps them, and a read_committed consumer drops exactly their
// batches, in small and large fetches.
func TestTxnAbortedListed(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	var want []batchKey
	for i := range 6 {
		pid := int64(i % 2)
		if err := g.r.AddTxnPartition("t", 0, pid, 0); err != nil {
			t.Fatal(err)
		}
		seq := int32(i / 2 * 2)
		g.produce("t", 0, txnBatch(pid, 0, seq, 1).encode())
		g.produce("t", 0, plain(1, 1).encode())
		res := g.produce("t", 0, txnBatch(pid, 0, seq+1, 1).encode())
		commit := i%3 == 0
		if err := g.r.WriteTxnMarker("t", 0, pid, 0, commit, 0); err != nil {
			t.Fatal(err)
		}
		want = append(want, batchKey{-1, int64(res.BaseOffset - 1)})
		if commit {
			want = slices.Insert(want, len(want)-1, batchKey{pid, int64(seq)})
			want = append(want, batchKey{pid, int64(seq + 1)})
		}
	}
	for _, maxBytes := range []int{1, 150, 1 << 20} {
		got, _ := committedRead(t, g.r, "t", 0, maxBytes)
		if !slices.Equal(got, want) {
			t.Fatalf("max bytes %d: delivered %v, want %v", maxBytes, got, want)
		}
	}
	// Offsets 4-7 hold the second (aborted) transaction: a fetch from its
	// marker lists it; one of the committed transaction at 12-15 does not.
	res, _ := g.r.Fetch("t", 0, 7, 1<<20, true, ReadCommitted)
	if len(res.Aborted) == 0 || res.Aborted[0] != (AbortedTxn{ProducerID: 1, FirstOffset: 4}) {
		t.Fatalf("from the marker: %+v", res.Aborted)
	}
	if res, _ := g.r.Fetch("t", 0, 12, 1, true, ReadCommitted); len(res.Aborted) != 0 {
		t.Fatalf("after the marker: %+v", res.Aborted)
	}
	if res, _ := g.r.Fetch("t", 0, 0, 1<<20, true, ReadUncommitted); res.Aborted != nil {
		t.Fatalf("read_uncommitted got aborted transactions: %+v", res.Aborted)
	}
}

// read_committed at no extra cost: read_committed over a partition without transactions serves what
// read_uncommitted serves and allocates no aborted list.
func TestTxnReadCommittedWithoutTxns(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	for range 10 {
		g.produce("t", 0, plain(3, 1).encode())
	}
	a, _ := g.r.Fetch("t", 0, 0, 1<<20, true, ReadUncommitted)
	b, _ := g.r.Fetch("t", 0, 0, 1<<20, true, ReadCommitted)
	if len(a.Batches) != 10 || len(b.Batches) != 10 || b.Aborted != nil || a.LastStable != 30 || b.LastStable != 30 {
		t.Fatalf("uncommitted %d batches lso %d, committed %d batches lso %d aborted %v", len(a.Batches), a.LastStable, len(b.Batches), b.LastStable, b.Aborted)
	}
	p, _ := g.r.mu.partition("t", 0)
	if n := testing.AllocsPerRun(100, func() {
		p.mu.Lock()
		_ = p.mu.txn.LSO(0, 30)
		_ = p.mu.txn.AbortedIn(0, 30)
		p.mu.Unlock()
	}); n != 0 {
		t.Fatalf("the transaction part of a read_committed fetch allocates %v times", n)
	}
}

func (k batchKey) String() string { return fmt.Sprintf("%d/%d", k.pid, k.seq) }

// Producer expiry and the cap (producer expiry, the producer cap) never end an open transaction: the
// LSO stays held, the producer goes on writing in it, its marker ends it,
// and DescribeProducers still lists it.
func TestTxnOutlivesProducerExpiry(t *testing.T) {
	now := fixedClock(1_700_000_000_000)
	exp := time.Hour
	g := newGateway(t, Config{ProducerIDExpiration: exp, MaxProducers: 1, Ledger: ledgerNow(now)})
	g.create("t", 1, nil)
	if err := g.r.AddTxnPartition("t", 0, 1, 0); err != nil {
		t.Fatal(err)
	}
	g.produce("t", 0, txnBatch(1, 0, 0, 1).encode())
	now.set(1_700_000_000_000 + exp.Milliseconds() + 1)
	g.produce("t", 0, idem(2, 0, 0, 1).encode()) // expires producer 1, and the cap is 1
	g.reopen()
	if _, hwm, lso, _ := g.r.Bounds("t", 0); lso != 0 || hwm != 2 {
		t.Fatalf("LSO %d end %d, want 0 2", lso, hwm)
	}
	ps, err := g.r.Producers("t", 0)
	if i := slices.IndexFunc(ps, func(p ProducerState) bool { return p.ProducerID == 1 }); err != nil || i < 0 || ps[i].TxnStartOffset != 0 {
		t.Fatalf("producers %+v %v", ps, err)
	}
	g.produce("t", 0, txnBatch(1, 0, 1, 1).encode())
	if err := g.r.WriteTxnMarker("t", 0, 1, 0, true, 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := committedRead(t, g.r, "t", 0, 1<<20); !slices.Equal(got, []batchKey{{1, 0}, {2, 0}, {1, 1}}) {
		t.Fatalf("delivered %v", got)
	}
}
