package connection

import (
	"sync"
	"testing"
	"time"
)

// waitFor waits until cond holds, failing the test with what after
// testDeadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A request never waits for a worker: with the pool's one worker busy in
// a handler that blocks until a request on another connection has run,
// that request still runs (on a new worker).
func TestRequestNeverWaitsForWorker(t *testing.T) {
	w := NewWorkers(1, time.Minute)
	ranB := make(chan struct{})
	a, _, _, _ := serveOn(t, w, func(corrID int32, _ *Slot, _ *Request) {
		if corrID != 2 {
			return
		}
		select {
		case <-ranB:
		case <-time.After(testDeadline):
			t.Error("a request on another connection never ran while this handler was busy")
		}
	})
	b, _, _, _ := serveOn(t, w, func(int32, *Slot, *Request) { close(ranB) })
	// A first request leaves a parked worker; the blocking one reuses it.
	send(t, a, 1)
	if id := recv(t, a); id != 1 {
		t.Fatalf("response %d, want 1", id)
	}
	waitFor(t, "the worker never parked", func() bool { return w.Parked() == 1 })
	send(t, a, 2)
	waitFor(t, "the parked worker never took the request", func() bool { return w.Parked() == 0 })
	send(t, b, 1)
	if id := recv(t, b); id != 1 {
		t.Fatalf("response %d on the other connection, want 1", id)
	}
	if id := recv(t, a); id != 2 {
		t.Fatalf("response %d, want 2", id)
	}
	if n := w.Live(); n > 2 {
		t.Fatalf("%d workers for two requests at once", n)
	}
}

// A parked worker holds nothing of a server: once its request is
// answered and its connection gone, the connection's goroutine count
// (what Shutdown waits for) reaches zero while the worker stays parked.
func TestShutdownDoesNotWaitForParkedWorkers(t *testing.T) {
	w := NewWorkers(4, time.Hour)
	cli, _, wg, _ := serveOn(t, w, func(int32, *Slot, *Request) {})
	send(t, cli, 1)
	recv(t, cli)
	waitFor(t, "the worker never parked", func() bool { return w.Parked() == 1 })
	cli.Close()
	waitDone(t, wg, "the connection's goroutine count waits for a parked worker")
	if w.Parked() != 1 {
		t.Fatal("the parked worker left before the check")
	}
}

// Parked workers are bounded: of many requests running at once (none
// waits for another), at most maxParked workers stay once they end.
func TestParkedWorkersBounded(t *testing.T) {
	const running, maxParked = 8, 2
	w := NewWorkers(maxParked, time.Hour)
	runAll(t, w, running)
	waitFor(t, "more workers than the bound stayed", func() bool { return w.Live() == maxParked })
	if n := w.Parked(); n != maxParked {
		t.Fatalf("%d parked workers, want the bound %d", n, maxParked)
	}
}

// Parked workers exit after the idle time.
func TestParkedWorkersExitWhenIdle(t *testing.T) {
	w := NewWorkers(4, 20*time.Millisecond)
	runAll(t, w, 3)
	waitFor(t, "parked workers never exited when idle", func() bool { return w.Live() == 0 && w.Parked() == 0 })
	// The pool still serves after its workers left.
	runAll(t, w, 1)
}

// runAll runs n functions on w that end only once all n have started
// (none waits for a worker), and returns when they may end.
func runAll(t *testing.T, w *Workers, n int) {
	t.Helper()
	gate := make(chan struct{})
	var started sync.WaitGroup
	started.Add(n)
	for range n {
		w.Go(func() { started.Done(); <-gate })
	}
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(testDeadline):
		close(gate)
		t.Fatal("requests waited for a worker")
	}
	if live := w.Live(); live < n {
		t.Fatalf("%d workers for %d running requests", live, n)
	}
	close(gate)
}

// waitDone waits until wg's goroutines ended, failing with what after
// testDeadline.
func waitDone(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(testDeadline):
		t.Fatal(what)
	}
}
