package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Waiting for a completion (addqueue.go): an add with a waiting callback
// is told when it must wait for the id's completion, and one that has no
// room to wait is answered CONCURRENT_TRANSACTIONS at once.

// markersHeld returns the channel that gets a value as a held marker
// write starts waiting (holdMarkers).
func (h *harness) markersHeld() chan struct{} {
	h.parts.mu.Lock()
	defer h.parts.mu.Unlock()
	return h.parts.markerHeld
}

// within waits for ch's value, up to a deadline generous for a loaded
// machine.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not within 30s", what)
		var zero T
		return zero
	}
}

// endHeld starts a version-2 transaction of "x" on a-0, ends it by EndTxn
// v5 with its marker held, and returns the producer's bumped epoch.
func endHeld(t *testing.T, h *harness) (pid int64, next int16, release func()) {
	pid, e := h.mustInit("x")
	wantCode(t, "implicit add", h.c.AddPartitionImplicitly("x", pid, e, "a", 0), nil)
	release = h.holdMarkers()
	held := h.markersHeld()
	wantEnd(t, "commit", h.end5("x", pid, e, true), nil, pid, e+1)
	within(t, held, "marker held")
	return pid, e + 1, release
}

// TestImplicitAddDuringCompletionToldToWait: while the completion of
// "x"'s transaction holds its lock (a marker held), an implicit add of
// the next transaction is told it waits; one whose callback has no room
// is answered CONCURRENT_TRANSACTIONS without waiting; the one that
// waits is added once the marker is durable.
func TestImplicitAddDuringCompletionToldToWait(t *testing.T) {
	h := newHarness(t, Config{})
	pid, next, release := endHeld(t, h)
	refused := make(chan int16, 1)
	go func() {
		refused <- h.c.AddPartitionImplicitlyWaiting("x", pid, next, "a", 1, func() bool { return false })
	}()
	wantCode(t, "add with no room to wait", within(t, refused, "refused add answered"), kerr.ConcurrentTransactions)
	told, answered := make(chan struct{}, 1), make(chan int16, 1)
	go func() {
		answered <- h.c.AddPartitionImplicitlyWaiting("x", pid, next, "a", 1, func() bool { told <- struct{}{}; return true })
	}()
	within(t, told, "waiting add told")
	select {
	case code := <-answered:
		t.Fatalf("add answered %v with the previous marker held", kerr.ErrorForCode(code))
	default:
	}
	release()
	wantCode(t, "waiting add", within(t, answered, "waiting add answered"), nil)
	if s := h.state("x"); s.State != "Ongoing" || len(s.Topics) != 1 {
		t.Fatalf("state %+v, want the next transaction Ongoing on a-1", s)
	}
}

// TestImplicitAddQueuedBeforeCompletionToldToWait: an add queued behind
// EndTxn's decision write (the id's lock held) is told it waits when the
// completion starts.
func TestImplicitAddQueuedBeforeCompletionToldToWait(t *testing.T) {
	h, g := gatedHarness(t, Config{})
	pid, e := h.mustInit("x")
	wantCode(t, "implicit add", h.c.AddPartitionImplicitly("x", pid, e, "a", 0), nil)
	h.holdMarkers()
	held := h.markersHeld()
	g.mu.Lock()
	g.hold = true
	g.mu.Unlock()
	end := make(chan int16, 1)
	go func() { end <- h.end5("x", pid, e, true).ErrorCode }()
	<-g.entered // PrepareCommit in flight, the id's lock held
	told, answered := make(chan struct{}, 1), make(chan int16, 1)
	go func() {
		answered <- h.c.AddPartitionImplicitlyWaiting("x", pid, e+1, "a", 1, func() bool { told <- struct{}{}; return true })
	}()
	waitQueued(t, h, 1)
	select {
	case <-told:
		t.Fatal("add told to wait before any completion started")
	default:
	}
	g.letGo(nil)
	wantCode(t, "end", answer(t, end, "decision"), nil)
	within(t, held, "marker held")
	within(t, told, "queued add told when the completion started")
}
