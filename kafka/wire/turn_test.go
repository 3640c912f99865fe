package wire

import (
	"testing"
	"time"
)

// TestTurnOrder: a request starts only once its predecessor has taken
// effect (requests in effect one at a time), and Release runs its free once.
func TestTurnOrder(t *testing.T) {
	var a, b Turn
	a.Init(make(chan struct{}))
	b.Init(make(chan struct{}))
	b.Follow(&a)
	started := make(chan struct{})
	go func() {
		b.Wait()
		close(started)
	}()
	select {
	case <-started:
		t.Fatal("second request started before the first took effect")
	case <-time.After(20 * time.Millisecond):
	}
	frees := 0
	a.Release(func() { frees++ })
	a.Release(func() { frees++ })
	<-started
	if frees != 1 {
		t.Fatalf("free ran %d times, want 1", frees)
	}
	var first Turn
	first.Init(make(chan struct{}))
	first.Follow(nil)
	if d := first.Wait(); d != 0 {
		t.Fatalf("first request waited %v", d)
	}
}

// TestReadAfter: what the reader waits for before the next frame.
func TestReadAfter(t *testing.T) {
	// ready: ReadAfter returns true before dead closes (what it waits
	// for was already closed), false once dead closes.
	ready := func(last *Turn, quota, pipelined bool) bool {
		dead := make(chan struct{})
		timer := time.AfterFunc(50*time.Millisecond, func() { close(dead) })
		defer timer.Stop()
		return ReadAfter(last, dead, quota, pipelined)
	}
	if !ready(nil, false, false) {
		t.Fatal("no request yet: the reader reads at once")
	}
	var prev, last Turn
	answered := make(chan struct{})
	prev.Init(make(chan struct{}))
	last.Init(answered)
	last.Follow(&prev)
	if ready(&last, false, false) {
		t.Fatal("read before the latest request took effect")
	}
	if ready(&last, false, true) {
		t.Fatal("read behind a produce that has not started")
	}
	prev.Release(func() {})
	if !ready(&last, false, true) {
		t.Fatal("not read behind a started produce")
	}
	if ready(&last, true, false) {
		t.Fatal("read on a quota-limited connection before the answer")
	}
	close(answered)
	if !ready(&last, true, false) {
		t.Fatal("not read on a quota-limited connection once answered")
	}
	if ready(&last, false, false) {
		t.Fatal("read before the latest request took effect")
	}
	last.Release(func() {})
	if !ready(&last, false, false) {
		t.Fatal("not read once the latest request took effect")
	}
}
