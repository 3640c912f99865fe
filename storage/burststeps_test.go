package storage

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// unsyncedFS records, for one log's segment files, the most bytes written
// and not yet synced at any moment (a Sync covers every write before it),
// and can fail their syncs.
type unsyncedFS struct {
	FS
	log LogID
	mu  sync.Mutex
	// pending: written since the last sync; most: pending's maximum.
	pending, most int
	syncs         int
	failSync      error
}

func (u *unsyncedFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := u.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if l, _, ok := parseSegmentFileName(filepath.Base(name)); ok && l == u.log {
		return &unsyncedFile{File: f, u: u}, nil
	}
	return f, nil
}

// reset forgets what was recorded, once everything written is synced.
func (u *unsyncedFS) reset() (most, syncs int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	most, syncs = u.most, u.syncs
	u.pending, u.most, u.syncs = 0, 0, 0
	return most, syncs
}

type unsyncedFile struct {
	File
	u *unsyncedFS
}

func (f *unsyncedFile) WriteAt(p []byte, off int64) (int, error) {
	f.u.mu.Lock()
	f.u.pending += len(p)
	f.u.most = max(f.u.most, f.u.pending)
	f.u.mu.Unlock()
	return f.File.WriteAt(p, off)
}

func (f *unsyncedFile) Sync() error {
	f.u.mu.Lock()
	err := f.u.failSync
	if err == nil {
		f.u.pending = 0
		f.u.syncs++
	}
	f.u.mu.Unlock()
	if err != nil {
		return err
	}
	return f.File.Sync()
}

const testStep = 1024

func newStepStore(t *testing.T) (*Store, *unsyncedFS) {
	t.Helper()
	u := &unsyncedFS{FS: vfstest.NewMemFS(), log: 1}
	s := newStore(t, "/d", Options{FS: u, PebbleFS: vfs.NewMem(), BulkEntryBytes: 1024, BulkStepBytes: testStep})
	_, _ = s.CreateLog(1), s.CreateLog(2)
	return s, u
}

func appendWait(t *testing.T, s *Store, id LogID, n int) {
	t.Helper()
	if err := write(t, s, id, n).Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestBurstWrittenInSteps: a large entry written while another log writes
// in the main lane never has more than a step of its bytes (with the frame
// header) written and unsynced: each step is synced before the next is
// written (doc.go "Burst steps").
func TestBurstWrittenInSteps(t *testing.T) {
	s, u := newStepStore(t)
	defer s.Close()
	appendWait(t, s, 1, 100)
	u.reset()
	appendWait(t, s, 2, 100) // another log writes in the main lane
	appendWait(t, s, 1, 10*testStep)
	most, syncs := u.reset()
	if most > testStep+frameHeaderLen || syncs < 10 {
		t.Fatalf("burst beside another log's writes: %d bytes unsynced at most, %d syncs; want at most %d, at least 10",
			most, syncs, testStep+frameHeaderLen)
	}
	// Nothing of another log since: the next large entry goes in one go.
	appendWait(t, s, 1, 10*testStep)
	if most, syncs := u.reset(); most != 10*testStep+frameHeaderLen || syncs != 1 {
		t.Fatalf("burst with no other log writing: %d bytes unsynced at most, %d syncs; want %d in one go, 1 sync",
			most, syncs, 10*testStep+frameHeaderLen)
	}
}

// TestBurstStepsOffByDefault: without BulkStepBytes a large entry is
// written in one go, whoever else writes.
func TestBurstStepsOffByDefault(t *testing.T) {
	u := &unsyncedFS{FS: vfstest.NewMemFS(), log: 1}
	s := newStore(t, "/d", Options{FS: u, PebbleFS: vfs.NewMem(), BulkEntryBytes: 1024})
	defer s.Close()
	_, _ = s.CreateLog(1), s.CreateLog(2)
	appendWait(t, s, 2, 100)
	appendWait(t, s, 1, 10*testStep)
	if most, syncs := u.reset(); most != 10*testStep+frameHeaderLen || syncs != 1 {
		t.Fatalf("%d bytes unsynced at most, %d syncs; want one go", most, syncs)
	}
}

// TestBurstStepSyncFailureFailsLog: a failed sync between steps fails the
// log (as a failed group commit's fdatasync does): the write is refused
// and so is the next.
func TestBurstStepSyncFailureFailsLog(t *testing.T) {
	s, u := newStepStore(t)
	defer s.Close()
	appendWait(t, s, 1, 100)
	appendWait(t, s, 2, 100)
	injected := errors.New("injected sync failure")
	u.mu.Lock()
	u.failSync = injected
	u.mu.Unlock()
	if _, err := s.Write(1, 1, make([]byte, 10*testStep), AppendOptions{}); !errors.Is(err, ErrFailed) || !errors.Is(err, injected) {
		t.Fatalf("write with a failed step sync: %v; want ErrFailed and the cause", err)
	}
	if _, err := s.Write(1, 1, make([]byte, 10), AppendOptions{}); !errors.Is(err, ErrFailed) {
		t.Fatalf("next write to the failed log: %v; want ErrFailed", err)
	}
	appendWait(t, s, 2, 100) // other logs go on
}
