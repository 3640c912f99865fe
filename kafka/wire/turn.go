package wire

// A connection's request order (requests in effect one at a time): each request starts only once the
// one before it on the connection has taken effect, and the reader reads
// the next frame only once the latest request allows it.

import (
	"sync"
	"time"
)

// Turn is one request's place in its connection's order. Init it when
// the request is parsed, Follow its predecessor's when it is dispatched.
type Turn struct {
	// after is closed when the predecessor has taken effect: this
	// request starts then. Nil for the connection's first request.
	after <-chan struct{}
	// done is closed when this request has taken effect (Release).
	done chan struct{}
	// answered is closed when the request's handler has ended: its
	// response and quota throttle are set.
	answered <-chan struct{}
	once     sync.Once
}

// Init readies t for a request whose handler's end closes answered.
func (t *Turn) Init(answered <-chan struct{}) {
	t.done, t.answered = make(chan struct{}), answered
}

// Follow makes t start once prev has taken effect; prev nil: at once.
func (t *Turn) Follow(prev *Turn) {
	if prev != nil {
		t.after = prev.done
	}
}

// Release marks the request as having taken effect, once: free runs
// first (the request returns its bytes to the budget), then the
// connection's next request may start.
func (t *Turn) Release(free func()) {
	t.once.Do(func() {
		free()
		close(t.done)
	})
}

// Started reports whether the request may start now: its predecessor
// has taken effect (or there is none).
func (t *Turn) Started() bool {
	if t.after == nil {
		return true
	}
	select {
	case <-t.after:
		return true
	default:
		return false
	}
}

// Wait waits until the predecessor has taken effect and returns how long
// it waited (0 when it had already).
func (t *Turn) Wait() time.Duration {
	if t.after == nil {
		return 0
	}
	select {
	case <-t.after:
		return 0
	default:
		start := time.Now()
		<-t.after // the predecessor ends: a dead connection's handlers return promptly
		return time.Since(start)
	}
}

// ReadAfter waits until the reader may read the frame after last's
// (last nil: at once), false if dead closes first. Like Kafka, which
// reads nothing more from a connection until its current request is
// done, that is once last has taken effect; once a quota applies to the
// connection (quotaLimited), once last is answered, so its throttle (and
// mute) is known first; behind a pipelined request that has started (a
// Produce), once it has started, so the next frame waits its turn
// decoded.
func ReadAfter(last *Turn, dead <-chan struct{}, quotaLimited, pipelined bool) bool {
	if last == nil {
		return true
	}
	var wait <-chan struct{} = last.done
	switch {
	case quotaLimited:
		wait = last.answered
	case pipelined:
		wait = last.after
	}
	if wait == nil {
		return true
	}
	select {
	case <-wait:
		return true
	case <-dead:
		return false
	}
}
