package storage

import (
	"errors"
	"testing"
)

// CreateLogs creates many logs at once, refuses an existing or repeated id
// without adding any, and what it created survives a reopen. (Their files
// are created by CreateLogs: precreate.go, TestPrecreatedFiles.)
func TestCreateLogsBatch(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	if err := s.CreateLogs(1, 2, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateLogs(4, 2); !errors.Is(err, ErrLogExists) {
		t.Fatalf("existing id: %v, want ErrLogExists", err)
	}
	if err := s.CreateLogs(5, 5); !errors.Is(err, ErrLogExists) {
		t.Fatalf("repeated id: %v, want ErrLogExists", err)
	}
	if got := len(s.Logs()); got != 3 {
		t.Fatalf("%d logs after refused creates, want 3", got)
	}
	for _, id := range []LogID{1, 2, 3} {
		mustAppend(t, s, id, 1, payloadFor(0, 10), 1)
	}
	if files := segFiles(t, dir); len(files) != 3 {
		t.Fatalf("files after the first writes: %v", files)
	}
	// Log 9 is never written: it reopens empty (its file, created by
	// CreateLogs, holds nothing) and takes writes after the reopen.
	if err := s.CreateLogs(9); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = newStore(t, dir, Options{})
	defer s.Close()
	seen := map[LedgerID]bool{}
	for _, id := range []LogID{1, 2, 3} {
		info, err := s.Info(id)
		if err != nil || info.End != 1 || len(info.Ledgers) != 1 {
			t.Fatalf("%v after reopen: %+v, %v", id, info, err)
		}
		if seen[info.Ledgers[0].ID] {
			t.Fatalf("ledger id %v reused", info.Ledgers[0].ID)
		}
		seen[info.Ledgers[0].ID] = true
	}
	if info, err := s.Info(9); err != nil || info.End != 0 {
		t.Fatalf("unwritten log after reopen: %+v, %v", info, err)
	}
	mustAppend(t, s, 9, 2, payloadFor(0, 10), 1)
	if es, err := s.ReadEntries(9, 0, 10, 100); err != nil || len(es) != 1 || es[0].Records != 2 {
		t.Fatalf("read of the unwritten log's first entry: %v, %v", es, err)
	}
	if err := s.CreateLogs(4); err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(4)
	if err != nil || seen[info.Ledgers[0].ID] {
		t.Fatalf("new log after reopen: %+v, %v (ledger ids must stay unique)", info, err)
	}
}
