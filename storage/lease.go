package storage

import (
	"os"
	"runtime"
	"sync"

	"github.com/kgateway/kgateway/bufpool"
)

// Leased reads (doc.go "Leased reads"): a read that hands its bytes to a
// socket after it returns (a Kafka Fetch answered with sendfile) keeps
// what they depend on until they are sent.
//
// ReadIndexedLeased reads like ReadIndexed — every frame is read with
// pread and its CRC32C checked before the entry is returned — but into
// pooled buffers, which the Lease holds until the caller releases it,
// once the bytes are written (or will never be): a fetch then allocates
// nothing per byte it serves. A lease made to keep pins (NewLease(true))
// also keeps the pins of the ledgers read, and each entry read from a
// file says where its payload lies (Entry.Src). While a lease holds a
// ledger's pin its file is neither removed nor reused as a spare (I6,
// I8), so the file bytes Src names stay the bytes whose CRC the read
// checked: sendfile of Src sends exactly the verified payload. Without
// kept pins Src is left zero, since nothing would keep it valid.

// FileSpan says where a leased entry's payload lies in its ledger file:
// File (nil when the store's FS has no OS files, or the entry came from
// the tail cache) at offset Off, len(Payload) bytes.
type FileSpan struct {
	File *os.File
	Off  int64
}

// Lease holds the pins and pooled buffers of leased reads. Release frees
// them once; a lease dropped without Release is released when it is
// garbage collected, so an error path that forgets it cannot pin a file
// forever. The zero Lease is not usable: use NewLease.
type Lease struct {
	h    *leaseHold
	pins bool // keep the pins of the ledgers read, and set Entry.Src
}

// leaseHold is the state a Lease owns; it is separate from the Lease so
// that the cleanup (which must not reference the Lease) can release it.
type leaseHold struct {
	mu       sync.Mutex
	released bool
	unpins   []func()
	bufs     [][]byte
	frames   []*bufpool.Shared // pooled backings of entries served from the tail cache
}

// NewLease returns an empty lease; with pins it keeps the ledgers it reads
// pinned and its entries name their file ranges (Entry.Src).
func NewLease(pins bool) *Lease {
	l := &Lease{h: &leaseHold{}, pins: pins}
	runtime.AddCleanup(l, func(h *leaseHold) { h.release() }, l.h)
	return l
}

// Release unpins every ledger the lease holds and returns its buffers to
// the pool; the payloads of its entries must not be used after it. Later
// calls do nothing.
func (l *Lease) Release() {
	if l != nil {
		l.h.release()
	}
}

// Released reports whether the lease was released.
func (l *Lease) Released() bool {
	l.h.mu.Lock()
	defer l.h.mu.Unlock()
	return l.h.released
}

func (h *leaseHold) release() {
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return
	}
	h.released = true
	unpins, bufs, frames := h.unpins, h.bufs, h.frames
	h.unpins, h.bufs, h.frames = nil, nil, nil
	h.mu.Unlock()
	for _, u := range unpins {
		u()
	}
	for _, b := range bufs {
		putBuf(b)
	}
	for _, f := range frames {
		f.Release()
	}
}

// hold makes the lease a holder of a pooled backing whose slice it serves
// from the tail cache (doc.go "Pooled frames"); the caller holds the
// backing (the cache does, under the log's tail lock). On a released
// lease the reference is kept for good: whoever reads the entry now
// cannot say when it stops.
func (l *Lease) hold(f *bufpool.Shared) {
	h := l.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		f.Keep()
		return
	}
	f.Acquire()
	h.frames = append(h.frames, f)
}

// keep adds a pin's release to the lease; on a released lease it unpins
// at once (the read that took it is then answering nobody).
func (l *Lease) keep(unpin func()) {
	h := l.h
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		unpin()
		return
	}
	h.unpins = append(h.unpins, unpin)
	h.mu.Unlock()
}

// buf returns a pooled buffer of n bytes that the lease returns to the
// pool on Release.
func (l *Lease) buf(n int) []byte {
	b := getBuf(n)
	h := l.h
	h.mu.Lock()
	if !h.released {
		h.bufs = append(h.bufs, b)
	}
	h.mu.Unlock()
	return b[:n]
}

// getBuf and putBuf are the pooled read buffers (package bufpool): reusing
// them spares a fetch the allocation (and the zeroing, and the page
// faults of fresh heap) of every byte it reads from a file.
func getBuf(n int) []byte { return bufpool.Get(n) }
func putBuf(b []byte)     { bufpool.Put(b) }
