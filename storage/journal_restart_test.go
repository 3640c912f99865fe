package storage

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/storage/fsys"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// journalCounts counts a store's journaled groups and entries.
type journalCounts struct{ groups, entries atomic.Int64 }

// openCounted opens /data on fs and idx with a journal, waits for its
// files to be filled and counts what it journals.
func openCounted(t *testing.T, fs FS, idx *vfs.MemFS) (*Store, *journalCounts) {
	t.Helper()
	c := new(journalCounts)
	s, err := Open("/data", Options{FS: fs, PebbleFS: idx, JournalBytes: 1 << 20,
		OnCommit: func(st CommitStats) {
			if st.Journaled {
				c.groups.Add(1)
				c.entries.Add(int64(st.Entries))
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	waitJournalFilled(t, s)
	return s, c
}

// leadingEpochs returns the epoch of the pass at the start of each
// journal file as synced (0: none).
func leadingEpochs(m *vfstest.MemFS) (out [2]uint64) {
	for i, name := range journalNames {
		out[i], _ = readJournalPass(m.SyncedData(filepath.Join("/data/segments", name)))
	}
	return out
}

// TestJournalKeptAcrossRestarts: the journal files keep their size
// across Close and Open, and stale passes never count again. A clean
// Close leaves nothing to write back; a pass after a restart has an
// epoch above every one the files hold, so a crash writes back exactly
// that pass's frames, never an earlier life's; and an Open that wrote a
// pass back retires it, so the next Open writes back nothing.
func TestJournalKeptAcrossRestarts(t *testing.T) {
	defer func(n int64) { journalFileBytes = n }(journalFileBytes)
	journalFileBytes = 16 << 10
	m := vfstest.NewMachine(0)
	logs := []LogID{1, 2, 3, 4}
	acked := map[LogID]map[Offset][]byte{}
	s, _ := openCounted(t, m.Files, m.Index)
	if err := s.CreateLogs(logs...); err != nil {
		t.Fatal(err)
	}
	// A first life: several passes, so both files hold epochs.
	writeRounds(t, s, logs, 120, "first", acked)
	before := leadingEpochs(m.Files)
	if before[0] == 0 || before[1] == 0 {
		t.Fatalf("the first life did not write both journal files: epochs %v", before)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range journalNames {
		if n := m.Files.SyncedSize(filepath.Join("/data/segments", name)); n != journalFileBytes {
			t.Fatalf("%s is %d bytes after Close, want %d (kept)", name, n, journalFileBytes)
		}
	}
	s, c := openCounted(t, m.Files, m.Index)
	if s.journalReplayed != 0 {
		t.Fatalf("Open after a clean Close wrote back %d frames", s.journalReplayed)
	}
	// A second life, shorter than a pass, then a crash.
	writeRounds(t, s, logs, 6, "second", acked)
	if c.groups.Load() == 0 {
		t.Fatal("the second life journaled nothing")
	}
	after := leadingEpochs(m.Files)
	if after[0] <= max(before[0], before[1]) {
		t.Fatalf("a pass after the restart has epoch %d, not above the files' %v", after[0], before)
	}
	img := m.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
	_ = s.Close()
	s3, err := Open("/data", Options{FS: img.Files, PebbleFS: img.Index, JournalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s3.journalReplayed, int(c.entries.Load()); got != want {
		t.Fatalf("Open after the crash wrote back %d frames, want the second life's %d", got, want)
	}
	checkAcked(t, s3, acked)
	// A crash right after that Open: its write-back retired the pass.
	waitJournalFilled(t, s3)
	m3 := &vfstest.Machine{Files: img.Files, Index: img.Index}
	img3 := m3.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
	_ = s3.Close()
	s4, err := Open("/data", Options{FS: img3.Files, PebbleFS: img3.Index, JournalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s4.Close()
	if s4.journalReplayed != 0 {
		t.Fatalf("Open after an Open that wrote the journal back wrote back %d frames again", s4.journalReplayed)
	}
	checkAcked(t, s4, acked)
}

// holdFillFS is a MemFS whose writes of zeros (the filler's: 1 KiB or
// more) to the journal files wait for release, but for the first one
// (Open's first chunk).
type holdFillFS struct {
	*vfstest.MemFS
	release chan struct{}
	fills   atomic.Int64
}

func (h *holdFillFS) OpenFile(name string, flag int, perm uint32) (fsys.File, error) {
	f, err := h.MemFS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".jnl") {
		return f, err
	}
	return &holdFillFile{File: f, h: h}, nil
}

type holdFillFile struct {
	fsys.File
	h *holdFillFS
}

func (f *holdFillFile) WriteAt(p []byte, off int64) (int, error) {
	if len(p) >= 1<<10 && bytes.Count(p, []byte{0}) == len(p) && f.h.fills.Add(1) > 1 {
		<-f.h.release
	}
	return f.File.WriteAt(p, off)
}

// TestJournalWaitsForFill: a pass writes a journal file only where the
// filler has written and synced its zeros. Open fills the first chunk;
// the filler is then held, and a group beyond that chunk waits for it
// (no entry of it is acknowledged meanwhile); once it is released the
// groups are journaled, and a crash loses nothing acknowledged (a record
// written past the filled part would be zeroed by the filler).
func TestJournalWaitsForFill(t *testing.T) {
	defer func(n, c int64) { journalFileBytes, journalFillChunk = n, c }(journalFileBytes, journalFillChunk)
	journalFileBytes, journalFillChunk = 16<<10, 2<<10
	waiting := make(chan struct{}, 1)
	awaitFillHook = func() { signal(waiting) }
	defer func() { awaitFillHook = nil }()
	m := vfstest.NewMachine(0)
	h := &holdFillFS{MemFS: m.Files, release: make(chan struct{})}
	c := new(journalCounts)
	s, err := Open("/data", Options{FS: h, PebbleFS: m.Index, JournalBytes: 1 << 20,
		OnCommit: func(st CommitStats) {
			if st.Journaled {
				c.groups.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	logs := []LogID{1, 2, 3, 4}
	if err := s.CreateLogs(logs...); err != nil {
		t.Fatal(err)
	}
	acked := map[LogID]map[Offset][]byte{}
	wrote := make(chan error, 1)
	go func() { wrote <- writeRoundsErr(s, logs, 20, "unfilled", acked) }()
	var werr error
	select {
	case <-waiting: // the committer waits for the held filler
		close(h.release)
		werr = <-wrote
	case werr = <-wrote: // all 20 rounds done within the first chunk, or past it unfilled
		close(h.release)
	}
	if werr != nil {
		t.Fatal(werr)
	}
	waitJournalFilled(t, s)
	if c.groups.Load() == 0 {
		t.Fatal("nothing journaled")
	}
	before := c.groups.Load()
	writeRounds(t, s, logs, 20, "filled", acked)
	if c.groups.Load() == before {
		t.Fatal("nothing journaled once the journal files were filled")
	}
	checkAckedAfterCrash(t, m, s, Options{JournalBytes: 1 << 20}, acked)
}

// TestJournalSwitchWaitsForCheckpoint: a pass that ends while the other
// file's previous pass is still being checkpointed waits for that
// checkpoint (and hurries it), instead of committing its groups without
// the journal, an fdatasync per file. The first checkpoint is held until
// the committer waits for it; every group of two files or more is then
// journaled, and a crash loses nothing acknowledged.
func TestJournalSwitchWaitsForCheckpoint(t *testing.T) {
	defer func(n int64) { journalFileBytes = n }(journalFileBytes)
	journalFileBytes = 4 << 10
	release, waiting := make(chan struct{}), make(chan struct{}, 1)
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	defer releaseAll()
	checkpointHook = func() { <-release }
	awaitCheckpointHook = func() { signal(waiting) }
	defer func() { checkpointHook, awaitCheckpointHook = nil, nil }()
	m := vfstest.NewMachine(0)
	var c multiCounts
	s, err := Open("/data", Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: 1 << 20, OnCommit: c.onCommit})
	if err != nil {
		t.Fatal(err)
	}
	waitJournalFilled(t, s)
	logs := []LogID{1, 2, 3, 4}
	if err := s.CreateLogs(logs...); err != nil {
		t.Fatal(err)
	}
	acked := map[LogID]map[Offset][]byte{}
	wrote := make(chan error, 1)
	go func() { wrote <- writeRoundsErr(s, logs, 60, "passes", acked) }()
	var werr error
	waited := false
	select {
	case <-waiting: // the second pass's end waits for the held checkpoint
		waited = true
		releaseAll()
		werr = <-wrote
	case werr = <-wrote:
		releaseAll()
	}
	if werr != nil {
		t.Fatal(werr)
	}
	if n, j := c.multi.Load(), c.journaled.Load(); n == 0 || j != n {
		t.Fatalf("%d of %d groups of two files or more journaled, want all", j, n)
	}
	if !waited {
		t.Fatal("no pass ended during the held checkpoint")
	}
	checkAckedAfterCrash(t, m, s, Options{JournalBytes: 1 << 20}, acked)
}

// TestCheckpointPaced: a checkpoint of a passed pass syncs its files one
// at a time while it keeps ahead of the next pass (syncAll). The first
// checkpoint is held until the pass has ended and nothing more is
// written; it then must never have two syncs in place in flight.
func TestCheckpointPaced(t *testing.T) {
	defer func(n int64) { journalFileBytes = n }(journalFileBytes)
	journalFileBytes = 64 << 10
	armed := make(chan struct{})
	var once sync.Once
	arm := func() { once.Do(func() { close(armed) }) }
	defer arm()
	checkpointHook = func() { <-armed }
	defer func() { checkpointHook = nil }()
	m := vfstest.NewMachine(0)
	cs := &concSyncFS{MemFS: m.Files}
	s, err := Open("/data", Options{FS: cs, PebbleFS: m.Index, JournalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	waitJournalFilled(t, s)
	var logs []LogID
	for i := 1; i <= 32; i++ {
		logs = append(logs, LogID(i))
	}
	if err := s.CreateLogs(logs...); err != nil {
		t.Fatal(err)
	}
	acked := map[LogID]map[Offset][]byte{}
	for r := 0; s.j.cur == 0; r++ {
		if r == 10000 {
			t.Fatal("the first pass did not end")
		}
		writeRounds(t, s, logs, 1, "paced", acked)
	}
	cs.max.Store(0)
	cs.on.Store(true)
	arm()
	for deadline := time.Now().Add(time.Minute); ; runtime.Gosched() {
		if passed, _ := s.j.passedState(); !passed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first pass was not checkpointed within a minute")
		}
	}
	if n := cs.max.Load(); n != 1 {
		t.Fatalf("the checkpoint had up to %d syncs in place in flight, want 1", n)
	}
	checkAckedAfterCrash(t, m, s, Options{JournalBytes: 1 << 20}, acked)
}

// concSyncFS is a MemFS that counts, once on, the most syncs of segment
// files (not the journal's) in flight at once.
type concSyncFS struct {
	*vfstest.MemFS
	on       atomic.Bool
	cur, max atomic.Int64
}

func (c *concSyncFS) OpenFile(name string, flag int, perm uint32) (fsys.File, error) {
	f, err := c.MemFS.OpenFile(name, flag, perm)
	if err != nil || strings.HasSuffix(name, ".jnl") {
		return f, err
	}
	return &concSyncFile{File: f, c: c}, nil
}

type concSyncFile struct {
	fsys.File
	c *concSyncFS
}

func (f *concSyncFile) Sync() error {
	if !f.c.on.Load() {
		return f.File.Sync()
	}
	n := f.c.cur.Add(1)
	defer f.c.cur.Add(-1)
	for m := f.c.max.Load(); n > m && !f.c.max.CompareAndSwap(m, n); m = f.c.max.Load() {
	}
	time.Sleep(100 * time.Microsecond) // widen the window for a second sync
	return f.File.Sync()
}
