package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// fillStore writes two ledgers of entries to log 1 and returns the store,
// still open.
func fillStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if i == 10 {
			if _, err := s.Roll(1); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Append(1, 3, []byte(strings.Repeat("x", 100+i)), AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestVerifyCleanStoppedAndRunning(t *testing.T) {
	dir := t.TempDir()
	s := fillStore(t, dir)
	// Running: the server's store holds pebble's lock.
	for _, phase := range []string{"running", "stopped"} {
		ro, err := OpenReadOnly(dir)
		if err != nil {
			t.Fatalf("%s: %v", phase, err)
		}
		rep, err := ro.Verify(nil)
		if err != nil {
			t.Fatalf("%s: %v %v", phase, err, rep.Problems)
		}
		// While running, the view's index may lag by the NoSync commits
		// pebble has not yet written to its WAL file; those entries are in
		// the open ledger's tail, which Verify checks too. Roll's synced
		// commit makes the first ledger indexed in any case (I3).
		if rep.Entries != 20 || rep.Ledgers != 2 || rep.Logs != 1 {
			t.Fatalf("%s: report %+v", phase, rep)
		}
		logs, err := ro.Logs()
		// The view includes the open ledger's unindexed tail (what Open
		// would re-index), so it sees every entry either way.
		if err != nil || len(logs) != 1 || logs[0].End != 60 || logs[0].Ledgers[1].Entries != 10 {
			t.Fatalf("%s: logs %+v %v", phase, logs, err)
		}
		h, err := ro.Floor(1, 28)
		if err != nil || h.Offset != 27 || h.Ledger != logs[0].Ledgers[0].ID || h.Entry != 9 {
			t.Fatalf("%s: floor %+v %v", phase, h, err)
		}
		ro.Close()
		if phase == "running" {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestVerifyFindsFlippedByte(t *testing.T) {
	dir := t.TempDir()
	s := fillStore(t, dir)
	info, _ := s.Info(1)
	h, err := s.Floor(1, 12) // entry 4 of the first ledger
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	name := filepath.Join(dir, "segments", SegmentFileName(1, info.Ledgers[0].ID))
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	b[h.Pos+frameHeaderLen+7] ^= 0x40
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	var progressed bool
	rep, err := ro.Verify(func(done, total int64) { progressed = total > 0 })
	if !errors.Is(err, ErrVerify) || len(rep.Problems) != 1 || !progressed {
		t.Fatalf("err %v problems %v", err, rep.Problems)
	}
	p := rep.Problems[0]
	if p.Offset != 12 || p.Entry != 4 || p.Pos != h.Pos || !errors.Is(p.Err, ErrCorrupt) ||
		!strings.Contains(p.String(), "crc mismatch") || !strings.Contains(p.String(), SegmentFileName(1, info.Ledgers[0].ID)) {
		t.Fatalf("problem %s", p)
	}
}

// An index entry that disagrees with its frame, and a missing one (a gap),
// are both named.
func TestVerifyFindsIndexInconsistency(t *testing.T) {
	dir := t.TempDir()
	s := fillStore(t, dir)
	h5, _ := s.Floor(1, 15)
	h7, _ := s.Floor(1, 21)
	s.Close()
	db, err := pebble.Open(filepath.Join(dir, "index"), &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bad := h7
	bad.Records = 4 // the frame says 3
	if err := db.Set(indexKey(1, h7.Offset), encodeIndexValue(bad), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Delete(indexKey(1, h5.Offset), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rep, err := ro.Verify(nil)
	if !errors.Is(err, ErrVerify) {
		t.Fatalf("err %v", err)
	}
	var all []string
	for _, p := range rep.Problems {
		all = append(all, p.String())
	}
	joined := strings.Join(all, "\n")
	for _, w := range []string{
		"entry-6 offset-18 file " + SegmentFileName(1, h5.Ledger) + " pos", // after the deleted entry 5
		"offset gap or overlap: the previous entry ends at offset-15",
		"frame says offset-21 records 3",
		"sealed with 10 entries",
	} {
		if !strings.Contains(joined, w) {
			t.Errorf("problems lack %q:\n%s", w, joined)
		}
	}
}
