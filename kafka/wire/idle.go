package wire

// Idle and slow connections (the idle connection timeout): IdleReader drops a connection that has
// neither sent nor received a byte for connections.max.idle.ms while
// nothing of it is in flight, including a client that started a frame and
// never finished it.

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// ErrIdle is why an idle connection was closed.
var ErrIdle = errors.New("kafka: connection idle (connections.max.idle.ms)")

// ErrSlowFrame is why a connection that took too long to send one frame was
// closed. A Kafka client gives up on a request after request.timeout.ms
// (30 s by default), so a frame still arriving after
// connections.max.idle.ms is a client that is gone or hostile (a slow loris
// holding queued.max.request.bytes, the request memory budget).
var ErrSlowFrame = fmt.Errorf("%w: frame not completed in time", ErrIdle)

// IdleConn is what an IdleReader needs of its connection.
type IdleConn interface {
	// Read and SetReadDeadline are the socket's.
	Read(p []byte) (int, error)
	SetReadDeadline(t time.Time) error
	// FrameStart is when the body of the frame being read started to
	// arrive (budget waits excluded); zero between frames.
	FrameStart() time.Time
	// Touch records activity; LastActive is the last recorded.
	Touch()
	LastActive() time.Time
	// Busy says whether a request of the connection is in flight.
	Busy() bool
	// Closing says whether the server is shutting down.
	Closing() bool
}

// IdleReader reads from a connection, closing it (ErrIdle) after Idle
// (connections.max.idle.ms) without a byte read or written while no
// request of it is in flight, or (ErrSlowFrame) when a frame's body has
// been arriving for that long. Activity is what counts between frames, as
// in Kafka; within a frame, completion is what counts.
type IdleReader struct {
	C    IdleConn
	Idle time.Duration
	// deadlineAt is when the current read deadline was set; it is moved
	// only every idle/8, so a busy connection does not reset a timer per
	// read.
	deadlineAt time.Time
}

func (r *IdleReader) Read(p []byte) (int, error) {
	c, idle := r.C, r.Idle
	for {
		now := time.Now()
		if fs := c.FrameStart(); !fs.IsZero() && now.Sub(fs) >= idle {
			return 0, ErrSlowFrame
		}
		if now.Sub(r.deadlineAt) > idle/8 {
			if err := r.setDeadline(now, idle); err != nil {
				return 0, err
			}
		}
		n, err := c.Read(p)
		if n > 0 {
			c.Touch()
			return n, err
		}
		if !IsTimeout(err) || c.Closing() {
			return n, err
		}
		last := c.LastActive()
		switch {
		case !c.FrameStart().IsZero():
			// Mid-frame: the frame's own deadline (above) decides.
		case c.Busy():
			// Busy (a long poll, a slow handler), not idle.
			last = time.Now()
		case time.Since(last) >= idle:
			return 0, ErrIdle
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
func (r *IdleReader) setDeadline(from time.Time, idle time.Duration) error {
	r.deadlineAt = from
	at := from.Add(idle)
	if fs := r.C.FrameStart(); !fs.IsZero() && fs.Add(idle).Before(at) {
		at = fs.Add(idle)
	}
	r.C.SetReadDeadline(at)
	if r.C.Closing() {
		r.C.SetReadDeadline(time.Now())
		return net.ErrClosed
	}
	return nil
}

// IsTimeout says whether err is a network timeout (a read deadline).
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
