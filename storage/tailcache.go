package storage

import (
	"sort"
	"sync"

	"github.com/kgateway/kgateway/bufpool"
)

// The tail cache (doc.go "Tail cache"): tailing consumers never touch disk.
//
// Every log keeps its most recently written entries (header and payload)
// in memory, in offset order and without gaps: the cache of a log is a
// suffix of its entries, from some offset up to the newest Write. One
// byte budget (Options.TailCacheBytes) bounds all logs together; when it
// is exceeded the entries written longest ago, whatever their log, go
// first. Only payloads written with AppendOptions.Retain are cached (the
// store keeps the caller's slice and never copies it).
//
// Invariants C1–C5: doc.go "Tail cache".

// cachedEntry is one cached entry.
type cachedEntry struct {
	hdr     EntryHeader
	payload []byte
	frame   *bufpool.Shared // the pooled buffer payload is a slice of, if any
}

// logTail is one log's cached suffix.
type logTail struct {
	mu struct {
		sync.Mutex
		entries []cachedEntry // entries[head:] are live, in offset order
		head    int
	}
}

// live returns the cached entries; needs mu.
func (t *logTail) liveLocked() []cachedEntry { return t.mu.entries[t.mu.head:] }

// tailRef names one cached entry in the global eviction order.
type tailRef struct {
	log     *logState
	off     Offset
	n       int64    // bytes charged for the entry itself
	backing *Backing // the shared buffer it is a slice of, if any (C5)
}

// tailCache is the store-wide budget and eviction order.
type tailCache struct {
	limit int64 // <= 0: nothing is cached
	mu    struct {
		sync.Mutex
		bytes int64
		fifo  []tailRef // fifo[head:] in write order
		head  int
	}
}

// add caches one written entry of l (under l.appendMu, so per log in
// offset order) and evicts the oldest entries beyond the budget.
func (c *tailCache) add(l *logState, h EntryHeader, payload []byte, b *Backing) {
	if c.limit <= 0 {
		return
	}
	if int64(len(payload)) > c.limit || (b != nil && b.size > c.limit) {
		// Too big to cache: the log's cache would no longer reach its
		// newest entry, so it goes (C2).
		c.drop(l)
		return
	}
	t := &l.tail
	t.mu.Lock()
	if live := t.liveLocked(); len(live) > 0 && live[len(live)-1].hdr.End() != h.Offset {
		// Not contiguous (cannot happen: Writes are dense, D3); start over
		// rather than break C2.
		c.dropLocked(t)
	}
	var frame *bufpool.Shared
	if b != nil && b.frame != nil {
		// The entry holds its pooled frame until it has left the cache
		// (doc.go "Pooled frames"); the writer holds it now.
		frame = b.frame
		frame.Acquire()
	}
	t.mu.entries = append(t.mu.entries, cachedEntry{hdr: h, payload: payload, frame: frame})
	t.mu.Unlock()

	ref := tailRef{log: l, off: h.Offset, n: frameHeaderLen, backing: b}
	if b == nil {
		ref.n += int64(len(payload))
	}
	c.mu.Lock()
	c.chargeLocked(ref, +1)
	c.mu.fifo = append(c.mu.fifo, ref)
	// Most adds evict one entry or two: no allocation for them.
	var few [4]tailRef
	victims := few[:0]
	for c.mu.bytes > c.limit && c.mu.head < len(c.mu.fifo) {
		v := c.mu.fifo[c.mu.head]
		c.mu.fifo[c.mu.head] = tailRef{}
		c.mu.head++
		c.chargeLocked(v, -1)
		victims = append(victims, v)
	}
	if c.mu.head > 1024 && c.mu.head > len(c.mu.fifo)/2 {
		// Compacted in place: the array, as long as the most entries
		// the budget held, is kept rather than allocated again.
		n := copy(c.mu.fifo, c.mu.fifo[c.mu.head:])
		clear(c.mu.fifo[n:])
		c.mu.fifo, c.mu.head = c.mu.fifo[:n], 0
	}
	c.mu.Unlock()
	for _, v := range victims {
		v.log.tail.evictFront(v.off)
		// Out of the cache now (or dropped before): no read can find the
		// entry any more, so its hold on its frame goes.
		if b := v.backing; b != nil && b.frame != nil {
			b.frame.Release()
		}
	}
}

// chargeLocked adds (sign +1) or removes (-1) ref's bytes from the budget:
// its own, and its backing's whole size when it is the backing's first
// cached slice or its last one leaving (C5). Needs c.mu.
func (c *tailCache) chargeLocked(ref tailRef, sign int) {
	c.mu.bytes += int64(sign) * ref.n
	if b := ref.backing; b != nil {
		if sign > 0 && b.refs == 0 || sign < 0 && b.refs == 1 {
			c.mu.bytes += int64(sign) * b.size
		}
		b.refs += sign
	}
}

// evictFront drops the log's cached entries up to and including the one
// at off. Older ones are included because two adds may evict entries of
// one log concurrently and finish out of order; their turn has come too.
// The entry may already be gone (dropped with the whole log, restarted).
func (t *logTail) evictFront(off Offset) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for live := t.liveLocked(); len(live) > 0 && live[0].hdr.Offset <= off; live = live[1:] {
		t.mu.entries[t.mu.head] = cachedEntry{}
		t.mu.head++
	}
	if t.mu.head == len(t.mu.entries) {
		// Emptied, its entries cleared above: the array is kept for the
		// log's next entries, which a log written at the cache's
		// eviction rate (many logs, an entry or two each cached) would
		// otherwise allocate again each time. It is small: the
		// compaction below halves an array as its entries go one by one.
		t.mu.entries, t.mu.head = t.mu.entries[:0], 0
	} else if t.mu.head > 64 && t.mu.head > len(t.mu.entries)/2 {
		t.mu.entries = append([]cachedEntry(nil), t.liveLocked()...)
		t.mu.head = 0
	}
}

// drop forgets a log's cached entries (DeleteLog, HardTrim). Their bytes
// stay counted until their turn in the eviction order comes, which then
// finds nothing to evict: the budget errs on the side of less memory.
func (c *tailCache) drop(l *logState) {
	l.tail.mu.Lock()
	defer l.tail.mu.Unlock()
	c.dropLocked(&l.tail)
}

func (c *tailCache) dropLocked(t *logTail) {
	clear(t.mu.entries)
	t.mu.entries, t.mu.head = nil, 0
}

// findLocked returns the index in live of the entry containing off, or -1
// when the cache does not hold it (C3). Needs mu.
func findLocked(live []cachedEntry, off Offset) int {
	if len(live) == 0 || off < live[0].hdr.Offset || off >= live[len(live)-1].hdr.End() {
		return -1
	}
	// The first entry ending after off holds it (entries are dense).
	return sort.Search(len(live), func(i int) bool { return live[i].hdr.End() > off })
}

// scan calls visit with the cached entries from the one containing from
// while they are readable in sn (C1), until visit returns false. ok is
// false when the cache cannot answer: the caller asks the index (C3).
func (t *logTail) scan(sn snapshot, from Offset, visit func(EntryHeader) bool) (ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	live := t.liveLocked()
	i := findLocked(live, from)
	if i < 0 || live[i].hdr.End() <= sn.start || live[i].hdr.Offset >= sn.end {
		return false
	}
	for ; i < len(live) && live[i].hdr.Offset < sn.end; i++ {
		if !visit(live[i].hdr) {
			break
		}
	}
	return true
}

// entryAt returns the cached, readable header at (ledger, entry).
func (t *logTail) entryAt(sn snapshot, ledger LedgerID, entry EntryID) (EntryHeader, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	live := t.liveLocked()
	i := sort.Search(len(live), func(i int) bool {
		h := live[i].hdr
		return h.Ledger > ledger || (h.Ledger == ledger && h.Entry >= entry)
	})
	if i == len(live) || live[i].hdr.Ledger != ledger || live[i].hdr.Entry != entry {
		return EntryHeader{}, false
	}
	h := live[i].hdr
	if h.Offset >= sn.end || h.End() <= sn.start {
		return EntryHeader{}, false
	}
	return h, true
}

// payloads fills out[i] with the cached payload of hdrs[i] where the cache
// holds exactly that entry, and returns how many it filled. A payload
// that is a slice of a pooled frame is held by lease until it is
// released, or, without a lease, kept from the pool for good (doc.go
// "Pooled frames").
func (t *logTail) payloads(hdrs []EntryHeader, out [][]byte, lease *Lease) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	live := t.liveLocked()
	n := 0
	for i, h := range hdrs {
		j := findLocked(live, h.Offset)
		if j < 0 {
			continue
		}
		if c := live[j].hdr; c.Offset == h.Offset && c.Ledger == h.Ledger && c.Entry == h.Entry && c.Size == h.Size {
			out[i] = live[j].payload
			n++
			if f := live[j].frame; f != nil {
				if lease != nil {
					lease.hold(f)
				} else {
					f.Keep()
				}
			}
		}
	}
	return n
}

// TailCacheBytes is how many bytes the tail cache charges now (C5), at
// most Options.TailCacheBytes.
func (s *Store) TailCacheBytes() int64 {
	s.tail.mu.Lock()
	defer s.tail.mu.Unlock()
	return s.tail.mu.bytes
}
