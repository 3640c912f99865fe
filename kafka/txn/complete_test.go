package txn

import (
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// gatedEnd inits "x", adds a-0 and a-1 (with grp, its offsets too), and
// ends the transaction with the store's writes held: the PrepareCommit
// write is let through, and the next write (the Complete state) is held
// in flight when gatedEnd returns. end receives EndTxn's answer.
func gatedEnd(t *testing.T, grp string) (h *harness, g *writeGate, pid int64, epoch int16, end chan int16) {
	return gatedEndCfg(t, Config{}, grp, true)
}

// gatedEndCfg is gatedEnd with the coordinator configured by cfg, ending
// the transaction by commit or abort. With grp, the group has offset
// prevOffset of a-0 committed before the transaction, whose
// TxnOffsetCommit is txnOffset.
func gatedEndCfg(t *testing.T, cfg Config, grp string, commit bool) (h *harness, g *writeGate, pid int64, epoch int16, end chan int16) {
	h, g = gatedHarness(t, cfg)
	pid, epoch = h.mustInit("x")
	wantCode(t, "add", h.add("x", pid, epoch, 3, tp("a", 0), tp("a", 1)), nil)
	if grp != "" {
		if err := h.store.Commit(grp, []offsets.Commit{{TopicPartition: tp("a", 0), Offset: prevOffset, LeaderEpoch: -1}}); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "add offsets", h.addOffsets("x", pid, epoch, grp), nil)
		wantCode(t, "txn offset", h.txnCommit("x", pid, epoch, grp, tp("a", 0), txnOffset), nil)
	}
	h.parts.takeMarkers()
	g.mu.Lock()
	g.hold = true
	g.mu.Unlock()
	end = make(chan int16, 1)
	go func() { end <- h.end("x", pid, epoch, commit, 3) }()
	<-g.entered // PrepareCommit
	g.release <- nil
	<-g.entered // Complete
	return h, g, pid, epoch, end
}

// The offsets of gatedEndCfg's group: committed before the transaction,
// and the transaction's.
const prevOffset, txnOffset = 3, 7

// letGo lets the held write (and every later one) through with err.
func (g *writeGate) letGo(err error) {
	g.mu.Lock()
	g.hold = false
	g.mu.Unlock()
	g.release <- err
}

// fetchA0 is group's offset of a-0 as OffsetFetch (v7) answers it, with
// require_stable or without.
func (h *harness) fetchA0(group string, stable bool) (int64, *kerr.Error) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group, req.RequireStable = 7, group, stable
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = "a", []int32{0}
	req.Topics = append(req.Topics, rt)
	resp := h.groups.OffsetFetch(req)
	if resp.ErrorCode != 0 {
		return -1, kerr.TypedErrorForCode(resp.ErrorCode)
	}
	p := resp.Topics[0].Partitions[0]
	return p.Offset, kerr.TypedErrorForCode(p.ErrorCode)
}

// wantFetch checks group's offset of a-0 as fetchA0 reads it.
func (h *harness) wantFetch(what, group string, stable bool, offset int64, code *kerr.Error) {
	h.t.Helper()
	got, err := h.fetchA0(group, stable)
	if err != code || err == nil && got != offset {
		h.t.Fatalf("%s: OffsetFetch (require_stable %v) answered %d, %v; want %d, %v", what, stable, got, err, offset, code)
	}
}

// answer waits for EndTxn's answer, up to a deadline generous for a
// loaded machine.
func answer(t *testing.T, end chan int16, what string) int16 {
	t.Helper()
	select {
	case code := <-end:
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: EndTxn not answered", what)
		return 0
	}
}

// Answer once decided: EndTxn answers while its Complete write (after
// the markers) is still in flight, and the id's next request waits for
// that write: it finds the transaction complete, not
// CONCURRENT_TRANSACTIONS.
func TestEndAnswersBeforeComplete(t *testing.T) {
	h, g, pid, epoch, end := gatedEnd(t, "")
	wantCode(t, "end", answer(t, end, "Complete in flight"), nil)
	if m := h.parts.takeMarkers(); len(m) != 2 {
		t.Fatalf("Complete write entered with %d markers written, want 2", len(m))
	}
	next := make(chan int16, 1)
	go func() { next <- h.add("x", pid, epoch, 3, tp("a", 2)) }()
	g.mu.Lock()
	g.hold = false
	g.mu.Unlock()
	g.release <- nil
	wantCode(t, "next transaction's add", answer(t, next, "next add"), nil)
	if s := h.state("x"); s.State != "Ongoing" {
		t.Fatalf("state %s, want Ongoing", s.State)
	}
}

// Answer once decided: a Complete write that fails after the
// answer leaves the transaction decided, its markers durable; the
// timeout loop completes it, as after a failed marker, and so does a
// restart (completion at open).
func TestEndCompleteFailedAfterAnswer(t *testing.T) {
	h, g, pid, epoch, end := gatedEnd(t, "")
	wantCode(t, "end", answer(t, end, "Complete in flight"), nil)
	g.mu.Lock()
	g.hold = false
	g.mu.Unlock()
	g.release <- errInjected
	if s := h.state("x"); s.State != "PrepareCommit" || len(s.Topics) != 0 {
		t.Fatalf("after a failed Complete: %s with %v, want PrepareCommit with no partition waiting", s.State, s.Topics)
	}
	wantCode(t, "add while decided", h.add("x", pid, epoch, 3, tp("a", 2)), kerr.ConcurrentTransactions)
	h.c.AbortTimedOut()
	if s := h.state("x"); s.State != "CompleteCommit" {
		t.Fatalf("after the timeout loop: %s, want CompleteCommit", s.State)
	}
}

// Answer once decided, with offsets: EndTxn of a transaction with
// offsets answers once its decision is durable, as Kafka's does, while
// its Complete write (which commits the offsets, O6) is held. Until that
// write, OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT
// and one without the offset committed before (O5, O7); then the
// transaction's offset is the committed one.
func TestEndWithOffsetsAnswersOnceDecided(t *testing.T) {
	h, g, _, _, end := gatedEnd(t, "g")
	wantCode(t, "end", answer(t, end, "Complete in flight"), nil)
	h.wantFetch("answered, Complete held", "g", true, -1, kerr.UnstableOffsetCommit)
	h.wantFetch("answered, Complete held", "g", false, prevOffset, nil)
	g.letGo(nil)
	h.settle()
	h.wantFetch("complete", "g", true, txnOffset, nil)
	h.wantFetch("complete", "g", false, txnOffset, nil)
	if s := h.state("x"); s.State != "CompleteCommit" {
		t.Fatalf("state %s, want CompleteCommit", s.State)
	}
}

// Answer once decided, completion at open: a commit answered whose
// Complete write then fails keeps its offsets pending (never half
// committed), and a restart commits them with the Complete state.
func TestEndWithOffsetsCompletedAtOpen(t *testing.T) {
	h, g, _, _, end := gatedEnd(t, "g")
	wantCode(t, "end", answer(t, end, "Complete in flight"), nil)
	g.letGo(errInjected)
	if s := h.state("x"); s.State != "PrepareCommit" {
		t.Fatalf("after a failed Complete: %s, want PrepareCommit", s.State)
	}
	h.wantFetch("Complete failed", "g", true, -1, kerr.UnstableOffsetCommit)
	h.wantFetch("Complete failed", "g", false, prevOffset, nil)
	h.reopen()
	if s := h.state("x"); s.State != "CompleteCommit" {
		t.Fatalf("after the restart: %s, want CompleteCommit", s.State)
	}
	h.wantFetch("after the restart", "g", true, txnOffset, nil)
	if pend, err := h.store.PendingPartitions("g"); err != nil || len(pend) != 0 {
		t.Fatalf("still pending after the restart: %v %v", pend, err)
	}
}

// Answer once decided, with offsets: an abort answered at its decision
// drops the transaction's offsets with its Complete state; the offset
// committed before stays.
func TestEndAbortWithOffsetsDropsThem(t *testing.T) {
	h, g, _, _, end := gatedEndCfg(t, Config{}, "g", false)
	wantCode(t, "abort", answer(t, end, "Complete in flight"), nil)
	h.wantFetch("abort answered, Complete held", "g", true, -1, kerr.UnstableOffsetCommit)
	g.letGo(nil)
	h.settle()
	h.wantFetch("aborted", "g", true, prevOffset, nil)
	if s := h.state("x"); s.State != "CompleteAbort" {
		t.Fatalf("state %s, want CompleteAbort", s.State)
	}
	if pend, err := h.store.PendingPartitions("g"); err != nil || len(pend) != 0 {
		t.Fatalf("still pending after the abort: %v %v", pend, err)
	}
}

// The transaction bounds: a transaction's end gives its partitions'
// share back once its markers are durable, its Complete write still in
// flight (that write holds the store's group, so what is held is read
// from the coordinator's count, not through another id's add).
func TestEndShareBackAfterMarkers(t *testing.T) {
	h, g, _, _, end := gatedEndCfg(t, Config{MaxHeldEntries: 2}, "", true)
	wantCode(t, "end", answer(t, end, "Complete in flight"), nil)
	if n := h.c.held.Load(); n != 0 {
		t.Fatalf("%d entries held with every marker durable, want 0", n)
	}
	g.mu.Lock()
	g.hold = false
	g.mu.Unlock()
	g.release <- nil
	h.settle()
}
