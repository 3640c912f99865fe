package txn

import "testing"

// A prompt Close: Close returns while a completion's marker write is
// blocked, and the decided transaction, durable in its Prepare state, is
// completed at the next open (completion at open).
func TestCloseDuringMarkerReturnsPromptly(t *testing.T) {
	h := newHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "add", h.add("x", pid, e, 3, tp("a", 0)), nil)
	off := h.produce(tp("a", 0), pid, e, 0)
	h.holdMarkers()
	held := h.markersHeld()
	wantCode(t, "commit", h.end("x", pid, e, true, 3), nil)
	within(t, held, "marker write held")
	closed := make(chan struct{})
	go func() { h.c.Close(); close(closed) }()
	within(t, closed, "Close with a marker write blocked")
	// The blocked write stays blocked: the marker, if any, is recovery's.
	h.parts.mu.Lock()
	h.parts.holdMarkers = nil
	h.parts.mu.Unlock()
	h.parts.takeMarkers()
	if got := h.lso(tp("a", 0)); got > off {
		t.Fatalf("LSO %d past the undecided record %d before reopening", got, off)
	}
	h.reopen()
	if s := h.state("x"); s.State != "CompleteCommit" {
		t.Fatalf("state after reopen %s, want CompleteCommit", s.State)
	}
	if m := h.parts.takeMarkers(); len(m) != 1 || m[0].tp != tp("a", 0) || !m[0].commit {
		t.Fatalf("markers at reopen %+v, want the commit on a-0", m)
	}
	if got := h.lso(tp("a", 0)); got <= off {
		t.Fatalf("LSO %d after reopen, want past the committed record %d", got, off)
	}
	wantCode(t, "next transaction", h.add("x", pid, e, 3, tp("a", 1)), nil)
}
