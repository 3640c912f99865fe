package storage

import (
	"bytes"
	"errors"
	"testing"
)

func appendRetained(t *testing.T, s *Store, id LogID, off Offset, size int) {
	t.Helper()
	if _, err := s.Append(id, 2, payloadFor(off, size), AppendOptions{MaxTime: int64(off), Retain: true}); err != nil {
		t.Fatal(err)
	}
}

// C2/C3: whatever the cache holds, every read returns exactly what the
// index and files hold: the same headers, the same payloads, the same
// errors. A cache too small for the log serves the tail and sends older
// reads to disk.
func TestTailCacheReadsMatchDisk(t *testing.T) {
	const entries, size = 40, 1000
	// 10 entries' worth of budget: most of the log is on disk only.
	cached := newStore(t, t.TempDir(), Options{TailCacheBytes: 10 * (size + frameHeaderLen)})
	if err := cached.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		if i == entries/2 {
			if _, err := cached.Roll(1); err != nil {
				t.Fatal(err)
			}
		}
		appendRetained(t, cached, 1, Offset(2*i), size)
	}
	if got := cached.tail.mu.bytes; got > cached.tail.limit {
		t.Fatalf("cache holds %d bytes, limit %d", got, cached.tail.limit)
	}
	if err := cached.SoftTrim(1, 4); err != nil {
		t.Fatal(err)
	}
	// The same appends into a store without a cache are the reference.
	ref := newStore(t, t.TempDir(), Options{TailCacheBytes: -1})
	if err := ref.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		if i == entries/2 {
			if _, err := ref.Roll(1); err != nil {
				t.Fatal(err)
			}
		}
		mustAppend(t, ref, 1, 2, payloadFor(Offset(2*i), size), int64(2*i))
	}
	if err := ref.SoftTrim(1, 4); err != nil {
		t.Fatal(err)
	}
	defer cached.Close()
	defer ref.Close()

	for from := Offset(0); from <= 2*entries+1; from++ {
		for _, max := range []int{1, 3, 100} {
			want, werr := ref.IndexRange(1, from, max)
			got, gerr := cached.IndexRange(1, from, max)
			if !sameErr(werr, gerr) || !sameHeaders(want, got) {
				t.Fatalf("IndexRange(%d, %d): %v %v, want %v %v", from, max, got, gerr, want, werr)
			}
		}
		wf, werr := ref.Floor(1, from)
		gf, gerr := cached.Floor(1, from)
		if !sameErr(werr, gerr) || wf != gf {
			t.Fatalf("Floor(%d): %+v %v, want %+v %v", from, gf, gerr, wf, werr)
		}
		we, werr := ref.ReadEntries(1, from, 7, 5*size)
		ge, gerr := cached.ReadEntries(1, from, 7, 5*size)
		if !sameErr(werr, gerr) || len(we) != len(ge) {
			t.Fatalf("ReadEntries(%d): %d entries %v, want %d %v", from, len(ge), gerr, len(we), werr)
		}
		for i := range we {
			if we[i].EntryHeader != ge[i].EntryHeader || !bytes.Equal(we[i].Payload, ge[i].Payload) {
				t.Fatalf("ReadEntries(%d)[%d] differs", from, i)
			}
		}
	}
	info, _ := ref.Info(1)
	for _, li := range info.Ledgers {
		for e := EntryID(0); e <= EntryID(li.Entries); e++ {
			wh, werr := ref.EntryAt(1, li.ID, e)
			gh, gerr := cached.EntryAt(1, li.ID, e) // both stores number ledgers alike
			if !sameErr(werr, gerr) || wh != gh {
				t.Fatalf("EntryAt(%v, %v): %+v %v, want %+v %v", li.ID, e, gh, gerr, wh, werr)
			}
		}
	}
}

func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	for _, e := range []error{ErrTrimmed, ErrOutOfRange, ErrNotFound, ErrInvalid} {
		if errors.Is(a, e) != errors.Is(b, e) {
			return false
		}
	}
	return true
}

func sameHeaders(a, b []EntryHeader) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x != y {
			return false
		}
	}
	return true
}

// A read that starts in the cache touches neither the index nor a file
// (C2), and serves the cache's own slice (C4).
func TestTailCacheServesFromMemory(t *testing.T) {
	var probes probeCount
	s := newStore(t, t.TempDir(), probes.hook(Options{}))
	defer s.Close()
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		appendRetained(t, s, 1, Offset(2*i), 100)
	}
	before := probes.Load()
	es, err := s.ReadEntries(1, 6, 100, 1<<20)
	if err != nil || len(es) != 2 || es[0].Offset != 6 {
		t.Fatalf("read: %v entries, %v", len(es), err)
	}
	if n := probes.Load() - before; n != 0 {
		t.Fatalf("a tail read made %d index probes", n)
	}
	live := s.mustTail(t, 1)
	if &live[len(live)-1].payload[0] != &es[1].Payload[0] {
		t.Fatal("tail read copied the payload")
	}

	// Deleting the log drops its entries.
	if err := s.DeleteLog(1); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadEntries(1, 0, 1, 1); !errors.Is(err, ErrOutOfRange) && err != nil {
		t.Fatalf("read of a recreated log: %v", err)
	}
}

// Without Retain nothing is cached, and an unretained buffer may be reused.
func TestTailCacheOnlyRetained(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{})
	defer s.Close()
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	buf := payloadFor(0, 64)
	mustAppend(t, s, 1, 1, buf, 0)
	for i := range buf {
		buf[i] = 0xff
	}
	es, err := s.ReadEntries(1, 0, 1, 1<<20)
	if err != nil || !bytes.Equal(es[0].Payload, payloadFor(0, 64)) {
		t.Fatalf("read after reusing the buffer: %v", err)
	}
	if len(s.mustTail(t, 1)) != 0 {
		t.Fatal("an unretained payload was cached")
	}
}

func (s *Store) mustTail(t *testing.T, id LogID) []cachedEntry {
	t.Helper()
	l, err := s.getLog(id)
	if err != nil {
		t.Fatal(err)
	}
	l.tail.mu.Lock()
	defer l.tail.mu.Unlock()
	return append([]cachedEntry(nil), l.tail.liveLocked()...)
}

// Concurrent writers on many logs under a small budget: the cache stays
// within it, each log's cache stays a gap-free suffix (C2), and reads
// return what was written.
func TestTailCacheConcurrentEviction(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{TailCacheBytes: 20 * (200 + frameHeaderLen)})
	defer s.Close()
	const logs, writes = 6, 60
	for id := LogID(1); id <= logs; id++ {
		if err := s.CreateLog(id); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, logs)
	for id := LogID(1); id <= logs; id++ {
		go func() {
			for i := range writes {
				if _, err := s.Append(id, 1, payloadFor(Offset(i), 200), AppendOptions{Retain: true}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range logs {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	cached := 0
	for id := LogID(1); id <= logs; id++ {
		live := s.mustTail(t, id)
		for i := 1; i < len(live); i++ {
			if live[i].hdr.Offset != live[i-1].hdr.End() {
				t.Fatalf("%v: cache has a gap at %v", id, live[i].hdr.Offset)
			}
		}
		cached += len(live)
		es, err := s.ReadEntries(id, 0, writes, 1<<20)
		if err != nil || len(es) != writes {
			t.Fatalf("%v: read %d entries, %v", id, len(es), err)
		}
		for i, e := range es {
			if !bytes.Equal(e.Payload, payloadFor(Offset(i), 200)) {
				t.Fatalf("%v: entry %d differs", id, i)
			}
		}
	}
	if cached > 20 {
		t.Fatalf("%d entries cached, budget holds 20", cached)
	}
}

// C5: slices of one shared buffer (a many-partition request frame) are
// charged once, at the buffer's whole size, while any of them is cached;
// the budget bounds those buffers, and a buffer larger than the budget is
// not cached at all (and the log's cache goes, C2).
func TestTailCacheChargesBackingOnce(t *testing.T) {
	const logs, slice = 4, 1000
	frame := logs * slice
	s := newStore(t, t.TempDir(), Options{TailCacheBytes: int64(3*frame + 8*logs*frameHeaderLen)})
	defer s.Close()
	for id := LogID(1); id <= logs; id++ {
		if err := s.CreateLog(id); err != nil {
			t.Fatal(err)
		}
	}
	writeFrame := func(n int) {
		t.Helper()
		buf := make([]byte, frame)
		b := NewBacking(len(buf))
		for id := LogID(1); id <= logs; id++ {
			p := buf[int(id-1)*slice : int(id)*slice : int(id)*slice]
			copy(p, payloadFor(Offset(n), slice))
			if _, err := s.Append(id, 1, p, AppendOptions{Retain: true, Backing: b}); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeFrame(0)
	if got, want := s.tail.mu.bytes, int64(frame+logs*frameHeaderLen); got != want {
		t.Fatalf("one frame in 4 slices charged %d bytes, want %d (once, whole)", got, want)
	}
	for n := 1; n < 10; n++ {
		writeFrame(n)
		if s.tail.mu.bytes > s.tail.limit {
			t.Fatalf("after frame %d: %d bytes cached, limit %d", n, s.tail.mu.bytes, s.tail.limit)
		}
	}
	// Three frames fit: the last three are cached whole, nothing older.
	for id := LogID(1); id <= logs; id++ {
		tail := s.mustTail(t, id)
		if len(tail) != 3 || tail[0].hdr.Offset != 7 {
			t.Fatalf("log %d caches %d entries from %v, want offsets 7..9", id, len(tail), tail[0].hdr.Offset)
		}
		es, err := s.ReadEntries(id, 7, 3, 1<<20)
		if err != nil || len(es) != 3 || !bytes.Equal(es[2].Payload, payloadFor(9, slice)) {
			t.Fatalf("log %d: read %d entries, err %v", id, len(es), err)
		}
	}
	// A buffer larger than the whole budget is never cached.
	big := NewBacking(int(s.tail.limit) + 1)
	if _, err := s.Append(1, 1, payloadFor(10, slice), AppendOptions{Retain: true, Backing: big}); err != nil {
		t.Fatal(err)
	}
	if tail := s.mustTail(t, 1); len(tail) != 0 {
		t.Fatalf("after a slice of a buffer larger than the budget the cache holds %d entries, want none (C2)", len(tail))
	}
	if es, err := s.ReadEntries(1, 7, 10, 1<<20); err != nil || len(es) != 4 {
		t.Fatalf("read from 7: %d entries, err %v; want 7..10", len(es), err)
	}
}
