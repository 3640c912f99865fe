package storage

import "testing"

// TestTailCacheNotRetainedWrite: a Write without Retain ends the log's
// cached suffix, so a read that starts in the cache still gets every later
// entry (C2), here the ones written behind the cache's back.
func TestTailCacheNotRetainedWrite(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{})
	defer s.Close()
	const id = LogID(1)
	if err := s.CreateLog(id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(id, 1, []byte("kept"), AppendOptions{Retain: true}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		mustAppend(t, s, id, 1, []byte("not kept"), 1)
	}
	_, hdrs, err := s.Headers(id, 0, 10, 1<<20)
	if err != nil || len(hdrs) != 3 {
		t.Fatalf("Headers from the cached entry: %d entries, %v; want 3", len(hdrs), err)
	}
	if es, err := s.ReadEntries(id, 0, 0, 0); err != nil || len(es) != 3 {
		t.Fatalf("ReadEntries from the cached entry: %d entries, %v; want 3", len(es), err)
	}
}
