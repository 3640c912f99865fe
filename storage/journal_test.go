package storage

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage/fsys"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// writeSpread writes one small entry to each log and waits for all of
// them, until a group commit was journaled; it returns every payload by
// log and offset.
func writeSpread(t *testing.T, s *Store, logs []LogID, journaled *atomic.Int64) map[LogID]map[Offset][]byte {
	t.Helper()
	acked := map[LogID]map[Offset][]byte{}
	for round := 0; journaled.Load() == 0; round++ {
		if round == 100 {
			t.Fatal("no group commit was journaled")
		}
		writeRounds(t, s, logs, 1, fmt.Sprintf("spread %d", round), acked)
	}
	return acked
}

// writeRounds writes rounds rounds of one entry to each log, waiting for
// each round, and records them in acked.
func writeRounds(t *testing.T, s *Store, logs []LogID, rounds int, tag string, acked map[LogID]map[Offset][]byte) {
	t.Helper()
	if err := writeRoundsErr(s, logs, rounds, tag, acked); err != nil {
		t.Fatal(err)
	}
}

// writeRoundsErr is writeRounds for a goroutine other than the test's.
func writeRoundsErr(s *Store, logs []LogID, rounds int, tag string, acked map[LogID]map[Offset][]byte) error {
	for r := 0; r < rounds; r++ {
		var ps []*Pending
		var payloads [][]byte
		for _, id := range logs {
			p := []byte(fmt.Sprintf("%s: log %v round %d", tag, id, r))
			pd, err := s.Write(id, 1, p, AppendOptions{})
			if err != nil {
				return err
			}
			ps, payloads = append(ps, pd), append(payloads, p)
		}
		if err := waitAcked(ps, payloads, acked); err != nil {
			return err
		}
	}
	return nil
}

// waitAcked waits for the entries ps, written with payloads, and records
// them in acked.
func waitAcked(ps []*Pending, payloads [][]byte, acked map[LogID]map[Offset][]byte) error {
	for i, pd := range ps {
		if err := pd.Wait(); err != nil {
			return err
		}
		if acked[pd.log.id] == nil {
			acked[pd.log.id] = map[Offset][]byte{}
		}
		acked[pd.log.id][pd.Header().Offset] = payloads[i]
	}
	return nil
}

// TestJournaledCommitWrittenBack: an entry acknowledged by a journaled
// group commit (I15) survives a crash that keeps nothing unsynced of its
// file: Open writes its frame back from the journal. The test checks
// that some acknowledged frame was indeed not synced in its file.
func TestJournaledCommitWrittenBack(t *testing.T) {
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

// TestJournalCheckpoint: a checkpoint syncs the journaled files in place;
// a crash after it loses nothing acknowledged.
func TestJournalCheckpoint(t *testing.T) {
	m := vfstest.NewMachine(0)
	s, journaled := openJournaled(t, m)
	logs := []LogID{1, 2, 3}
	for _, id := range logs {
		if err := s.CreateLog(id); err != nil {
			t.Fatal(err)
		}
	}
	acked := writeSpread(t, s, logs, journaled)
	s.j.checkpointAll()
	s.j.mu.Lock()
	n := len(s.j.mu.touched) + len(s.j.mu.passed)
	s.j.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d files still to checkpoint after a checkpoint", n)
	}
	for _, id := range logs {
		info, _ := s.Info(id)
		name := filepath.Join(s.segDir, SegmentFileName(id, info.Ledgers[len(info.Ledgers)-1].ID))
		h, _ := s.Floor(id, info.End-1)
		if end := h.Pos + frameHeaderLen + int64(h.Size); m.Files.SyncedSize(name) < end {
			t.Fatalf("%v: synced to %d after a checkpoint, entries end at %d", id, m.Files.SyncedSize(name), end)
		}
	}
	checkAckedAfterCrash(t, m, s, Options{}, acked)
}

// checkAckedAfterCrash crashes m keeping only what was synced, closes s,
// opens the crashed image with opts and checks every acknowledged entry.
func checkAckedAfterCrash(t *testing.T, m *vfstest.Machine, s *Store, opts Options, acked map[LogID]map[Offset][]byte) {
	t.Helper()
	img := m.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
	_ = s.Close()
	opts.FS, opts.PebbleFS = img.Files, img.Index
	s2, err := Open("/data", opts)
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
		writeRounds(t, s, logs, 1, "first entry", acked)
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
	waitJournalFilled(t, s)
	return s, journaled
}

// waitJournalFilled asks the filler for both journal files whole and
// waits until they are filled (journalfill.go): until then a group may be
// synced per file.
func waitJournalFilled(t *testing.T, s *Store) {
	t.Helper()
	s.j.raiseFill(0, journalFileBytes)
	s.j.raiseFill(1, journalFileBytes)
	select {
	case <-s.j.fillDone:
	case <-time.After(time.Minute):
		t.Fatal("the journal files were not filled within a minute")
	}
}

// TestJournalPassKeptUntilCheckpointed: a journal file is written over
// only once every file its previous pass journaled frames of was synced
// in place (I15). One log's checkpoint sync fails, so its pass is never
// checkpointed; the other logs go on writing for several passes. A crash
// that keeps nothing unsynced must still find that log's acknowledged
// entries in the journal, and so must a crash after Close: Close keeps
// a journal whose checkpoint failed.
func TestJournalPassKeptUntilCheckpointed(t *testing.T) {
	defer func(n int64) { journalFileBytes = n }(journalFileBytes)
	journalFileBytes = 4 << 10
	m := vfstest.NewMachine(0)
	h := &holdStepFS{MemFS: m.Files, held: make(chan struct{}), release: make(chan struct{})}
	ffs := vfstest.NewFaultFS(h)
	journaled := new(atomic.Int64)
	s, err := Open("/data", Options{FS: ffs, PebbleFS: m.Index, JournalBytes: 1 << 20,
		OnCommit: func(st CommitStats) {
			if st.Journaled {
				journaled.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	waitJournalFilled(t, s)
	logs := []LogID{1, 2, 3}
	if err := s.CreateLogs(logs...); err != nil {
		t.Fatal(err)
	}
	info, _ := s.Info(1)
	ffs.FailSync(SegmentFileName(1, info.Ledgers[0].ID), fmt.Errorf("injected"))
	// Log 1's entry must go in a group with another file's, which is
	// journaled: alone it would be synced in place, and fail there.
	acked := writeGrouped(t, s, h, logs)
	if journaled.Load() == 0 {
		t.Fatal("a group of three files was not journaled")
	}
	// Log 1 fails at its checkpoint; the others fill the journal's two
	// files several times over (each round is a group of two files).
	for round := 0; round < 200; round++ {
		var ps []*Pending
		for _, id := range logs[1:] {
			p := []byte(fmt.Sprintf("log %v round %d of many", id, round))
			pd, err := s.Write(id, 1, p, AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, pd)
			acked[id][pd.Header().Offset] = p
		}
		for _, pd := range ps {
			if err := pd.Wait(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The checkpoint runs in the background: wait for its failed sync.
	for deadline := time.Now().Add(time.Minute); !logFailed(s, 1); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint of log 1's pass within a minute")
		}
	}
	if _, err := s.Write(1, 1, []byte("after"), AppendOptions{}); !errors.Is(err, ErrFailed) {
		t.Fatalf("log 1 after its failed checkpoint sync: %v, want ErrFailed", err)
	}
	img := m.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
	// Close must not empty the journal either: log 1's frames are still
	// unsynced in its file.
	_ = s.Close()
	closed := m.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
	for _, img := range []vfstest.Image{img, closed} {
		s2, err := Open("/data", Options{FS: img.Files, PebbleFS: img.Index})
		if err != nil {
			t.Fatal(err)
		}
		checkAcked(t, s2, acked)
		_ = s2.Close()
	}
}

// holdStepFS is a MemFS whose committer, once armed, waits at its next
// StepWritten until released, so that the writes issued meanwhile are
// taken together as the next group.
type holdStepFS struct {
	*vfstest.MemFS
	armed         atomic.Bool
	held, release chan struct{}
}

func (h *holdStepFS) Step(st fsys.Step) {
	h.MemFS.Step(st)
	if st == fsys.StepWritten && h.armed.Swap(false) {
		h.held <- struct{}{}
		<-h.release
	}
}

// writeGrouped writes one entry to each of logs as one group commit: a
// first entry to the last log is held at its StepWritten while the
// others are written, then released. It waits for every entry and
// returns the payloads by log and offset.
func writeGrouped(t *testing.T, s *Store, h *holdStepFS, logs []LogID) map[LogID]map[Offset][]byte {
	t.Helper()
	acked := map[LogID]map[Offset][]byte{}
	write := func(id LogID, p []byte) *Pending {
		pd, err := s.Write(id, 1, p, AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return pd
	}
	h.armed.Store(true)
	last := logs[len(logs)-1]
	ps := []*Pending{write(last, []byte("held"))}
	payloads := [][]byte{[]byte("held")}
	<-h.held
	for _, id := range logs {
		acked[id] = map[Offset][]byte{}
		p := []byte(fmt.Sprintf("log %v grouped", id))
		ps, payloads = append(ps, write(id, p)), append(payloads, p)
	}
	h.release <- struct{}{}
	for i, pd := range ps {
		if err := pd.Wait(); err != nil {
			t.Fatal(err)
		}
		acked[pd.log.id][pd.Header().Offset] = payloads[i]
	}
	return acked
}

// logFailed says whether log id has failed.
func logFailed(s *Store, id LogID) bool {
	s.mu.Lock()
	l := s.mu.logs[id]
	s.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.failed != nil
}

// holdDirFS is a MemFS whose next SyncDir of dir, once armed, waits for
// release (after closing held).
type holdDirFS struct {
	*vfstest.MemFS
	dir           string
	armed         atomic.Bool
	held, release chan struct{}
}

func (h *holdDirFS) SyncDir(name string) error {
	if filepath.Clean(name) == h.dir && h.armed.Swap(false) {
		close(h.held)
		<-h.release
	}
	return h.MemFS.SyncDir(name)
}

// TestLanesWaitForDirSync: with the bulk lane, both lanes may take the
// first entry of a new file at once; the lane that finds the directory
// sync (I1) already started by the other must wait for it to end before
// it indexes or acknowledges anything.
func TestLanesWaitForDirSync(t *testing.T) {
	m := vfstest.NewMachine(0)
	h := &holdDirFS{MemFS: m.Files, dir: "/data/segments", held: make(chan struct{}), release: make(chan struct{})}
	s, err := Open("/data", Options{FS: h, PebbleFS: m.Index, BulkEntryBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateLogs(1, 2); err != nil {
		t.Fatal(err)
	}
	// Each lane stops after its write until both entries are written, so
	// that both files exist before either lane syncs the directory.
	both := make(chan struct{})
	m.Files.SetHook(func(p vfstest.Point) {
		if p == vfstest.AfterWrite {
			<-both
		}
	})
	h.armed.Store(true)
	bulk, err := s.Write(1, 1, make([]byte, 8<<10), AppendOptions{}) // the bulk lane
	if err != nil {
		t.Fatal(err)
	}
	small, err := s.Write(2, 1, []byte("small"), AppendOptions{}) // the main lane
	if err != nil {
		t.Fatal(err)
	}
	if bulk.bulk == small.bulk {
		t.Fatal("both entries in one lane")
	}
	close(both)
	<-h.held // one lane syncs the directory; the other must wait for it
	select {
	case <-bulk.done:
		t.Error("I1: an entry of a new file was acknowledged while the directory sync was still running")
	case <-small.done:
		t.Error("I1: an entry of a new file was acknowledged while the directory sync was still running")
	case <-time.After(500 * time.Millisecond): // the waiting lane had time to go wrong
	}
	close(h.release)
	m.Files.SetHook(nil)
	for _, pd := range []*Pending{bulk, small} {
		if err := pd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}
