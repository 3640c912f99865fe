package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// gatedEnd inits "x", adds a-0 and a-1 (with grp, its offsets too), and
// ends the transaction with the store's writes held: the PrepareCommit
// write is let through, and the next write (the Complete state) is held
// in flight when gatedEnd returns. end receives EndTxn's answer.
func gatedEnd(t *testing.T, grp string) (h *harness, g *writeGate, pid int64, epoch int16, end chan int16) {
	return gatedEndCfg(t, Config{}, grp)
}

// gatedEndCfg is gatedEnd with the coordinator configured by cfg.
func gatedEndCfg(t *testing.T, cfg Config, grp string) (h *harness, g *writeGate, pid int64, epoch int16, end chan int16) {
	h = newHarness(t, cfg)
	g = &writeGate{entered: make(chan struct{}), release: make(chan error), closed: make(chan struct{})}
	t.Cleanup(func() { close(g.closed) }) // before the harness closes the store
	h.writeHook = g.hook
	h.reopen()
	pid, epoch = h.mustInit("x")
	wantCode(t, "add", h.add("x", pid, epoch, 3, tp("a", 0), tp("a", 1)), nil)
	if grp != "" {
		wantCode(t, "add offsets", h.addOffsets("x", pid, epoch, grp), nil)
		wantCode(t, "txn offset", h.txnCommit("x", pid, epoch, grp, tp("a", 0), 1), nil)
	}
	h.parts.takeMarkers()
	g.mu.Lock()
	g.hold = true
	g.mu.Unlock()
	end = make(chan int16, 1)
	go func() { end <- h.end("x", pid, epoch, true, 3) }()
	<-g.entered // PrepareCommit
	g.release <- nil
	<-g.entered // Complete
	return h, g, pid, epoch, end
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

// Answer once decided: a transaction with offsets is completed
// before EndTxn answers, so its offsets are committed when the client
// hears it.
func TestEndWithOffsetsAnswersAfterComplete(t *testing.T) {
	h, g, _, _, end := gatedEnd(t, "g")
	// No answer can come while the write is held; a short look suffices
	// to see one that does (it would follow at once).
	select {
	case code := <-end:
		t.Fatalf("answered %v with the Complete write of a transaction with offsets in flight", kerr.ErrorForCode(code))
	case <-time.After(200 * time.Millisecond):
	}
	g.mu.Lock()
	g.hold = false
	g.mu.Unlock()
	g.release <- nil
	wantCode(t, "end", answer(t, end, "Complete written"), nil)
	if s := h.state("x"); s.State != "CompleteCommit" {
		t.Fatalf("state %s, want CompleteCommit", s.State)
	}
}

// The transaction bounds: a transaction's end gives its partitions'
// share back once its markers are durable, its Complete write still in
// flight (that write holds the store's group, so what is held is read
// from the coordinator's count, not through another id's add).
func TestEndShareBackAfterMarkers(t *testing.T) {
	h, g, _, _, end := gatedEndCfg(t, Config{MaxHeldEntries: 2}, "")
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
