package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/kgateway/kgateway/storage/fsys"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// fsSyncFS is a MemFS that counts its file-system syncs and holds every
// Sync of one log's files until released, so that a test can queue the
// entries of many logs behind that log's group commit: the next group
// then writes to all of them.
type fsSyncFS struct {
	*vfstest.MemFS
	log     LogID
	entered chan struct{}
	release chan struct{}
	syncs   atomic.Int64
}

func newFSSyncFS(mem *vfstest.MemFS, log LogID) *fsSyncFS {
	return &fsSyncFS{MemFS: mem, log: log, entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (h *fsSyncFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := h.MemFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if l, _, ok := parseSegmentFileName(filepath.Base(name)); ok && l == h.log {
		return &fsSyncHeld{File: f, h: h}, nil
	}
	return f, nil
}

func (h *fsSyncFS) OpenFileSystemSync(dir string) (fsys.FileSystemSync, error) {
	s, err := h.MemFS.OpenFileSystemSync(dir)
	if err != nil {
		return nil, err
	}
	return &countedFSSync{FileSystemSync: s, n: &h.syncs}, nil
}

type countedFSSync struct {
	fsys.FileSystemSync
	n *atomic.Int64
}

func (c *countedFSSync) Sync() error {
	c.n.Add(1)
	return c.FileSystemSync.Sync()
}

type fsSyncHeld struct {
	File
	h *fsSyncFS
}

func (f *fsSyncHeld) Sync() error {
	f.h.entered <- struct{}{}
	<-f.h.release
	return f.File.Sync()
}

// groupOfMany appends to log 1 and, while its group commit's sync is
// held, writes one entry to each of logs 2..n+1; once released, those n
// entries are one group commit of n files. It returns their pendings.
func groupOfMany(t *testing.T, s *Store, h *fsSyncFS, n int) (first *Pending, many []*Pending) {
	t.Helper()
	ids := []LogID{1}
	for i := range n {
		ids = append(ids, LogID(2+i))
	}
	if err := s.CreateLogs(ids...); err != nil {
		t.Fatal(err)
	}
	first, err := s.Write(1, 1, []byte("first"), AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-h.entered
	for _, id := range ids[1:] {
		p, err := s.Write(id, 1, []byte(fmt.Sprintf("entry of %d", id)), AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		many = append(many, p)
	}
	close(h.release)
	return first, many
}

// TestFileSystemSyncMakesGroupDurable: a group commit that wrote to
// SyncFSFiles files or more syncs their file system once instead of each
// file, and every entry it acknowledged survives a crash that keeps only
// what was synced.
func TestFileSystemSyncMakesGroupDurable(t *testing.T) {
	m := vfstest.NewMachine(0)
	h := newFSSyncFS(m.Files, 1)
	var mu sync.Mutex
	var files []int
	s := newStore(t, "/data", Options{FS: h, PebbleFS: m.Index, SyncFSFiles: 4, OnCommit: func(st CommitStats) {
		mu.Lock()
		files = append(files, st.Files)
		mu.Unlock()
	}})
	first, many := groupOfMany(t, s, h, 11)
	for _, p := range append([]*Pending{first}, many...) {
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	t.Logf("files per group commit: %v", files)
	mu.Unlock()
	if h.syncs.Load() == 0 {
		t.Fatal("no group commit synced its file system")
	}
	img := m.Crash(vfstest.PebbleFirst, vfstest.SyncedOnly)
	_ = s.Close()
	s2 := newStore(t, "/data", Options{FS: img.Files, PebbleFS: img.Index})
	defer s2.Close()
	for i := range many {
		id := LogID(2 + i)
		got, err := s2.ReadEntries(id, 0, 1, 0)
		if err != nil || len(got) != 1 || string(got[0].Payload) != fmt.Sprintf("entry of %d", id) {
			t.Fatalf("log %d: acknowledged entry after the crash: %v %v", id, got, err)
		}
	}
}

// TestFileSystemSyncFailureFailsGroup: a file-system sync's error may be
// any file's, so it fails every log of its group, none of whose entries
// is acknowledged; a smaller group's fdatasyncs are not affected by it.
func TestFileSystemSyncFailureFailsGroup(t *testing.T) {
	h := newFSSyncFS(vfstest.NewMemFS(), 1)
	ffs := vfstest.NewFaultFS(h)
	s := newStore(t, t.TempDir(), Options{FS: ffs, SyncFSFiles: 4})
	defer s.Close()
	// A write-back error of a file no group wrote: fdatasync of the
	// group's own files would not see it, syncfs does.
	ffs.FailSync("some-other-file", syscall.EIO)
	first, many := groupOfMany(t, s, h, 11)
	if err := first.Wait(); err != nil {
		t.Fatalf("one-file group, synced by fdatasync: %v", err)
	}
	for i, p := range many {
		if err := p.Wait(); !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.EIO) {
			t.Fatalf("log %d: entry of a group whose syncfs failed answered %v", 2+i, err)
		}
	}
	if h.syncs.Load() != 0 {
		t.Fatalf("the failing file-system sync reached the disk (%d syncs)", h.syncs.Load())
	}
	if _, err := s.Append(2, 1, []byte("after"), AppendOptions{}); !errors.Is(err, ErrFailed) {
		t.Fatalf("append to a log failed by syncfs: %v", err)
	}
}
