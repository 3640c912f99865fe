package connection

import (
	"sync"
	"sync/atomic"
	"time"
)

// Workers runs request handlers on reused goroutines. A goroutine starts
// with a small stack and the Go runtime grows it (copying it each time
// it doubles) as a handler goes deeper; a fresh goroutine per request
// paid that growth on every request (4–8% of the server's CPU serving
// fetches). A worker that has run a request keeps its grown stack while
// it waits, parked, for the next one.
//
// Invariants:
//
//   - **A request never waits for a worker.** Go hands f to a parked
//     worker if there is one and otherwise starts a new goroutine for
//     it, so f starts at once whatever the other workers are doing: a
//     handler that blocks (a long poll, a request waiting for one on
//     another connection) holds up no other request.
//   - **Parked workers are bounded.** At most maxParked workers wait for
//     work; a worker that finds the bound reached exits, and one that
//     waits longer than idle exits, so a burst of requests leaves no
//     lasting goroutines behind it.
//   - **A parked worker holds nothing of a server.** Only a running f is
//     counted in a server's Options.Goroutines (the caller counts it,
//     and f's own end counts it out), so Shutdown waits for running
//     requests and never for a parked worker.
//
// A worker is parked exactly while it is in parked; whoever takes it out
// under mu owns its next step: Go (which sends it one f, into a channel
// of capacity one that is empty while it is parked, so the send never
// blocks) or the worker itself (which exits).
type Workers struct {
	maxParked int
	idle      time.Duration

	mu     sync.Mutex
	parked []*worker // most recently parked last: reused first
	// live counts the worker goroutines, running or parked.
	live atomic.Int64
}

type worker struct {
	work chan func()
}

// NewWorkers is a pool that keeps at most maxParked idle workers, each
// for at most idle.
func NewWorkers(maxParked int, idle time.Duration) *Workers {
	return &Workers{maxParked: maxParked, idle: idle}
}

// handlerWorkers is the process-wide pool of the connections' handlers
// (Options.Workers nil): 256 parked workers at most, each for 10 s.
var handlerWorkers = NewWorkers(256, 10*time.Second)

// Go runs f on a parked worker, or on a new goroutine when none is
// parked; it never waits.
func (w *Workers) Go(f func()) {
	if w.take(f) {
		return
	}
	w.live.Add(1)
	go w.loop(f)
}

// take hands f to the most recently parked worker; false if none is.
func (w *Workers) take(f func()) bool {
	w.mu.Lock()
	n := len(w.parked)
	if n == 0 {
		w.mu.Unlock()
		return false
	}
	wk := w.parked[n-1]
	w.parked[n-1] = nil
	w.parked = w.parked[:n-1]
	w.mu.Unlock()
	wk.work <- f
	return true
}

// loop is one worker: it runs f, then each f handed to it while parked,
// until it finds the bound reached or waits longer than idle.
func (w *Workers) loop(f func()) {
	defer w.live.Add(-1)
	wk := &worker{work: make(chan func(), 1)}
	idle := time.NewTimer(w.idle)
	defer idle.Stop()
	for {
		f()
		f = nil // let what f holds go while parked
		if !w.park(wk) {
			return
		}
		idle.Reset(w.idle)
		select {
		case f = <-wk.work:
		case <-idle.C:
			if w.unpark(wk) {
				return
			}
			f = <-wk.work // taken by Go as the timer fired: its f is on the way
		}
	}
}

// park adds wk to the parked workers, false if the bound is reached.
func (w *Workers) park(wk *worker) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.parked) >= w.maxParked {
		return false
	}
	w.parked = append(w.parked, wk)
	return true
}

// unpark removes wk from the parked workers; false if Go took it first.
func (w *Workers) unpark(wk *worker) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, p := range w.parked {
		if p == wk {
			n := copy(w.parked[i:], w.parked[i+1:])
			w.parked[i+n] = nil
			w.parked = w.parked[:i+n]
			return true
		}
	}
	return false
}

// Parked is how many workers wait for work.
func (w *Workers) Parked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.parked)
}

// Live is how many worker goroutines there are, running or parked.
func (w *Workers) Live() int { return int(w.live.Load()) }
