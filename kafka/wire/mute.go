package wire

// Throttling a connection (KIP-219): once a throttled response is
// written, the connection's reader stays off it for the throttle time;
// a client too old to throttle itself gets its response only after it.

import (
	"sync/atomic"
	"time"
)

// Mute is when a throttled connection may be read again: set by its
// writer (and handlers), waited for by its reader. The zero Mute is not
// muted.
type Mute struct {
	until atomic.Int64 // unix nanoseconds
}

// For keeps the reader off for d from now; a longer mute already set
// stays.
func (m *Mute) For(d time.Duration) {
	until := time.Now().Add(d).UnixNano()
	for {
		cur := m.until.Load()
		if cur >= until || m.until.CompareAndSwap(cur, until) {
			return
		}
	}
}

// Wait waits while the connection is muted: false if dead (the
// connection's end) closes first, true once the mute is over or closing
// (the server's shutdown) closes.
func (m *Mute) Wait(dead, closing <-chan struct{}) bool {
	d := time.Until(time.Unix(0, m.until.Load()))
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-dead:
		return false
	case <-closing:
		return true
	}
}

// Delay waits d before a response is written to a client that does not
// throttle itself; false if dead closes first.
func Delay(d time.Duration, dead <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-dead:
		return false
	}
}
