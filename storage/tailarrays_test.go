package storage

import "testing"

// The tail cache keeps its arrays across evictions (tailcache.go), but
// never what they held: an emptied log tail keeps its array, all of it
// cleared; the eviction order, compacted in place, holds no reference
// past its live part. And
// a write's vector is emptied once the frame is written (Write: the
// store keeps no payload it does not say it holds).
func TestTailCacheArraysKeepNothing(t *testing.T) {
	const size, small = 100, 8
	budget := int64(2 * (size + frameHeaderLen))
	s := newStore(t, t.TempDir(), Options{TailCacheBytes: budget})
	defer s.Close()
	if err := s.CreateLogs(1, 2, 3); err != nil {
		t.Fatal(err)
	}
	fill := func(id LogID, n int) {
		t.Helper()
		for range n {
			if _, err := s.Append(id, 1, make([]byte, size), AppendOptions{Retain: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Logs 1 and 2 have their entries evicted by the next log's, and
	// enough entries go through the eviction order to compact it.
	s.tail.limit = int64(small+2) * (size + frameHeaderLen)
	fill(1, small)
	s.tail.limit = budget
	fill(2, small)
	fill(3, 3000)
	for _, id := range []LogID{1, 2} {
		l, err := s.getLog(id)
		if err != nil {
			t.Fatal(err)
		}
		l.tail.mu.Lock()
		entries, head := l.tail.mu.entries, l.tail.mu.head
		l.tail.mu.Unlock()
		if len(entries) != 0 || head != 0 {
			t.Fatalf("log %d: %d entries from %d still cached", id, len(entries), head)
		}
		for _, e := range entries[:cap(entries)] {
			if e.payload != nil || e.frame != nil {
				t.Fatalf("log %d: an emptied tail's array still holds an entry at %v", id, e.hdr.Offset)
			}
		}
		if cap(entries) == 0 {
			t.Fatalf("log %d: its emptied tail's array was let go", id)
		}
		l.appendMu.Lock()
		iov := l.w.iov
		l.appendMu.Unlock()
		if iov[0] != nil || iov[1] != nil {
			t.Fatalf("log %d: the write vector still holds the last frame", id)
		}
	}
	s.tail.mu.Lock()
	fifo := s.tail.mu.fifo
	s.tail.mu.Unlock()
	for i, ref := range fifo[len(fifo):cap(fifo)] {
		if ref.log != nil || ref.backing != nil {
			t.Fatalf("the eviction order holds a reference %d past its end", i)
		}
	}
}
