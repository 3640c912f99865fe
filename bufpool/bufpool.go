// Package bufpool holds pooled byte buffers, by power-of-two class, and
// reference-counted shared buffers that go back to the pool only when
// their last holder lets go.
//
// Reusing a buffer spares the allocation, the zeroing and the page faults
// of fresh heap for every byte read into it: storage's leased reads read
// files into Get's buffers, and the connection reader reads large request
// frames into them.
//
// # The last holder returns it
//
// A Shared buffer is returned to the pool when its count of holders drops
// to zero, and never before: a buffer reused while anything can still read
// it serves another request's bytes. The rule for everyone who can reach
// its bytes:
//
//   - whoever creates it holds one reference (New) and releases it once it
//     is done with the bytes, and with everything it handed them to that
//     does not hold a reference of its own;
//   - whoever keeps a slice beyond that takes its own reference (Acquire)
//     while it is still held by someone else, and releases it when it lets
//     the slice go;
//   - whoever keeps a slice and cannot tell when it lets go calls Keep: the
//     buffer then never returns to the pool, and the garbage collector
//     frees it like any other once nothing refers to it.
//
// A reference not released (a panic, an error path that does not know
// whether a write still reads the bytes) is the same as Keep: never a
// reuse, only a lost buffer.
package bufpool

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
)

// Classes run from MinPooled to MaxPooled bytes, four to each doubling
// (64, 80, 96, 112, 128 KiB, …): a buffer is at most a quarter larger
// than asked for. Larger buffers are allocated and left to the garbage
// collector.
const (
	minShift  = 16 // 64 KiB
	maxShift  = 25 // 32 MiB
	MinPooled = 1 << minShift
	MaxPooled = 1 << maxShift
)

var pools [1 + 4*(maxShift-minShift)]sync.Pool

// class is the class of an n-byte buffer, -1 beyond the largest.
func class(n int) int {
	if n <= MinPooled {
		return 0
	}
	if n > MaxPooled {
		return -1
	}
	e := bits.Len(uint(n-1)) - 1 // 1<<e < n <= 1<<(e+1)
	step := 1 << (e - 2)
	q := (n - 1<<e + step - 1) / step // 1..4 quarters above 1<<e
	return 1 + 4*(e-minShift) + q - 1
}

// classSize is the capacity of class c's buffers.
func classSize(c int) int {
	if c == 0 {
		return MinPooled
	}
	e, q := minShift+(c-1)/4, (c-1)%4+1
	return 1<<e + q<<(e-2)
}

// Cap is the capacity of the buffer Get(n) returns: n's class, or n
// itself beyond the largest class.
func Cap(n int) int {
	c := class(n)
	if c < 0 {
		return n
	}
	return classSize(c)
}

// Get returns a buffer of length n and capacity Cap(n), pooled when n is
// within the classes. Its bytes are whatever its last user left.
func Get(n int) []byte {
	return GetWithin(n, Cap(n))
}

// GetWithin is Get for a caller that can take (and is charged for) any
// capacity up to most (at least Cap(n)): a kept large buffer ("Large
// buffers are kept, not pooled") of capacity n to most is reused, else
// a new one of Cap(n) is made. For a smaller class it is Get.
func GetWithin(n, most int) []byte {
	c := class(n)
	if c < 0 {
		return make([]byte, n)
	}
	if classSize(c) >= LargeMin { // as Put decides
		if b := takeKept(n, max(most, classSize(c))); b != nil {
			return b[:n]
		}
		return make([]byte, n, classSize(c))
	}
	if p, ok := pools[c].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, classSize(c))
}

// Put returns a buffer Get returned to its pool, or keeps it when it is
// large; any other buffer (one beyond the classes) is left to the garbage
// collector. Nothing may use b after Put.
func Put(b []byte) {
	c := class(cap(b))
	if c < 0 || cap(b) != classSize(c) {
		return
	}
	if cap(b) >= LargeMin {
		keep(b)
		return
	}
	b = b[:cap(b)]
	pools[c].Put(&b)
}

// Shared is a pooled buffer with a count of holders ("The last holder
// returns it").
type Shared struct {
	buf  []byte
	refs atomic.Int64
}

// New makes buf, which Get returned, a Shared buffer held once, by the
// caller.
func New(buf []byte) *Shared {
	s := &Shared{buf: buf}
	s.refs.Store(1)
	return s
}

// Acquire takes one more reference. Only a holder may call it (the count
// is above zero): a buffer already returned cannot be taken back.
func (s *Shared) Acquire() {
	if s.refs.Add(1) <= 1 {
		panic(fmt.Sprintf("bufpool: Acquire of a released buffer (%d holders)", s.refs.Load()-1))
	}
}

// Release lets one reference go; the last one returns the buffer to the
// pool.
func (s *Shared) Release() {
	switch n := s.refs.Add(-1); {
	case n == 0:
		Put(s.buf)
	case n < 0:
		panic("bufpool: Release of a released buffer")
	}
}

// Keep takes a reference that is never released, for a holder that cannot
// tell when it lets the bytes go: the buffer never returns to the pool.
// Only a holder may call it, as Acquire.
func (s *Shared) Keep() { s.Acquire() }

// Cap is the buffer's capacity: the memory it keeps.
func (s *Shared) Cap() int { return cap(s.buf) }

// Holders is how many references are held now (0 once returned): for
// tests and checks of who holds what.
func (s *Shared) Holders() int64 { return s.refs.Load() }
