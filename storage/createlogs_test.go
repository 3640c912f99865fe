package storage

import (
	"errors"
	"testing"
)

// CreateLogs creates many logs at once, refuses an existing or repeated id
// without adding any, and what it created survives a reopen.
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
	if err := s.CreateLogs(4); err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(4)
	if err != nil || seen[info.Ledgers[0].ID] {
		t.Fatalf("new log after reopen: %+v, %v (ledger ids must stay unique)", info, err)
	}
}
