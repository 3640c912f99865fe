package vfstest

// MemFS: an in-memory FS that remembers what is durable, for crash tests.
//
//	fs := vfstest.NewMemFS()
//	st, _ := storage.Open(dir, storage.Options{FS: fs, PebbleFS: pfs})
//	... writes, some acknowledged ...
//	crashed := fs.Crash(vfstest.CrashConfig{Rand: rng, KeepUnsynced: 50,
//		Tear: true, Reorder: true})
//
// The durable state of a file is its contents at its last Sync. The
// durable state of a directory entry (a file or directory created, removed
// or renamed) is fixed by the next SyncDir of its parent directory. Crash
// returns a new MemFS holding what a machine crash at this instant could
// leave: every directory whose entry is durable (and its parent's, up to
// the root), and in them every file whose entry is durable, with its
// synced contents plus a random subset of the writes issued since
// (CrashConfig). A directory whose entry was never made durable is lost
// with everything in it. The original MemFS keeps working, unaffected.
//
// pebble's side of a crash is vfs.NewCrashableMem() and its CrashClone;
// Machine (crash.go) takes both clones together, at the group commit's
// steps or at any instant.

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kgateway/kgateway/storage/fsys"
)

// CrashConfig says which unsynced writes survive a simulated crash.
type CrashConfig struct {
	// Rand drives every choice; required when KeepUnsynced > 0 or Tear.
	Rand *rand.Rand
	// KeepUnsynced is the percentage (0-100) of unsynced writes that reach
	// the disk. 0 keeps exactly the synced state.
	KeepUnsynced int
	// Reorder lets any subset of unsynced writes survive; without it the
	// survivors are a prefix of the writes in issue order.
	Reorder bool
	// Tear cuts the last surviving unsynced write of each file at a random
	// byte.
	Tear bool
}

// MemFS is an in-memory FS with crash simulation. Paths are cleaned; there
// is one flat namespace of files plus a set of directories.
type MemFS struct {
	mu struct {
		sync.Mutex
		files map[string]*memNode // live namespace
		// durable is the namespace as of each directory's last SyncDir.
		durable map[string]*memNode
		dirs    map[string]bool // live directories
		// durableDirs are the directories whose entry in their parent is
		// durable (the root always is).
		durableDirs map[string]bool
		hook        func(Point)
	}
}

type memWrite struct {
	off      int64
	data     []byte
	truncate bool // a Truncate to off
}

type memNode struct {
	mu      sync.Mutex
	data    []byte
	synced  []byte
	pending []memWrite // since the last Sync, in issue order
}

// NewMemFS returns an empty MemFS.
func NewMemFS() *MemFS {
	m := &MemFS{}
	m.mu.files = make(map[string]*memNode)
	m.mu.durable = make(map[string]*memNode)
	m.mu.dirs = map[string]bool{"/": true, ".": true}
	m.mu.durableDirs = map[string]bool{"/": true, ".": true}
	return m
}

// SetHook makes the FS call h at every Point: from the store's committer
// (Step) and from every file Sync before it takes effect (SyncHeld). h runs
// on the caller's goroutine, without the FS's locks, so it may take crash
// images; nil removes it.
func (m *MemFS) SetHook(h func(Point)) {
	m.mu.Lock()
	m.mu.hook = h
	m.mu.Unlock()
}

// Step implements fsys.Stepper.
func (m *MemFS) Step(s fsys.Step) { m.point(Point(s)) }

func (m *MemFS) point(p Point) {
	m.mu.Lock()
	h := m.mu.hook
	m.mu.Unlock()
	if h != nil {
		h(p)
	}
}

// SyncedSize is the durable size of a file: its size at its last Sync,
// or -1 when the file does not exist.
func (m *MemFS) SyncedSize(name string) int64 {
	m.mu.Lock()
	n := m.mu.files[filepath.Clean(name)]
	m.mu.Unlock()
	if n == nil {
		return -1
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return int64(len(n.synced))
}

// SyncedData is a copy of a file's durable contents (nil when the file
// does not exist).
func (m *MemFS) SyncedData(name string) []byte {
	m.mu.Lock()
	n := m.mu.files[filepath.Clean(name)]
	m.mu.Unlock()
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]byte{}, n.synced...)
}

func (m *MemFS) OpenFile(name string, flag int, perm uint32) (fsys.File, error) {
	name = filepath.Clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.mu.dirs[filepath.Dir(name)] {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	}
	n := m.mu.files[name]
	switch {
	case n == nil && flag&os.O_CREATE == 0:
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrNotExist}
	case n != nil && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrExist}
	case n == nil:
		n = &memNode{}
		m.mu.files[name] = n
	}
	f := &memFile{fs: m, n: n, name: name, write: flag&(os.O_WRONLY|os.O_RDWR) != 0}
	if flag&os.O_TRUNC != 0 && f.write {
		_ = f.Truncate(0)
	}
	return f, nil
}

func (m *MemFS) Remove(name string) error {
	name = filepath.Clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.files[name] == nil {
		return &os.PathError{Op: "remove", Path: name, Err: os.ErrNotExist}
	}
	delete(m.mu.files, name)
	return nil
}

// Rename moves a file's node to newname. Until the directory is synced a
// crash image still shows it under oldname (its durable entry).
func (m *MemFS) Rename(oldname, newname string) error {
	oldname, newname = filepath.Clean(oldname), filepath.Clean(newname)
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.mu.files[oldname]
	if n == nil || !m.mu.dirs[filepath.Dir(newname)] {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: os.ErrNotExist}
	}
	delete(m.mu.files, oldname)
	m.mu.files[newname] = n
	return nil
}

func (m *MemFS) MkdirAll(name string, perm uint32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := filepath.Clean(name); !m.mu.dirs[d]; d = filepath.Dir(d) {
		m.mu.dirs[d] = true // durable once its parent is synced (SyncDir)
	}
	return nil
}

func (m *MemFS) ReadDir(name string) ([]string, error) {
	name = filepath.Clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.mu.dirs[name] {
		return nil, &os.PathError{Op: "readdir", Path: name, Err: os.ErrNotExist}
	}
	var out []string
	for p := range m.mu.files {
		if filepath.Dir(p) == name {
			out = append(out, filepath.Base(p))
		}
	}
	sort.Strings(out)
	return out, nil
}

// SyncDir makes the directory's current entries (files and directories
// created, files removed or renamed) durable.
func (m *MemFS) SyncDir(name string) error {
	name = filepath.Clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.mu.dirs[name] {
		return &os.PathError{Op: "fsync", Path: name, Err: os.ErrNotExist}
	}
	for d := range m.mu.dirs {
		if filepath.Dir(d) == name && d != name {
			m.mu.durableDirs[d] = true
		}
	}
	for p := range m.mu.durable {
		if filepath.Dir(p) == name && m.mu.files[p] == nil {
			delete(m.mu.durable, p)
		}
	}
	for p, n := range m.mu.files {
		if filepath.Dir(p) == name {
			m.mu.durable[p] = n
		}
	}
	return nil
}

// Crash returns the state a crash at this instant could leave (see the
// file comment). The receiver is unchanged.
func (m *MemFS) Crash(cfg CrashConfig) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := NewMemFS()
	for d := range m.mu.dirs {
		if m.survivesLocked(d) {
			out.mu.dirs[d] = true
			out.mu.durableDirs[d] = true
		}
	}
	names := make([]string, 0, len(m.mu.durable))
	for p := range m.mu.durable {
		names = append(names, p)
	}
	sort.Strings(names) // deterministic use of cfg.Rand
	for _, p := range names {
		if !out.mu.dirs[filepath.Dir(p)] {
			continue // its directory was lost
		}
		data := m.mu.durable[p].crashImage(cfg)
		n := &memNode{data: data, synced: append([]byte(nil), data...)}
		out.mu.files[p] = n
		out.mu.durable[p] = n
	}
	return out
}

// survivesLocked says whether a crash keeps directory d: its entry and
// every ancestor's are durable.
func (m *MemFS) survivesLocked(d string) bool {
	for ; ; d = filepath.Dir(d) {
		if !m.mu.durableDirs[d] {
			return false
		}
		if filepath.Dir(d) == d {
			return true
		}
	}
}

// crashImage is the node's synced contents plus the surviving unsynced
// writes.
func (n *memNode) crashImage(cfg CrashConfig) []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	img := append([]byte(nil), n.synced...)
	var keep []memWrite
	if cfg.KeepUnsynced > 0 && len(n.pending) > 0 {
		if cfg.Reorder {
			for _, w := range n.pending {
				if cfg.Rand.IntN(100) < cfg.KeepUnsynced {
					keep = append(keep, w)
				}
			}
		} else {
			k := 0
			for k < len(n.pending) && cfg.Rand.IntN(100) < cfg.KeepUnsynced {
				k++
			}
			keep = n.pending[:k]
		}
	}
	for i, w := range keep {
		if w.truncate {
			img = resize(img, w.off)
			continue
		}
		data := w.data
		if cfg.Tear && i == len(keep)-1 && len(data) > 0 {
			data = data[:cfg.Rand.IntN(len(data))]
		}
		img = writeAt(img, data, w.off)
	}
	return img
}

func resize(b []byte, size int64) []byte {
	if int64(len(b)) >= size {
		return b[:size]
	}
	return append(b, make([]byte, size-int64(len(b)))...)
}

func writeAt(b, p []byte, off int64) []byte {
	if end := off + int64(len(p)); end > int64(len(b)) {
		b = resize(b, end)
	}
	copy(b[off:], p)
	return b
}

// String lists the files and their sizes (for test failure messages).
func (m *MemFS) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var sb strings.Builder
	for p, n := range m.mu.files {
		n.mu.Lock()
		fmt.Fprintf(&sb, "%s: %d bytes (%d synced, %d pending writes)\n", p, len(n.data), len(n.synced), len(n.pending))
		n.mu.Unlock()
	}
	return sb.String()
}

type memFile struct {
	fs     *MemFS
	n      *memNode
	name   string
	write  bool
	closed atomic.Bool
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if !f.write || f.closed.Load() {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: os.ErrPermission}
	}
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.data = writeAt(f.n.data, p, off)
	f.n.pending = append(f.n.pending, memWrite{off: off, data: append([]byte(nil), p...)})
	return len(p), nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Sync() error {
	f.fs.point(SyncHeld)
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.synced = append(f.n.synced[:0:0], f.n.data...)
	f.n.pending = nil
	return nil
}

func (f *memFile) Truncate(size int64) error {
	if !f.write {
		return &os.PathError{Op: "truncate", Path: f.name, Err: os.ErrPermission}
	}
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.data = resize(f.n.data, size)
	f.n.pending = append(f.n.pending, memWrite{off: size, truncate: true})
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	return int64(len(f.n.data)), nil
}

func (f *memFile) Close() error {
	f.closed.Store(true)
	return nil
}
