package tier

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// A stream to or from the object store (an upload, the read-back of a
// whole object) takes as long as its object is big, so no fixed timeout
// fits it; but each of its calls must make progress. A stallGuard bounds
// each call (opening the stream, each Write or Read, Close) by OpTimeout:
// a call that takes longer cancels the stream's context, and the call
// fails with a timeout (context.DeadlineExceeded), which retry tries
// again. Without it a store that accepts a connection and never answers
// (hung, or a black-holed network path) holds the upload, and the tier
// pass behind it, forever. Time between calls (reading the local file,
// the bandwidth limiter's wait) is not counted.
type stallGuard struct {
	d      time.Duration
	cancel context.CancelFunc
	fired  atomic.Bool
}

// newStallGuard returns a context for the stream, derived from ctx, and
// its guard; the caller calls the returned cancel when the stream is
// done. d <= 0 guards nothing.
func newStallGuard(ctx context.Context, d time.Duration) (context.Context, *stallGuard, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	return ctx, &stallGuard{d: d, cancel: cancel}, cancel
}

// call runs f, cancelling the stream if f takes longer than the bound.
func (g *stallGuard) call(f func() error) error {
	if g.d <= 0 {
		return f()
	}
	timer := time.AfterFunc(g.d, func() { g.fired.Store(true); g.cancel() })
	err := f()
	timer.Stop()
	if g.fired.Load() {
		// The stream's own error is a cancellation (permanent to retry);
		// what happened is a timeout.
		return fmt.Errorf("tier: object-store call made no progress in %v (%v): %w", g.d, err, context.DeadlineExceeded)
	}
	return err
}

// guardedWriter is an object writer whose every call is guarded.
type guardedWriter struct {
	w io.WriteCloser
	g *stallGuard
}

func (w guardedWriter) Write(b []byte) (n int, err error) {
	err = w.g.call(func() error { n, err = w.w.Write(b); return err })
	return n, err
}

func (w guardedWriter) Close() error { return w.g.call(w.w.Close) }

// guardedReader is an object reader whose every call is guarded.
type guardedReader struct {
	r io.ReadCloser
	g *stallGuard
}

func (r guardedReader) Read(b []byte) (n int, err error) {
	err = r.g.call(func() error { n, err = r.r.Read(b); return err })
	return n, err
}

func (r guardedReader) Close() error { return r.r.Close() }
