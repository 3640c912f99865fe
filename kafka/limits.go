package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Connection limits (the request memory budget, the idle connection timeout and the connection limit in server.go):
//
//   - byteBudget bounds the bytes of every request body that is being read
//     or whose handler still needs it, and what decoding and answering
//     requests may take (queued.max.request.bytes). A reader charges a
//     frame's buffer as its bytes arrive (frame.go); when the budget is
//     spent, readers stop reading from their sockets (TCP pushes back on
//     the clients) instead of the process growing.
//   - idleReader drops a connection that has neither sent nor received a
//     byte for connections.max.idle.ms while nothing of it is in flight —
//     including a client that started a frame and never finished it.

// byteBudget is a FIFO weighted semaphore of bytes. FIFO: a large frame
// waiting for the budget is not starved by a stream of small ones.
//
// Frames are charged as they arrive (frame.go), so a waiter may already
// hold bytes. Progress rule: when every byte in use is held by waiters,
// nobody will return any, so the waiter holding the most (the frame
// nearest completion) is granted beyond the budget. The budget is then
// exceeded by at most one frame while that frame completes, and frames
// that arrive together never deadlock each other.
type byteBudget struct {
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

func newByteBudget(total int64) *byteBudget {
	b := &byteBudget{total: total}
	b.mu.avail = total
	return b
}

// errBudgetWait is returned by acquire when it stopped waiting.
var errBudgetWait = errors.New("kafka: stopped waiting for queued.max.request.bytes")

// acquire takes n bytes (n <= total) for a caller that holds none.
func (b *byteBudget) acquire(ctx context.Context, stop <-chan struct{}, n int64) error {
	return b.grow(ctx, stop, 0, n)
}

// grow takes n more bytes for a caller that holds held bytes already,
// waiting in FIFO order; it fails only when ctx ends or stop is closed
// first, and then takes nothing.
func (b *byteBudget) grow(ctx context.Context, stop <-chan struct{}, held, n int64) error {
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
	return errBudgetWait
}

// release returns n bytes taken by grow or acquire.
func (b *byteBudget) release(n int64) {
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
func (b *byteBudget) grantLocked() {
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
func (b *byteBudget) nearestDoneLocked() int {
	best := 0
	for i, w := range b.mu.waiters {
		if w.held > b.mu.waiters[best].held {
			best = i
		}
	}
	return best
}

// errIdle is why an idle connection was closed.
var errIdle = errors.New("kafka: connection idle (connections.max.idle.ms)")

// errSlowFrame is why a connection that took too long to send one frame was
// closed. A Kafka client gives up on a request after request.timeout.ms
// (30 s by default), so a frame still arriving after
// connections.max.idle.ms is a client that is gone or hostile (a slow loris
// holding queued.max.request.bytes, the request memory budget).
var errSlowFrame = fmt.Errorf("%w: frame not completed in time", errIdle)

// idleReader reads from a connection, closing it (errIdle) after
// connections.max.idle.ms without a byte read or written while no request
// of it is in flight, or (errSlowFrame) when a frame's body has been
// arriving for that long. Activity is what counts between frames, as in
// Kafka; within a frame, completion is what counts.
type idleReader struct {
	c *conn
	// deadlineAt is when the current read deadline was set; it is moved
	// only every idle/8, so a busy connection does not reset a timer per
	// read.
	deadlineAt time.Time
}

func (r *idleReader) Read(p []byte) (int, error) {
	c := r.c
	idle := c.s.cfg.ConnectionsMaxIdle
	for {
		now := time.Now()
		if fs := c.frameStart; !fs.IsZero() && now.Sub(fs) >= idle {
			return 0, errSlowFrame
		}
		if now.Sub(r.deadlineAt) > idle/8 {
			if err := r.setDeadline(now, idle); err != nil {
				return 0, err
			}
		}
		n, err := c.nc.Read(p)
		if n > 0 {
			c.touch()
			return n, err
		}
		if !isTimeout(err) || c.s.isClosing() {
			return n, err
		}
		last := c.lastActive()
		switch {
		case !c.frameStart.IsZero():
			// Mid-frame: the frame's own deadline (above) decides.
		case c.inFlight.Load() > 0:
			// Busy (a long poll, a slow handler), not idle.
			last = time.Now()
		case time.Since(last) >= idle:
			return 0, errIdle
		}
		// Active since the deadline was set: count from then.
		if err := r.setDeadline(last, idle); err != nil {
			return 0, err
		}
	}
}

// setDeadline sets the read deadline to from+idle (no later than the
// current frame's deadline), unless the server is shutting down:
// Shutdown's stopReading may have set its own deadline just before this
// one, and closing is set before it, so look after setting.
func (r *idleReader) setDeadline(from time.Time, idle time.Duration) error {
	r.deadlineAt = from
	at := from.Add(idle)
	if fs := r.c.frameStart; !fs.IsZero() && fs.Add(idle).Before(at) {
		at = fs.Add(idle)
	}
	r.c.nc.SetReadDeadline(at)
	if r.c.s.isClosing() {
		r.c.nc.SetReadDeadline(time.Now())
		return net.ErrClosed
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// retryableAccept says whether an accept error is a transient resource
// shortage (out of file descriptors, a connection reset while queued) after
// which the listener still works: the server backs off and accepts again
// rather than stop serving.
func retryableAccept(err error) bool {
	if isTimeout(err) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.ECONNRESET} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
