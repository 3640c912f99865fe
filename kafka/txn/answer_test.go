package txn

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnRecords encodes one transactional record of (pid, epoch) at seq.
func txnRecords(pid int64, epoch int16, seq int32) []byte {
	r := kmsg.Record{Value: []byte("v")}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	b := kmsg.RecordBatch{Magic: 2, Attributes: 0x10, NumRecords: 1, Records: r.AppendTo(nil), PartitionLeaderEpoch: -1,
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, FirstTimestamp: 1, MaxTimestamp: 1}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// produce appends one transactional record to tp and returns its offset.
func (h *harness) produce(tp offsets.TopicPartition, pid int64, epoch int16, seq int32) int64 {
	h.t.Helper()
	res, err := h.parts.Produce(tp.Topic, tp.Partition, txnRecords(pid, epoch, seq))
	if err != nil {
		h.t.Fatalf("produce to %s at epoch %d: %v", tp, epoch, err)
	}
	return int64(res.BaseOffset)
}

// lso is tp's last stable offset: read_committed reads below it only.
func (h *harness) lso(tp offsets.TopicPartition) int64 {
	h.t.Helper()
	_, _, lso, err := h.parts.Bounds(tp.Topic, tp.Partition)
	if err != nil {
		h.t.Fatal(err)
	}
	return int64(lso)
}

// holdMarkers holds every marker from now on until the returned function
// is called (once; the test's end calls it too).
func (h *harness) holdMarkers() (release func()) {
	h.parts.mu.Lock()
	hold := make(chan struct{})
	h.parts.holdMarkers, h.parts.markerHeld = hold, make(chan struct{}, 1)
	h.parts.mu.Unlock()
	released := false
	release = func() {
		h.parts.mu.Lock()
		defer h.parts.mu.Unlock()
		if !released {
			released = true
			h.parts.holdMarkers = nil
			close(hold)
		}
	}
	h.t.Cleanup(release) // before the harness closes (cleanups run last first)
	return release
}

// storedState is id's state as the store holds it (what a restart finds).
func (h *harness) storedState(id string) offsets.TxnState {
	h.t.Helper()
	txns, err := h.store.Txns()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, st := range txns {
		if st.ID == id {
			return st.State
		}
	}
	h.t.Fatalf("%s not in the store", id)
	return 0
}

// wantBefore checks that first took effect before then in the order of
// markers and registrations (faultParts.order), both present.
func (h *harness) wantBefore(first, then string) {
	h.t.Helper()
	h.parts.mu.Lock()
	order := slices.Clone(h.parts.order)
	h.parts.mu.Unlock()
	i, j := slices.Index(order, first), -1
	for k, e := range order {
		if e == then {
			j = k // the last one: the next transaction's
		}
	}
	if i < 0 || j < 0 || i > j {
		h.t.Fatalf("want %q before %q, got %q", first, then, order)
	}
}

// Answer once decided: EndTxn answers once its decision is durable, its
// markers still held, and read_committed does not see the transaction
// yet. The id's next add (transaction version 1, the same epoch) waits
// for the markers and is answered NONE after them: its partition
// registers the next transaction only once the previous marker is
// durable there, so that marker ends nothing of the next transaction,
// whose record stays unstable until it ends.
func TestEndAnswersOnceDecided(t *testing.T) {
	h := newHarness(t, Config{})
	pid, epoch := h.mustInit("x")
	a0, a1 := tp("a", 0), tp("a", 1)
	wantCode(t, "add", h.add("x", pid, epoch, 3, a0, a1), nil)
	first := h.produce(a0, pid, epoch, 0)
	release := h.holdMarkers()
	end := make(chan int16, 1)
	go func() { end <- h.end("x", pid, epoch, true, 3) }()
	wantCode(t, "end with its markers held", answer(t, end, "markers held"), nil)
	if st := h.storedState("x"); st != offsets.TxnPrepareCommit {
		t.Fatalf("answered with %v in the store, want PrepareCommit", st)
	}
	if lso := h.lso(a0); lso > first {
		t.Fatalf("LSO %d past the record at %d before its marker", lso, first)
	}
	next := make(chan int16, 1)
	go func() { next <- h.add("x", pid, epoch, 3, a0) }()
	release()
	wantCode(t, "next transaction's add", answer(t, next, "next add"), nil)
	h.wantBefore("marker a-0 e0", "register a-0 e0")
	h.wantBefore("marker a-1 e0", "register a-0 e0")
	if lso := h.lso(a0); lso <= first {
		t.Fatalf("LSO %d: the committed record at %d not visible after its marker", lso, first)
	}
	second := h.produce(a0, pid, epoch, 1)
	if lso := h.lso(a0); lso > second {
		t.Fatalf("LSO %d past the next transaction's record at %d: the previous marker ended it", lso, second)
	}
	wantCode(t, "abort the next transaction", h.end("x", pid, epoch, false, 3), nil)
	if s := h.state("x"); s.State != "CompleteAbort" {
		t.Fatalf("state %s, want CompleteAbort", s.State)
	}
}

// Answer once decided, at transaction version 2: EndTxn v5 answers the
// bumped epoch with its markers held; the next transaction's implicit add
// (a Produce v12+ batch at the bumped epoch) waits for them, so its
// partition registers the bumped epoch only after the previous marker,
// written at that same epoch, is durable there.
func TestEndNextImplicitAddWaitsForMarkers(t *testing.T) {
	h := newHarness(t, Config{})
	pid, epoch := h.mustInit("x")
	a0 := tp("a", 0)
	wantCode(t, "implicit add", h.c.AddPartitionImplicitly("x", pid, epoch, "a", 0), nil)
	first := h.produce(a0, pid, epoch, 0)
	release := h.holdMarkers()
	ended := make(chan *kmsg.EndTxnResponse, 1)
	go func() { ended <- h.end5("x", pid, epoch, true) }()
	var r *kmsg.EndTxnResponse
	select {
	case r = <-ended:
	case <-h.parts.markerHeld:
		r = <-ended // the marker is held: the answer must come all the same
	}
	wantEnd(t, "end v5 with its marker held", r, nil, pid, epoch+1)
	next := make(chan int16, 1)
	go func() { next <- h.c.AddPartitionImplicitly("x", pid, epoch+1, "a", 0) }()
	release()
	wantCode(t, "next transaction's implicit add", answer(t, next, "next implicit add"), nil)
	h.wantBefore("marker a-0 e1", "register a-0 e1")
	second := h.produce(a0, pid, epoch+1, 0)
	if lso := h.lso(a0); lso <= first || lso > second {
		t.Fatalf("LSO %d, want in (%d, %d]: the first transaction committed, the next one open", lso, first, second)
	}
}

// Answer once decided: what the answer promises survives a crash before
// the markers. The markers fail, so the transaction is left in its
// Prepare state when EndTxn has answered; after a restart the decision
// is found in the store and completed (completion at open), and
// read_committed sees the record.
func TestEndAnsweredDecisionSurvivesRestart(t *testing.T) {
	h := newHarness(t, Config{})
	pid, epoch := h.mustInit("x")
	a0, a1 := tp("a", 0), tp("a", 1)
	wantCode(t, "add", h.add("x", pid, epoch, 3, a0, a1), nil)
	first := h.produce(a0, pid, epoch, 0)
	h.parts.mu.Lock()
	h.parts.failMarkers = true
	h.parts.mu.Unlock()
	wantCode(t, "end with failing markers", h.end("x", pid, epoch, true, 3), nil)
	h.close() // waits for the completion after the answer, which fails
	h.parts.mu.Lock()
	h.parts.failMarkers = false
	h.parts.mu.Unlock()
	h.open()
	if s := h.state("x"); s.State != "CompleteCommit" {
		t.Fatalf("after the restart: %s, want CompleteCommit", s.State)
	}
	if lso := h.lso(a0); lso <= first {
		t.Fatalf("LSO %d: the acknowledged commit's record at %d not visible after the restart", lso, first)
	}
	// Markers are idempotent: a marker of the closed coordinator's
	// completion still in flight at Close (a prompt Close does not wait
	// for it) may land after the failure is lifted, besides the one the
	// restart writes.
	commits := map[offsets.TopicPartition]bool{}
	for _, m := range h.markers() {
		if !m.commit {
			t.Fatalf("an ABORT marker on %v after a commit was answered", m.tp)
		}
		commits[m.tp] = true
	}
	if len(commits) != 2 || !commits[a0] || !commits[a1] {
		t.Fatalf("COMMIT markers after the restart on %v, want a-0 and a-1", commits)
	}
	wantCode(t, "the next transaction", h.add("x", pid, epoch, 3, a0), nil)
}

// Answer once decided: while a failed marker leaves the decision
// unfinished, the id's next requests are CONCURRENT_TRANSACTIONS (as
// Kafka answers while the markers are written), not a new transaction.
func TestEndFailedMarkerNextConcurrent(t *testing.T) {
	h := newHarness(t, Config{})
	pid, epoch := h.mustInit("x")
	wantCode(t, "add", h.add("x", pid, epoch, 3, tp("a", 0)), nil)
	h.parts.mu.Lock()
	h.parts.failMarkers = true
	h.parts.mu.Unlock()
	wantCode(t, "end", h.end("x", pid, epoch, true, 3), nil)
	wantCode(t, "add while decided", h.add("x", pid, epoch, 3, tp("a", 1)), kerr.ConcurrentTransactions)
	wantCode(t, "implicit add while decided", h.c.AddPartitionImplicitly("x", pid, epoch, "a", 1), kerr.ConcurrentTransactions)
	h.parts.mu.Lock()
	h.parts.failMarkers = false
	h.parts.mu.Unlock()
	h.c.AbortTimedOut()
	wantCode(t, "add once complete", h.add("x", pid, epoch, 3, tp("a", 1)), nil)
}
