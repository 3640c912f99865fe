package wire

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Budget bounds the bytes of every request body that is being read or
// whose handler still needs it, and what decoding and answering requests
// may take (queued.max.request.bytes, the request memory budget). A reader charges a frame's
// buffer as its bytes arrive (ReadBody); when the budget is spent,
// readers stop reading from their sockets (TCP pushes back on the
// clients) instead of the process growing.

// Budget is a FIFO weighted semaphore of bytes. FIFO: a large frame
// waiting for the budget is not starved by a stream of small ones.
//
// Frames are charged as they arrive (ReadBody), so a waiter may already
// hold bytes. Progress rule: when every byte in use is held by waiters,
// nobody will return any, so the waiter holding the most (the frame
// nearest completion) is granted beyond the budget. The budget is then
// exceeded by at most one frame while that frame completes, and frames
// that arrive together never deadlock each other.
type Budget struct {
	mu struct {
		sync.Mutex
		avail   int64
		waiters []*budgetWaiter
		// waitingHeld is what the waiters hold already.
		waitingHeld int64
	}
	total int64
	// inUse mirrors total-avail for observers (tests, metrics).
	inUse atomic.Int64
}

type budgetWaiter struct {
	n     int64
	held  int64
	ready chan struct{} // closed when the bytes are granted
}

// NewBudget is a budget of total bytes.
func NewBudget(total int64) *Budget {
	b := &Budget{total: total}
	b.mu.avail = total
	return b
}

// ErrBudgetWait is returned by Acquire and Grow when they stopped waiting.
var ErrBudgetWait = errors.New("kafka: stopped waiting for queued.max.request.bytes")

// Acquire takes n bytes (n <= total) for a caller that holds none.
func (b *Budget) Acquire(ctx context.Context, stop <-chan struct{}, n int64) error {
	return b.Grow(ctx, stop, 0, n)
}

// Grow takes n more bytes for a caller that holds held bytes already,
// waiting in FIFO order; it fails only when ctx ends or stop is closed
// first, and then takes nothing.
func (b *Budget) Grow(ctx context.Context, stop <-chan struct{}, held, n int64) error {
	b.mu.Lock()
	if len(b.mu.waiters) == 0 && b.mu.avail >= n {
		b.mu.avail -= n
		b.mu.Unlock()
		b.inUse.Add(n)
		return nil
	}
	w := &budgetWaiter{n: n, held: held, ready: make(chan struct{})}
	b.mu.waiters = append(b.mu.waiters, w)
	b.mu.waitingHeld += held
	b.grantLocked()
	b.mu.Unlock()
	select {
	case <-w.ready:
		b.inUse.Add(n)
		return nil
	case <-ctx.Done():
	case <-stop:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready:
		// Granted while giving up: hand the bytes back.
		b.mu.avail += n
	default:
		for i, x := range b.mu.waiters {
			if x == w {
				b.mu.waiters = append(b.mu.waiters[:i], b.mu.waiters[i+1:]...)
				break
			}
		}
		b.mu.waitingHeld -= held
	}
	b.grantLocked()
	return ErrBudgetWait
}

// Release returns n bytes taken by Grow or Acquire.
func (b *Budget) Release(n int64) {
	if n == 0 {
		return
	}
	b.inUse.Add(-n)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.avail += n
	b.grantLocked()
}

// grantLocked wakes waiters from the head of the queue while they fit,
// and applies the progress rule when the head does not.
func (b *Budget) grantLocked() {
	for len(b.mu.waiters) > 0 {
		i := 0
		if b.mu.waiters[0].n > b.mu.avail {
			if b.total-b.mu.avail != b.mu.waitingHeld {
				return // bytes held outside the queue will come back
			}
			i = b.nearestDoneLocked()
		}
		w := b.mu.waiters[i]
		b.mu.waiters = append(b.mu.waiters[:i], b.mu.waiters[i+1:]...)
		b.mu.avail -= w.n
		b.mu.waitingHeld -= w.held
		close(w.ready)
	}
}

// nearestDoneLocked is the index of the waiter holding the most, the
// first of equals.
func (b *Budget) nearestDoneLocked() int {
	best := 0
	for i, w := range b.mu.waiters {
		if w.held > b.mu.waiters[best].held {
			best = i
		}
	}
	return best
}

// Total is the budget's size.
func (b *Budget) Total() int64 { return b.total }

// InUse is how many bytes are taken now (beyond Total while the progress
// rule lets a frame through).
func (b *Budget) InUse() int64 { return b.inUse.Load() }

// Waiting is how many callers wait for bytes now.
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.mu.waiters)
}
