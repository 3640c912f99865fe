package bufpool

import (
	"sync"
	"time"
)

// Large buffers are kept, not pooled.
//
// A sync.Pool lets go of what it holds at every other garbage collection,
// and its classes are exact: a 17 MiB request frame finds nothing in the
// pool when the previous one on the connection was 23 MiB, or when a
// collection came in between. A server taking a few dozen frames of 10–30
// MiB a second (many partitions in one Produce) then reads nearly every
// frame into fresh heap, whose first touch (a page fault for every 4 KiB,
// and on a VM the host's too) cost as much as writing the same bytes to
// the page cache. So buffers of a class of LargeMin bytes and more are kept in one
// list instead, which survives collections, up to KeptBytes in all, and
// GetWithin takes any of them within the capacity range its caller can
// be charged for. A buffer unused for keptIdle is let go (sweep), so a
// server that was busy once does not hold that memory for good.
const (
	LargeMin  = 1 << 20
	KeptBytes = 256 << 20
	keptIdle  = 10 * time.Second
)

type keptBuf struct {
	b    []byte
	idle time.Time // when it was put back
}

var kept struct {
	mu    sync.Mutex
	bufs  []keptBuf
	bytes int
	sweep *time.Timer // armed while bufs is not empty
}

// takeKept removes and returns the smallest kept buffer whose capacity is
// within [n, most], or nil.
func takeKept(n, most int) []byte {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	best := -1
	for i, k := range kept.bufs {
		if c := cap(k.b); c >= n && c <= most && (best < 0 || c < cap(kept.bufs[best].b)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	b := kept.bufs[best].b
	last := len(kept.bufs) - 1
	kept.bufs[best] = kept.bufs[last]
	kept.bufs[last] = keptBuf{}
	kept.bufs = kept.bufs[:last]
	kept.bytes -= cap(b)
	return b
}

// keep puts b in the list unless that would pass KeptBytes; then the
// garbage collector frees it.
func keep(b []byte) {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if kept.bytes+cap(b) > KeptBytes {
		return
	}
	kept.bufs = append(kept.bufs, keptBuf{b: b[:cap(b)], idle: time.Now()})
	kept.bytes += cap(b)
	if kept.sweep == nil {
		kept.sweep = time.AfterFunc(keptIdle, sweepKept)
	}
}

// sweepKept lets go of the buffers unused for keptIdle, and runs again
// while any are left.
func sweepKept() {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	now := time.Now()
	live := kept.bufs[:0]
	for _, k := range kept.bufs {
		if now.Sub(k.idle) < keptIdle {
			live = append(live, k)
		} else {
			kept.bytes -= cap(k.b)
		}
	}
	clear(kept.bufs[len(live):])
	kept.bufs = live
	kept.sweep = nil
	if len(live) > 0 {
		kept.sweep = time.AfterFunc(keptIdle, sweepKept)
	}
}

// DropKept lets go of every kept buffer (tests).
func DropKept() {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	clear(kept.bufs)
	kept.bufs, kept.bytes = nil, 0
}

// KeptNow is how many bytes the list holds (tests).
func KeptNow() int {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	return kept.bytes
}
