package storage

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage/vfstest"
)

// writeSpread writes one small entry to each log and waits for all of
// them, until a group commit was journaled; it returns every payload by
// log and offset.
func writeSpread(t *testing.T, s *Store, logs []LogID, journaled *atomic.Int64) map[LogID]map[Offset][]byte {
	t.Helper()
	acked := map[LogID]map[Offset][]byte{}
	for _, id := range logs {
		acked[id] = map[Offset][]byte{}
	}
	for round := 0; journaled.Load() == 0; round++ {
		if round == 100 {
			t.Fatal("no group commit was journaled")
		}
		var ps []*Pending
		var payloads [][]byte
		for _, id := range logs {
			p := []byte(fmt.Sprintf("log %v round %d", id, round))
			pd, err := s.Write(id, 1, p, AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ps, payloads = append(ps, pd), append(payloads, p)
		}
		for i, pd := range ps {
			if err := pd.Wait(); err != nil {
				t.Fatal(err)
			}
			acked[pd.log.id][pd.Header().Offset] = payloads[i]
		}
	}
	return acked
}

// TestJournaledCommitWrittenBack: an entry acknowledged by a journaled
// group commit (I15) survives a crash that keeps nothing unsynced of its
// file: Open writes its frame back from the journal. The test checks
// that some acknowledged frame was indeed not synced in its file.
func TestJournaledCommitWrittenBack(t *testing.T) {
	defer func(d time.Duration) { journalIdle = d }(journalIdle)
	journalIdle = time.Hour // no checkpoint before the crash
	m := vfstest.NewMachine(0)
	s, journaled := openJournaled(t, m)
	logs := []LogID{1, 2, 3, 4, 5, 6, 7, 8}
	for _, id := range logs {
		if err := s.CreateLog(id); err != nil {
			t.Fatal(err)
		}
	}
	acked := writeSpread(t, s, logs, journaled)
	unsynced := 0
	for _, id := range logs {
		info, _ := s.Info(id)
		name := filepath.Join(s.segDir, SegmentFileName(id, info.Ledgers[len(info.Ledgers)-1].ID))
		h, err := s.Floor(id, info.End-1)
		if err != nil {
			t.Fatal(err)
		}
		if m.Files.SyncedSize(name) < h.Pos+frameHeaderLen+int64(h.Size) {
			unsynced++
		}
	}
	if unsynced == 0 {
		t.Fatal("every acknowledged frame is synced in its file: nothing to write back")
	}
	img := m.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
	_ = s.Close()
	s2, err := Open("/data", Options{FS: img.Files, PebbleFS: img.Index})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	checkAcked(t, s2, acked)
}

// TestJournalCheckpoint: a checkpoint syncs the journaled files in place
// and deletes their frames from the journal; a crash after it loses
// nothing acknowledged.
func TestJournalCheckpoint(t *testing.T) {
	defer func(d time.Duration) { journalIdle = d }(journalIdle)
	journalIdle = time.Hour
	m := vfstest.NewMachine(0)
	s, journaled := openJournaled(t, m)
	logs := []LogID{1, 2, 3}
	for _, id := range logs {
		if err := s.CreateLog(id); err != nil {
			t.Fatal(err)
		}
	}
	acked := writeSpread(t, s, logs, journaled)
	s.j.checkpoint()
	n := 0
	if err := s.Keyspace(func(k, _ []byte) error {
		if k[0] == prefixJournal {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d journaled frames left after a checkpoint", n)
	}
	for _, id := range logs {
		info, _ := s.Info(id)
		name := filepath.Join(s.segDir, SegmentFileName(id, info.Ledgers[len(info.Ledgers)-1].ID))
		h, _ := s.Floor(id, info.End-1)
		if end := h.Pos + frameHeaderLen + int64(h.Size); m.Files.SyncedSize(name) < end {
			t.Fatalf("%v: synced to %d after a checkpoint, entries end at %d", id, m.Files.SyncedSize(name), end)
		}
	}
	img := m.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
	_ = s.Close()
	s2, err := Open("/data", Options{FS: img.Files, PebbleFS: img.Index})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	checkAcked(t, s2, acked)
}

func checkAcked(t *testing.T, s *Store, acked map[LogID]map[Offset][]byte) {
	t.Helper()
	for id, want := range acked {
		got, err := s.ReadEntries(id, 0, 0, 0)
		if err != nil {
			t.Fatalf("%v: read: %v", id, err)
		}
		have := map[Offset][]byte{}
		for _, e := range got {
			have[e.Offset] = e.Payload
		}
		for off, p := range want {
			if !bytes.Equal(have[off], p) {
				t.Fatalf("%v: acknowledged entry %v lost or changed: %q, want %q", id, off, have[off], p)
			}
		}
	}
}

// TestFirstWritesDirSynced: the first write to a new log creates its
// file without a directory sync of its own (I1, openLedgerFile's lazy);
// the group commit that takes it syncs the directory before any of its
// entries is acknowledged, so a crash that keeps only synced directory
// entries loses none of them.
func TestFirstWritesDirSynced(t *testing.T) {
	for _, journal := range []int{0, 1 << 20} {
		m := vfstest.NewMachine(0)
		s, err := Open("/data", Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: journal})
		if err != nil {
			t.Fatal(err)
		}
		var logs []LogID
		for id := LogID(1); id <= 16; id++ {
			logs = append(logs, id)
		}
		if err := s.CreateLogs(logs...); err != nil {
			t.Fatal(err)
		}
		acked := map[LogID]map[Offset][]byte{}
		var ps []*Pending
		for _, id := range logs {
			p := []byte(fmt.Sprintf("first entry of %v", id))
			pd, err := s.Write(id, 1, p, AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, pd)
			acked[id] = map[Offset][]byte{pd.Header().Offset: p}
		}
		for _, pd := range ps {
			if err := pd.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		img := m.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
		_ = s.Close()
		s2, err := Open("/data", Options{FS: img.Files, PebbleFS: img.Index})
		if err != nil {
			t.Fatal(err)
		}
		checkAcked(t, s2, acked)
		_ = s2.Close()
	}
}

// openJournaled opens a store on m with a journal of 1 MiB per file and
// counts its journaled group commits.
func openJournaled(t *testing.T, m *vfstest.Machine) (*Store, *atomic.Int64) {
	t.Helper()
	journaled := new(atomic.Int64)
	s, err := Open("/data", Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: 1 << 20,
		OnCommit: func(st CommitStats) {
			if st.Journaled {
				journaled.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	return s, journaled
}
