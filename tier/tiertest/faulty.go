// Package tiertest holds a fault-injecting object store for tests of the
// object tier: it fails, delays and lies (wrong bytes, truncated reads)
// on request, over a real bucket.
package tiertest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/tier"
)

// ErrSlowDown is what Faulty fails with: an object store's 503 SlowDown.
var ErrSlowDown = errors.New("tiertest: 503 SlowDown")

// Faulty wraps a tier.Bucket. Its knobs may be changed at any time.
type Faulty struct {
	tier.Bucket
	mu sync.Mutex
	// FailNext fails the next n calls of any kind with ErrSlowDown.
	failNext int
	// Delay delays every call.
	delay time.Duration
	// Flip flips a byte of every ranged read (a lying store); Truncate
	// cuts every ranged read short by one byte.
	flip, truncate bool
	// lieBelow, when above 0, limits the lies to reads starting below it.
	lieBelow int64
	// Calls counts every call; Reads the ranged reads.
	Calls, Reads atomic.Int64
}

// NewFaulty wraps b.
func NewFaulty(b tier.Bucket) *Faulty { return &Faulty{Bucket: b} }

// FailNext makes the next n calls fail with ErrSlowDown.
func (f *Faulty) FailNext(n int) { f.mu.Lock(); f.failNext = n; f.mu.Unlock() }

// SetDelay delays every call by d.
func (f *Faulty) SetDelay(d time.Duration) { f.mu.Lock(); f.delay = d; f.mu.Unlock() }

// LieBelow limits the lies to ranged reads that start below off (say,
// the frames region of an object, so its index reads true).
func (f *Faulty) LieBelow(off int64) { f.mu.Lock(); f.lieBelow = off; f.mu.Unlock() }

// Lie makes ranged reads return one wrong byte (flip) or one byte too few
// (truncate).
func (f *Faulty) Lie(flip, truncate bool) {
	f.mu.Lock()
	f.flip, f.truncate = flip, truncate
	f.mu.Unlock()
}

func (f *Faulty) before(ctx context.Context) error {
	f.Calls.Add(1)
	f.mu.Lock()
	d, fail := f.delay, f.failNext > 0
	if fail {
		f.failNext--
	}
	f.mu.Unlock()
	if d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail {
		return ErrSlowDown
	}
	return nil
}

func (f *Faulty) ReadRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if err := f.before(ctx); err != nil {
		return nil, err
	}
	f.Reads.Add(1)
	r, err := f.Bucket.ReadRange(ctx, key, off, n)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	flip, trunc := f.flip, f.truncate
	if f.lieBelow > 0 && off >= f.lieBelow {
		flip, trunc = false, false
	}
	f.mu.Unlock()
	if !flip && !trunc {
		return r, nil
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if flip && len(b) > 0 {
		b[len(b)/2] ^= 0x40
	}
	if trunc && len(b) > 0 {
		b = b[:len(b)-1]
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (f *Faulty) Size(ctx context.Context, key string) (int64, error) {
	if err := f.before(ctx); err != nil {
		return 0, err
	}
	return f.Bucket.Size(ctx, key)
}

func (f *Faulty) Write(ctx context.Context, key string) (io.WriteCloser, error) {
	if err := f.before(ctx); err != nil {
		return nil, err
	}
	return f.Bucket.Write(ctx, key)
}

func (f *Faulty) Delete(ctx context.Context, key string) error {
	if err := f.before(ctx); err != nil {
		return err
	}
	return f.Bucket.Delete(ctx, key)
}

func (f *Faulty) List(ctx context.Context, prefix string, fn func(string, int64, time.Time) error) error {
	if err := f.before(ctx); err != nil {
		return err
	}
	return f.Bucket.List(ctx, prefix, fn)
}
