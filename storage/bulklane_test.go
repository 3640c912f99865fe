package storage

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// holdFS holds every Sync of one log's segment files until released, and
// says when one starts: a group commit of that log is then in progress.
type holdFS struct {
	FS
	log     LogID
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

// free lets every held Sync finish, now and later.
func (h *holdFS) free() { h.once.Do(func() { close(h.release) }) }

func newHoldFS(log LogID) *holdFS {
	return &holdFS{FS: vfstest.NewMemFS(), log: log, entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (h *holdFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := h.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if l, _, ok := parseSegmentFileName(filepath.Base(name)); ok && l == h.log {
		return &heldFile{File: f, h: h}, nil
	}
	return f, nil
}

type heldFile struct {
	File
	h *holdFS
}

func (f *heldFile) Sync() error {
	f.h.entered <- struct{}{}
	<-f.h.release
	return f.File.Sync()
}

// waitFor fails the test if p is not answered (successfully) within a
// deadline that only a commit stuck behind a held sync misses.
func waitFor(t *testing.T, p *Pending, what string) {
	t.Helper()
	select {
	case <-p.done:
		if p.err != nil {
			t.Fatalf("%s: %v", what, p.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not acknowledged while another log's group commit is held", what)
	}
}

func write(t *testing.T, s *Store, id LogID, n int) *Pending {
	t.Helper()
	p, err := s.Write(id, 1, bytes.Repeat([]byte("x"), n), AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBulkLaneSmallWriteNotBehindBurst: while a log's large entry is being
// group-committed (its fdatasync held), another log's small write is
// committed and acknowledged by the main lane: it neither shares the
// burst's group commit nor queues behind it (doc.go "Bulk lane").
func TestBulkLaneSmallWriteNotBehindBurst(t *testing.T) {
	h := newHoldFS(1)
	s := newStore(t, "/d", Options{FS: h, PebbleFS: vfs.NewMem(), BulkEntryBytes: 1024})
	defer s.Close()
	defer h.free() // before Close, which waits for the held syncs
	_, _ = s.CreateLog(1), s.CreateLog(2)
	burst := write(t, s, 1, 4096)
	<-h.entered // the burst's group commit is syncing, held
	small := write(t, s, 2, 100)
	waitFor(t, small, "small write beside a burst")
	if info, _ := s.Info(1); info.End != 0 {
		t.Fatalf("burst published before its sync: end %d", info.End)
	}
	h.free()
	waitFor(t, burst, "burst")
}

// TestBulkLaneKeepsLogOrder: a log's entries are published in offset
// order whichever lane commits them. Its large entry written while its
// earlier small one is still being committed by the main lane is held
// back until that one is published, and so is its next small entry (back
// in the main lane, its average having dropped) until the large one is;
// meanwhile each lane commits other logs' entries.
func TestBulkLaneKeepsLogOrder(t *testing.T) {
	h := newHoldFS(1)
	s := newStore(t, "/d", Options{FS: h, PebbleFS: vfs.NewMem(), BulkEntryBytes: 1024})
	defer s.Close()
	defer h.free()
	_, _, _ = s.CreateLog(1), s.CreateLog(2), s.CreateLog(3)
	first := write(t, s, 1, 100)
	<-h.entered // the main lane is syncing log 1, held
	burst, after := write(t, s, 1, 4096), write(t, s, 1, 100)
	if !burst.bulk || after.bulk {
		t.Fatalf("lanes: burst bulk %v, the small entry after it bulk %v; want true, false", burst.bulk, after.bulk)
	}
	// Taking log 1's burst now would sync log 1's file (held) and stall
	// the bulk lane: log 3's burst is acknowledged only if it is not.
	waitFor(t, write(t, s, 3, 4096), "another log's burst")
	h.free()
	waitFor(t, after, "entry behind the burst")
	for i, p := range []*Pending{first, burst} {
		select {
		case <-p.done:
		default:
			t.Fatalf("entry %d not answered before a later one", i)
		}
	}
	if info, _ := s.Info(1); info.End != 3 {
		t.Fatalf("log 1 end %d, want 3", info.End)
	}
}

// TestBulkLaneSmallAfterBurstWaits: a log's small entries queued in the
// main lane behind its own burst, still being committed by the bulk lane,
// are not taken before it, while the main lane goes on with other logs.
func TestBulkLaneSmallAfterBurstWaits(t *testing.T) {
	h := newHoldFS(1)
	s := newStore(t, "/d", Options{FS: h, PebbleFS: vfs.NewMem(), BulkEntryBytes: 1024})
	defer s.Close()
	defer h.free()
	_, _ = s.CreateLog(1), s.CreateLog(2)
	burst := write(t, s, 1, 4096)
	<-h.entered // the bulk lane is syncing log 1, held
	small, next := write(t, s, 1, 100), write(t, s, 1, 100)
	if small.bulk || small.after != burst || next.after != nil {
		t.Fatalf("small entries: bulk %v, after the burst %v, next after %v", small.bulk, small.after == burst, next.after)
	}
	// Taking either now would sync log 1's file (held) and stall the
	// main lane: log 2's write is acknowledged only if neither is.
	waitFor(t, write(t, s, 2, 100), "another log's small write")
	h.free()
	waitFor(t, next, "small entries behind their log's burst")
	for i, p := range []*Pending{burst, small} {
		select {
		case <-p.done:
		default:
			t.Fatalf("entry %d answered after a later one", i)
		}
	}
}

// TestBulkLaneOff: without BulkEntryBytes every entry is in the main lane.
func TestBulkLaneOff(t *testing.T) {
	s := newStore(t, "/d", Options{FS: vfstest.NewMemFS(), PebbleFS: vfs.NewMem()})
	defer s.Close()
	_ = s.CreateLog(1)
	p := write(t, s, 1, 4096)
	if err := p.Wait(); err != nil || p.bulk {
		t.Fatalf("err %v, bulk %v", err, p.bulk)
	}
}

// TestBulkLaneByAverageSize: the lane follows a log's average entry size,
// so a bulk producer's smaller batch stays in the bulk lane, and a small
// producer's one larger batch in the main lane.
func TestBulkLaneByAverageSize(t *testing.T) {
	s := newStore(t, "/d", Options{FS: vfstest.NewMemFS(), PebbleFS: vfs.NewMem(), BulkEntryBytes: 1024})
	defer s.Close()
	_, _ = s.CreateLog(1), s.CreateLog(2)
	lanes := func(id LogID, sizes ...int) (bulk []bool) {
		for _, n := range sizes {
			p := write(t, s, id, n)
			if err := p.Wait(); err != nil { // idle before the next: no entry behind a bulk one
				t.Fatal(err)
			}
			bulk = append(bulk, p.bulk)
		}
		return bulk
	}
	if got := lanes(1, 4096, 4096, 4096, 512); !got[0] || !got[3] {
		t.Errorf("bulk producer's lanes %v, want all bulk", got)
	}
	if got := lanes(2, 100, 100, 100, 100, 2048); got[4] {
		t.Errorf("small producer's larger batch in the bulk lane: %v", got)
	}
}
