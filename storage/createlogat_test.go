package storage

import (
	"errors"
	"testing"
)

// CreateLogAt makes an empty log whose start and end are the given
// offset, both before and after a reopen (never written, and written); its
// first Write gets that offset, reads below it are trimmed, and a Roll
// continues from it.
func TestCreateLogAt(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	const a, b = LogID(1), LogID(2)
	if err := s.CreateLogAt(a, 1000); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateLogAt(b, 50); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateLogAt(a, 5); !errors.Is(err, ErrLogExists) {
		t.Fatalf("existing id: %v, want ErrLogExists", err)
	}
	if err := s.CreateLogAt(3, -1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative start: %v, want ErrInvalid", err)
	}
	checkBounds(t, s, a, 1000, 1000)
	if h := mustAppend(t, s, a, 3, payloadFor(1000, 20), 7); h.Offset != 1000 {
		t.Fatalf("first write at %v, want 1000", h.Offset)
	}
	checkBounds(t, s, a, 1000, 1003)
	if _, err := s.Roll(a); err != nil {
		t.Fatal(err)
	}
	if h := mustAppend(t, s, a, 2, payloadFor(1003, 20), 8); h.Offset != 1003 {
		t.Fatalf("write after roll at %v, want 1003", h.Offset)
	}
	if _, err := s.ReadEntries(a, 999, 10, 1<<20); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("read below the start: %v, want ErrTrimmed", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = newStore(t, dir, Options{})
	defer s.Close()
	checkBounds(t, s, a, 1000, 1005)
	es, err := s.ReadEntries(a, 1000, 10, 1<<20)
	if err != nil || len(es) != 2 || es[0].Offset != 1000 || es[1].Offset != 1003 {
		t.Fatalf("entries after reopen: %+v, %v", es, err)
	}
	// b was never written: it reopens at 50 and its first Write gets 50.
	checkBounds(t, s, b, 50, 50)
	if h := mustAppend(t, s, b, 1, payloadFor(50, 10), 1); h.Offset != 50 {
		t.Fatalf("first write after reopen at %v, want 50", h.Offset)
	}
	checkBounds(t, s, b, 50, 51)
}

func checkBounds(t *testing.T, s *Store, id LogID, start, end Offset) {
	t.Helper()
	info, err := s.Info(id)
	if err != nil || info.Start != start || info.End != end {
		t.Fatalf("%v: start %v end %v (%v), want %v %v", id, info.Start, info.End, err, start, end)
	}
}
