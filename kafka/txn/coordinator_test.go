package txn

import (
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's transaction errors, the InitProducerId bump: a new id gets epoch 0, each InitProducerId bumps it, KIP-360
// bumps only from the current epoch (or repeats the last answer), and a
// stale epoch is PRODUCER_FENCED from v4, INVALID_PRODUCER_EPOCH before.
func TestInitProducerIDEpochs(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	if e != 0 {
		t.Fatalf("first epoch %d", e)
	}
	if p2, e2 := h.mustInit("x"); p2 != pid || e2 != 1 {
		t.Fatalf("second init: %d/%d, want %d/1", p2, e2, pid)
	}
	r := h.init("x", 4, pid, 1)
	if r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != 2 {
		t.Fatalf("KIP-360 bump: %+v", r)
	}
	r = h.init("x", 4, pid, 1) // the answer was lost: the same again
	if r.ErrorCode != 0 || r.ProducerEpoch != 2 {
		t.Fatalf("KIP-360 retry: %+v", r)
	}
	wantCode(t, "stale epoch v4", h.init("x", 4, pid, 0).ErrorCode, kerr.ProducerFenced)
	wantCode(t, "stale epoch v3", h.init("x", 3, pid, 0).ErrorCode, kerr.InvalidProducerEpoch)
	wantCode(t, "other producer id", h.init("x", 4, pid+100, 2).ErrorCode, kerr.ProducerFenced)
	wantCode(t, "half a producer", h.init("x", 4, pid, -1).ErrorCode, kerr.InvalidRequest)
	wantCode(t, "empty id", h.init("", 4, -1, -1).ErrorCode, kerr.InvalidRequest)

	for _, ms := range []int32{0, -5, int32(DefaultMaxTimeout.Milliseconds()) + 1} {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version, req.TransactionalID, req.TransactionTimeoutMillis = 4, str("y"), ms
		wantCode(t, "timeout", h.c.InitProducerID(t.Context(), req, "").ErrorCode, kerr.InvalidTransactionTimeout)
	}
	h.reopen() // Durable transitions: the epoch survives
	if p2, e2 := h.mustInit("x"); p2 != pid || e2 != 3 {
		t.Fatalf("after reopen: %d/%d, want %d/3", p2, e2, pid)
	}
}

// The InitProducerId bump: an exhausted epoch rotates to a fresh producer id, and a KIP-360
// retry naming the old id and epoch gets the same answer.
func TestInitProducerIDRotatesExhaustedEpoch(t *testing.T) {
	h := newHarness(t, Config{})
	pid, _ := h.mustInit("x")
	st := h.c.lookup("x")
	next := st.st
	next.Epoch = math.MaxInt16 - 1
	if err := h.c.persist(st, next); err != nil {
		t.Fatal(err)
	}
	st.mu.Unlock()
	r := h.init("x", 4, pid, math.MaxInt16-1)
	if r.ErrorCode != 0 || r.ProducerID == pid || r.ProducerEpoch != 0 {
		t.Fatalf("rotation: %+v (old pid %d)", r, pid)
	}
	again := h.init("x", 4, pid, math.MaxInt16-1)
	if again.ErrorCode != 0 || again.ProducerID != r.ProducerID || again.ProducerEpoch != 0 {
		t.Fatalf("retry of rotation: %+v, want %d/0", again, r.ProducerID)
	}
}

// The InitProducerId bump, durable partition adds: InitProducerId during an Ongoing transaction aborts it first,
// with a bumped epoch that fences the old producer on every partition, and
// answers CONCURRENT_TRANSACTIONS; the retry gets the next epoch.
func TestInitProducerIDAbortsOngoing(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "add", h.add("x", pid, e, 3, tp("a", 0), tp("b", 1)), nil)
	wantCode(t, "re-init", h.init("x", 4, -1, -1).ErrorCode, kerr.ConcurrentTransactions)
	ms := h.markers()
	if len(ms) != 2 {
		t.Fatalf("markers %+v", ms)
	}
	for _, m := range ms {
		if m.commit || m.pid != pid || m.epoch != e+1 {
			t.Fatalf("fencing marker %+v, want abort at epoch %d", m, e+1)
		}
	}
	if s := h.state("x"); s.State != "CompleteAbort" || len(s.Topics) != 0 {
		t.Fatalf("state %+v", s)
	}
	if p2, e2 := h.mustInit("x"); p2 != pid || e2 != e+2 {
		t.Fatalf("retry: %d/%d, want epoch %d", p2, e2, e+2)
	}
	wantCode(t, "zombie end", h.end("x", pid, e, true, 3), kerr.ProducerFenced)
	wantCode(t, "zombie add v1", h.add("x", pid, e, 1, tp("a", 0)), kerr.InvalidProducerEpoch)
}

// The InitProducerId bump: a client that lost track of its transaction (its request died
// while the coordinator moved: the new coordinator restored the
// transaction Ongoing) recovers with a KIP-360 InitProducerId naming its
// current producer id and epoch. The transaction is aborted with a bumped
// epoch and the client told CONCURRENT_TRANSACTIONS; its retry, naming the
// same epoch, continues at the bumped epoch instead of PRODUCER_FENCED
// (PRODUCER_FENCED is not retriable: the client would have to be
// rebuilt). Anyone else stays fenced.
func TestInitProducerIDSelfFenceRetry(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "add", h.add("x", pid, e, 3, tp("a", 0), tp("b", 1)), nil)
	h.reopen() // the coordinator moved: the new one restores the Ongoing transaction
	wantCode(t, "re-init", h.init("x", 4, pid, e).ErrorCode, kerr.ConcurrentTransactions)
	for _, m := range h.markers() {
		if m.commit || m.epoch != e+1 {
			t.Fatalf("fencing marker %+v, want abort at epoch %d", m, e+1)
		}
	}
	for i := range 2 { // the retry, and a retry of it whose answer was lost
		r := h.init("x", 4, pid, e)
		if r.ErrorCode != 0 || r.ProducerID != pid || r.ProducerEpoch != e+1 {
			t.Fatalf("retry %d of the KIP-360 init: %v %d/%d, want %d/%d", i, kerr.ErrorForCode(r.ErrorCode), r.ProducerID, r.ProducerEpoch, pid, e+1)
		}
	}
	wantCode(t, "the old epoch's add", h.add("x", pid, e, 3, tp("a", 0)), kerr.ProducerFenced)
	wantCode(t, "add at the new epoch", h.add("x", pid, e+1, 3, tp("a", 0)), nil)
	wantCode(t, "commit at the new epoch", h.end("x", pid, e+1, true, 3), nil)
	if s := h.state("x"); s.State != "CompleteCommit" || s.ProducerEpoch != e+1 {
		t.Fatalf("state %+v", s)
	}

	// A stale epoch that triggers the fence is fenced on its retry, and
	// a new incarnation fences the one that recovered.
	wantCode(t, "add", h.add("x", pid, e+1, 3, tp("a", 0)), nil)
	wantCode(t, "stale re-init", h.init("x", 4, pid, e).ErrorCode, kerr.ConcurrentTransactions)
	wantCode(t, "stale re-init retry", h.init("x", 4, pid, e).ErrorCode, kerr.ProducerFenced)
	wantCode(t, "the fenced producer's retry", h.init("x", 4, pid, e+1).ErrorCode, kerr.ProducerFenced)
	if _, e2 := h.mustInit("x"); e2 != e+3 {
		t.Fatalf("new incarnation: epoch %d, want %d", e2, e+3)
	}
}

// Kafka's transaction errors, durable partition adds: EndTxn's answers in each state, and the markers of a commit.
func TestEndTxnStates(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "end with nothing running", h.end("x", pid, e, true, 3), kerr.InvalidTxnState)
	wantCode(t, "unknown id", h.end("nope", pid, e, true, 3), kerr.InvalidProducerIDMapping)
	wantCode(t, "add unknown partition", h.add("x", pid, e, 3, tp("a", 0), tp("a", 7)), kerr.UnknownTopicOrPartition)
	if s := h.state("x"); s.State != "Empty" {
		t.Fatalf("a refused add started the transaction: %+v", s)
	}
	wantCode(t, "add", h.add("x", pid, e, 3, tp("a", 0), tp("a", 0), tp("b", 2)), nil)
	if s := h.state("x"); s.State != "Ongoing" || len(s.Topics) != 2 || s.StartTimestamp != h.clock.Now().UnixMilli() {
		t.Fatalf("ongoing %+v", s)
	}
	wantCode(t, "other pid", h.end("x", pid+1, e, true, 3), kerr.InvalidProducerIDMapping)
	wantCode(t, "old epoch v2", h.end("x", pid, e-1, true, 2), kerr.ProducerFenced)
	wantCode(t, "old epoch v1", h.end("x", pid, e-1, true, 1), kerr.InvalidProducerEpoch)
	wantCode(t, "commit", h.end("x", pid, e, true, 3), nil)
	want := []marker{{tp("a", 0), pid, e, true}, {tp("b", 2), pid, e, true}}
	got := h.markers()
	if len(got) == 2 && got[0].tp.Topic == "b" {
		got[0], got[1] = got[1], got[0]
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("markers %+v, want %+v", got, want)
	}
	wantCode(t, "commit retry", h.end("x", pid, e, true, 3), nil)
	wantCode(t, "abort after commit", h.end("x", pid, e, false, 3), kerr.InvalidTxnState)
	if len(h.markers()) != 0 {
		t.Fatal("a retried EndTxn wrote markers")
	}
	// The next transaction starts from CompleteCommit.
	wantCode(t, "add again", h.add("x", pid, e, 3, tp("a", 1)), nil)
	wantCode(t, "abort", h.end("x", pid, e, false, 3), nil)
	if got := h.markers(); len(got) != 1 || got[0].commit || got[0].tp != tp("a", 1) {
		t.Fatalf("abort markers %+v", got)
	}
}

// Pending TxnOffsetCommit offsets, O5–O7: TxnOffsetCommit offsets are invisible until the commit and
// dropped by an abort; without AddOffsetsToTxn they are refused.
func TestTxnOffsetCommitVisibility(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "nothing running", h.txnCommit("x", pid, e, "g", tp("a", 0), 5), kerr.InvalidTxnState)
	wantCode(t, "add", h.add("x", pid, e, 3, tp("b", 0)), nil)
	wantCode(t, "no AddOffsets", h.txnCommit("x", pid, e, "g", tp("a", 0), 5), kerr.InvalidTxnState)
	wantCode(t, "add offsets", h.addOffsets("x", pid, e, "g"), nil)
	wantCode(t, "stale epoch", h.txnCommit("x", pid, e-1, "g", tp("a", 0), 5), kerr.InvalidProducerEpoch)
	wantCode(t, "unknown partition", h.txnCommit("x", pid, e, "g", tp("a", 9), 5), kerr.UnknownTopicOrPartition)
	wantCode(t, "commit offset", h.txnCommit("x", pid, e, "g", tp("a", 0), 5), nil)
	if _, ok, _ := h.store.Get("g", tp("a", 0)); ok {
		t.Fatal("pending offset visible before the commit")
	}
	if has, _ := h.store.HasPending("g", tp("a", 0)); !has {
		t.Fatal("offset not pending")
	}
	h.reopen() // pending offsets and the group in the transaction are durable
	wantCode(t, "commit", h.end("x", pid, e, true, 3), nil)
	h.settle() // the offsets commit with the Complete state, after the answer (answer once decided)
	if c, ok, _ := h.store.Get("g", tp("a", 0)); !ok || c.Offset != 5 {
		t.Fatalf("after commit: %+v %v", c, ok)
	}
	wantCode(t, "add offsets 2", h.addOffsets("x", pid, e, "g"), nil)
	wantCode(t, "commit offset 2", h.txnCommit("x", pid, e, "g", tp("a", 0), 9), nil)
	wantCode(t, "abort", h.end("x", pid, e, false, 3), nil)
	h.settle()
	if c, _, _ := h.store.Get("g", tp("a", 0)); c.Offset != 5 {
		t.Fatalf("aborted offset became visible: %d", c.Offset)
	}
	if has, _ := h.store.HasPending("g", tp("a", 0)); has {
		t.Fatal("aborted offset still pending")
	}
	wantCode(t, "commit after end", h.txnCommit("x", pid, e, "g", tp("a", 0), 9), kerr.InvalidTxnState)
}

// Durable partition adds, completion at open: when markers fail after the decision, EndTxn still answers
// (the decision is durable), the transaction stays in PrepareCommit and
// answers CONCURRENT_TRANSACTIONS; a restart completes it (markers and
// offsets), and Ongoing transactions' partitions are registered again.
func TestRecoveryCompletesPreparedAndReregisters(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "add", h.add("x", pid, e, 3, tp("a", 0)), nil)
	wantCode(t, "add offsets", h.addOffsets("x", pid, e, "g"), nil)
	wantCode(t, "offset", h.txnCommit("x", pid, e, "g", tp("a", 0), 7), nil)
	opid, oe := h.mustInit("other")
	wantCode(t, "other add", h.add("other", opid, oe, 3, tp("b", 1), tp("b", 2)), nil)

	h.parts.failMarkers = true
	wantCode(t, "commit", h.end("x", pid, e, true, 3), nil)
	if s := h.state("x"); s.State != "PrepareCommit" {
		t.Fatalf("state %s", s.State)
	}
	wantCode(t, "init while preparing", h.init("x", 4, -1, -1).ErrorCode, kerr.ConcurrentTransactions)
	wantCode(t, "end retry while preparing", h.end("x", pid, e, true, 3), kerr.ConcurrentTransactions)
	if _, ok, _ := h.store.Get("g", tp("a", 0)); ok {
		t.Fatal("offset committed before its markers")
	}
	h.parts.failMarkers = false
	h.parts.takeRegistered()
	h.reopen()
	if s := h.state("x"); s.State != "CompleteCommit" {
		t.Fatalf("after recovery: %s", s.State)
	}
	if ms := h.markers(); len(ms) != 1 || !ms[0].commit || ms[0].tp != tp("a", 0) {
		t.Fatalf("recovery markers %+v", ms)
	}
	if c, ok, _ := h.store.Get("g", tp("a", 0)); !ok || c.Offset != 7 {
		t.Fatalf("recovered offset %+v %v", c, ok)
	}
	reg := h.parts.takeRegistered()
	if len(reg) != 2 || reg[0].pid != opid || reg[0].epoch != oe {
		t.Fatalf("re-registered %+v", reg)
	}
}

// The transaction timeout: the timeout loop retries a failed completion.
func TestTimeoutLoopRetriesCompletion(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "add", h.add("x", pid, e, 3, tp("a", 0)), nil)
	h.parts.failMarkers = true
	wantCode(t, "abort", h.end("x", pid, e, false, 3), nil)
	h.c.AbortTimedOut()
	if s := h.state("x"); s.State != "PrepareAbort" {
		t.Fatalf("state %s", s.State)
	}
	h.parts.failMarkers = false
	h.c.AbortTimedOut()
	if s := h.state("x"); s.State != "CompleteAbort" {
		t.Fatalf("state %s", s.State)
	}
}

// The transaction timeout: an Ongoing transaction past its timeout is aborted with a bumped
// epoch; its producer is fenced, KIP-360 included; a new incarnation gets
// the next epoch.
func TestTimedOutTransactionAbortedAndFenced(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x") // timeout 60s
	wantCode(t, "add", h.add("x", pid, e, 3, tp("a", 0)), nil)
	h.clock.advance(59 * time.Second)
	h.c.AbortTimedOut()
	if s := h.state("x"); s.State != "Ongoing" {
		t.Fatalf("aborted early: %s", s.State)
	}
	h.clock.advance(time.Second)
	h.c.AbortTimedOut()
	s := h.state("x")
	if s.State != "CompleteAbort" || s.ProducerEpoch != e+1 {
		t.Fatalf("after timeout: %+v", s)
	}
	if ms := h.markers(); len(ms) != 1 || ms[0].commit || ms[0].epoch != e+1 {
		t.Fatalf("markers %+v", ms)
	}
	wantCode(t, "zombie commit", h.end("x", pid, e, true, 3), kerr.ProducerFenced)
	wantCode(t, "zombie add", h.add("x", pid, e, 3, tp("a", 0)), kerr.ProducerFenced)
	wantCode(t, "zombie KIP-360", h.init("x", 4, pid, e).ErrorCode, kerr.ProducerFenced)
	if _, e2 := h.mustInit("x"); e2 != e+2 {
		t.Fatalf("new incarnation epoch %d, want %d", e2, e+2)
	}
}

// The transaction timeout: transactional.id.expiration.ms removes ids idle that long, durably,
// and never one with a transaction running.
func TestTransactionalIDExpiration(t *testing.T) {
	h := newHarness(t, Config{IDExpiration: time.Hour})
	h.mustInit("idle")
	pid, e := h.mustInit("busy")
	wantCode(t, "add", h.add("busy", pid, e, 3, tp("a", 0)), nil)
	h.clock.advance(time.Hour - time.Millisecond)
	h.c.RemoveExpired()
	if s := h.state("idle"); s.ErrorCode != 0 {
		t.Fatal("expired early")
	}
	h.clock.advance(2 * time.Hour)
	h.c.RemoveExpired()
	wantCode(t, "idle", h.state("idle").ErrorCode, kerr.TransactionalIDNotFound)
	wantCode(t, "busy", h.state("busy").ErrorCode, nil)
	h.reopen()
	wantCode(t, "idle after reopen", h.state("idle").ErrorCode, kerr.TransactionalIDNotFound)
}

// DescribeTransactions of an unknown id answers TRANSACTIONAL_ID_NOT_FOUND
// with the schema's zeros in every other field, as Kafka does (not -1:
// there is no producer to name).
func TestDescribeUnknownTransactionalIDZeros(t *testing.T) {
	h := newHarness(t, Config{})
	s := h.state("never")
	wantCode(t, "unknown", s.ErrorCode, kerr.TransactionalIDNotFound)
	if s.ProducerID != 0 || s.ProducerEpoch != 0 || s.StartTimestamp != 0 || s.TimeoutMillis != 0 || s.State != "" || len(s.Topics) != 0 {
		t.Fatalf("unknown id: %+v, want zeros", s)
	}
}

// The transaction bounds: the ids kept and the partitions and groups of a transaction are
// bounded; refusals change nothing.
func TestClientGrowthBounded(t *testing.T) {
	h := newHarness(t, Config{MaxTransactionalIDs: 2, MaxPartitionsPerTxn: 2, MaxGroupsPerTxn: 1})
	pid, e := h.mustInit("x")
	h.mustInit("y")
	wantCode(t, "third id", h.init("z", 4, -1, -1).ErrorCode, kerr.PolicyViolation)
	wantCode(t, "three partitions", h.add("x", pid, e, 3, tp("a", 0), tp("a", 1), tp("a", 2)), kerr.PolicyViolation)
	wantCode(t, "two partitions", h.add("x", pid, e, 3, tp("a", 0), tp("a", 1)), nil)
	wantCode(t, "one more", h.add("x", pid, e, 3, tp("a", 2)), kerr.PolicyViolation)
	wantCode(t, "same again", h.add("x", pid, e, 3, tp("a", 1)), nil)
	wantCode(t, "group", h.addOffsets("x", pid, e, "g1"), nil)
	wantCode(t, "second group", h.addOffsets("x", pid, e, "g2"), kerr.PolicyViolation)
	if s := h.state("x"); len(s.Topics) != 1 || len(s.Topics[0].Partitions) != 2 {
		t.Fatalf("state %+v", s)
	}
}

// ListTransactions filters by state, producer id and duration, and
// reports unknown state names.
func TestListTransactionsFilters(t *testing.T) {
	h := newHarness(t, Config{})
	p1, e1 := h.mustInit("one")
	p2, _ := h.mustInit("two")
	wantCode(t, "add", h.add("one", p1, e1, 3, tp("a", 0)), nil)
	h.clock.advance(10 * time.Second)
	list := func(version int16, states []string, pids []int64, dur int64) ([]string, []string) {
		req := kmsg.NewPtrListTransactionsRequest()
		req.Version, req.StateFilters, req.ProducerIDFilters, req.DurationFilterMillis = version, states, pids, dur
		resp := h.c.ListTransactions(req)
		var ids []string
		for _, s := range resp.TransactionStates {
			ids = append(ids, s.TransactionalID+"/"+s.TransactionState)
		}
		return ids, resp.UnknownStateFilters
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
	all, _ := list(1, nil, nil, -1)
	check("all", all, []string{"one/Ongoing", "two/Empty"})
	ongoing, _ := list(1, []string{"Ongoing"}, nil, -1)
	check("ongoing", ongoing, []string{"one/Ongoing"})
	byPID, _ := list(1, nil, []int64{p2}, -1)
	check("by pid", byPID, []string{"two/Empty"})
	long, _ := list(1, []string{"Ongoing"}, nil, 10_000)
	check("longer than 10s", long, nil)
	short, _ := list(1, []string{"Ongoing"}, nil, 9_999)
	check("longer than 9.999s", short, []string{"one/Ongoing"})
	none, unknown := list(0, []string{"Bogus"}, nil, 10_000_000)
	check("unknown state", none, nil)
	check("unknown filters", unknown, []string{"Bogus"})
	_ = offsets.TxnEmpty
}

// Concurrent first InitProducerIds of one id, some failing to allocate a
// producer id: each failure leaves nothing behind, and every other one
// gets its own epoch of one producer id (never POLICY_VIOLATION from a
// request that waited on a failed creation).
func TestConcurrentFirstInit(t *testing.T) {
	h := newHarness(t, Config{})
	h.parts.failAllocs.Store(3)
	h.parts.slowFail = 20 * time.Millisecond
	const n = 8
	codes := make([]int16, n)
	epochs := make([]int16, n)
	pids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r := h.init("x", 4, -1, -1)
			codes[i], epochs[i], pids[i] = r.ErrorCode, r.ProducerEpoch, r.ProducerID
		})
	}
	wg.Wait()
	seen := map[int16]bool{}
	pid := int64(-1)
	for i := range n {
		switch codes[i] {
		case kerr.CoordinatorNotAvailable.Code:
		case 0:
			if seen[epochs[i]] || pid >= 0 && pids[i] != pid {
				t.Fatalf("duplicate epoch or second producer id: %v %v %v", codes, pids, epochs)
			}
			seen[epochs[i]], pid = true, pids[i]
		default:
			t.Fatalf("init %d: %v", i, kerr.ErrorForCode(codes[i]))
		}
	}
	if len(seen) < n-3 {
		t.Fatalf("%d successes of %d: %v", len(seen), n, codes)
	}
}

// The transaction bounds: the partitions and groups of all transactions together are
// bounded; a transaction's end gives its share back, and so does a
// reopen count what is loaded.
func TestHeldEntriesBounded(t *testing.T) {
	h := newHarness(t, Config{MaxHeldEntries: 3})
	px, ex := h.mustInit("x")
	py, ey := h.mustInit("y")
	wantCode(t, "x two", h.add("x", px, ex, 3, tp("a", 0), tp("a", 1)), nil)
	wantCode(t, "y two", h.add("y", py, ey, 3, tp("b", 0), tp("b", 1)), kerr.PolicyViolation)
	wantCode(t, "y one group", h.addOffsets("y", py, ey, "g"), nil)
	wantCode(t, "y another", h.add("y", py, ey, 3, tp("b", 0)), kerr.PolicyViolation)
	h.reopen()
	wantCode(t, "y another after reopen", h.add("y", py, ey, 3, tp("b", 0)), kerr.PolicyViolation)
	wantCode(t, "x commits", h.end("x", px, ex, true, 3), nil)
	h.settle() // its share comes back once its markers are durable
	wantCode(t, "y two now", h.add("y", py, ey, 3, tp("b", 0), tp("b", 1)), nil)
}

// Durable partition adds: a registration that fails after the partition is durably in the
// transaction answers retriable COORDINATOR_NOT_AVAILABLE, and the
// client's retry (the partition already there) registers it again.
func TestFailedRegistrationRetried(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("r")
	h.parts.failRegs.Store(1)
	wantCode(t, "add with a failing registration", h.add("r", pid, e, 3, tp("a", 0)), kerr.CoordinatorNotAvailable)
	if reg := h.parts.takeRegistered(); len(reg) != 0 {
		t.Fatalf("registered %+v", reg)
	}
	wantCode(t, "retried add", h.add("r", pid, e, 3, tp("a", 0)), nil)
	if reg := h.parts.takeRegistered(); len(reg) != 1 || reg[0].tp != tp("a", 0) || reg[0].pid != pid {
		t.Fatalf("the retry registered %+v", reg)
	}
}

// initAs inits id for principal and returns the answer.
func (h *harness) initAs(id, principal string) *kmsg.InitProducerIDResponse {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = 4, str(id), 60000
	req.ProducerID, req.ProducerEpoch = -1, -1
	return h.c.InitProducerID(h.t.Context(), req, principal)
}

// The transaction bounds per principal: a principal's ids and held entries are bounded
// below the global bounds, so one principal at its bound leaves the
// others theirs; an id forgotten gives its place back, and after a
// restart ids are adopted by the principal that initializes them again,
// within its bound.
func TestPerPrincipalBounds(t *testing.T) {
	h := newHarness(t, Config{MaxTransactionalIDs: 10, MaxTransactionalIDsPerPrincipal: 2,
		MaxHeldEntries: 100, MaxHeldEntriesPerPrincipal: 3})
	for _, id := range []string{"m1", "m2"} {
		wantCode(t, "mallory "+id, h.initAs(id, "User:mallory").ErrorCode, nil)
	}
	wantCode(t, "mallory's third id", h.initAs("m3", "User:mallory").ErrorCode, kerr.PolicyViolation)
	wantCode(t, "mallory re-inits her own", h.initAs("m1", "User:mallory").ErrorCode, nil)
	a := h.initAs("a1", "User:alice")
	wantCode(t, "alice's first id", a.ErrorCode, nil)
	wantCode(t, "alice's second id", h.initAs("a2", "User:alice").ErrorCode, nil)
	// Held entries: mallory's transactions together hold at most 3.
	m1 := h.initAs("m1", "User:mallory")
	wantCode(t, "m1 adds 3", h.add("m1", m1.ProducerID, m1.ProducerEpoch, 3, tp("a", 0), tp("a", 1), tp("a", 2)), nil)
	m2 := h.initAs("m2", "User:mallory")
	wantCode(t, "m2 adds 1", h.add("m2", m2.ProducerID, m2.ProducerEpoch, 3, tp("b", 0)), kerr.PolicyViolation)
	wantCode(t, "alice adds 3", h.add("a1", a.ProducerID, a.ProducerEpoch, 3, tp("b", 0), tp("b", 1), tp("b", 2)), nil)
	// Ownership is durable: after a restart every id still counts
	// against its creator, with what its transaction holds.
	h.reopen()
	wantCode(t, "mallory, new id after restart", h.initAs("m4", "User:mallory").ErrorCode, kerr.PolicyViolation)
	wantCode(t, "alice, new id after restart", h.initAs("a3", "User:alice").ErrorCode, kerr.PolicyViolation)
	m2 = h.initAs("m2", "User:mallory")
	wantCode(t, "mallory re-inits m2", m2.ErrorCode, nil)
	wantCode(t, "m2 adds 1 after restart", h.add("m2", m2.ProducerID, m2.ProducerEpoch, 3, tp("b", 0)), kerr.PolicyViolation)
	// Alice may WRITE m1 too: her init fences its Ongoing transaction
	// (the InitProducerId bump) and the id stays mallory's, not adopted into alice's count.
	wantCode(t, "alice inits mallory's m1", h.initAs("m1", "User:alice").ErrorCode, kerr.ConcurrentTransactions)
	wantCode(t, "alice re-inits m1", h.initAs("m1", "User:alice").ErrorCode, nil)
	wantCode(t, "alice, new id beside m1", h.initAs("a3", "User:alice").ErrorCode, kerr.PolicyViolation)
	wantCode(t, "mallory, new id beside m1", h.initAs("m4", "User:mallory").ErrorCode, kerr.PolicyViolation)
	// A second restart still knows: mallory's own id is hers.
	h.reopen()
	wantCode(t, "mallory re-inits m1 after a second restart", h.initAs("m1", "User:mallory").ErrorCode, nil)
	wantCode(t, "mallory, new id after a second restart", h.initAs("m5", "User:mallory").ErrorCode, kerr.PolicyViolation)
}

// The transaction bounds: an expired id's owner record goes with it, and its place in its
// owner's bound is free, after a restart too.
func TestExpiredIDOwnerDropped(t *testing.T) {
	h := newHarness(t, Config{IDExpiration: time.Hour, MaxTransactionalIDsPerPrincipal: 1})
	wantCode(t, "mallory's id", h.initAs("m1", "User:mallory").ErrorCode, nil)
	h.clock.advance(2 * time.Hour)
	h.c.RemoveExpired()
	owners, err := h.store.Owners(offsets.OwnerTxn)
	if err != nil {
		t.Fatal(err)
	}
	if len(owners) != 0 {
		t.Fatalf("owner records after expiry: %v", owners)
	}
	h.reopen()
	wantCode(t, "mallory's next id", h.initAs("m2", "User:mallory").ErrorCode, nil)
}
