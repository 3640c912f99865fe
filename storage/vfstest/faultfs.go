package vfstest

// FaultFS wraps any FS (the OS, or a MemFS) and injects errors. API:
//
//	ffs := vfstest.NewFaultFS(fsys.OS())          // or vfstest.NewMemFS()
//	st, _ := storage.Open(dir, storage.Options{FS: ffs})
//	name := storage.SegmentFileName(log, ledger)  // the base name to target
//	ffs.FailReadAt(name, io.ErrUnexpectedEOF)     // reads of that ledger fail
//	ffs.FailSync("", errors.New("EIO"))           // every Sync fails
//	ffs.FailWrite(name, syscall.ENOSPC)           // writes to it fail, writing nothing
//	ffs.Clear()                                   // no more faults
//	n := ffs.Mutations()                          // writes, syncs, truncates, creates, removes so far
//
// A name is a file's base name; "" matches every file. A nil error clears
// that rule. Rules hold until cleared. After a failed Sync or write the store
// fails the log (ErrFailed for appends until reopened), as doc.go says.

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/kgateway/kgateway/storage/fsys"
)

// FaultFS is an FS that injects errors into a base FS.
type FaultFS struct {
	base      fsys.FS
	mutations atomic.Int64
	mu        struct {
		sync.Mutex
		readAt map[string]error
		sync   map[string]error
		write  map[string]error
	}
}

// NewFaultFS wraps base.
func NewFaultFS(base fsys.FS) *FaultFS {
	f := &FaultFS{base: base}
	f.Clear()
	return f
}

func setRule(m map[string]error, name string, err error) {
	if err == nil {
		delete(m, name)
	} else {
		m[name] = err
	}
}

// FailReadAt makes ReadAt on the named file fail with err.
func (f *FaultFS) FailReadAt(name string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	setRule(f.mu.readAt, name, err)
}

// FailSync makes Sync on the named file fail with err (nothing is synced).
func (f *FaultFS) FailSync(name string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	setRule(f.mu.sync, name, err)
}

// FailWrite makes WriteAt and Truncate on the named file fail with err
// (e.g. syscall.ENOSPC) without writing anything.
func (f *FaultFS) FailWrite(name string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	setRule(f.mu.write, name, err)
}

// Clear removes every rule.
func (f *FaultFS) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.readAt = make(map[string]error)
	f.mu.sync = make(map[string]error)
	f.mu.write = make(map[string]error)
}

// Mutations counts the operations so far that change files: WriteAt,
// Truncate, Sync, Remove, Rename, SyncDir, MkdirAll and opens that create
// or may write. A read must not move it.
func (f *FaultFS) Mutations() int64 { return f.mutations.Load() }

type faultKind int

const (
	faultRead faultKind = iota
	faultSync
	faultWrite
)

func (f *FaultFS) rule(kind faultKind, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := map[faultKind]map[string]error{faultRead: f.mu.readAt, faultSync: f.mu.sync, faultWrite: f.mu.write}[kind]
	if err := m[filepath.Base(name)]; err != nil {
		return err
	}
	return m[""]
}

func (f *FaultFS) OpenFile(name string, flag int, perm uint32) (fsys.File, error) {
	if flag&(os.O_CREATE|os.O_WRONLY|os.O_RDWR|os.O_TRUNC) != 0 {
		f.mutations.Add(1)
	}
	file, err := f.base.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, name: name, f: file}, nil
}

func (f *FaultFS) Remove(name string) error {
	f.mutations.Add(1)
	return f.base.Remove(name)
}

func (f *FaultFS) Rename(oldname, newname string) error {
	f.mutations.Add(1)
	return f.base.Rename(oldname, newname)
}

func (f *FaultFS) MkdirAll(name string, perm uint32) error {
	f.mutations.Add(1)
	return f.base.MkdirAll(name, perm)
}

func (f *FaultFS) ReadDir(name string) ([]string, error) { return f.base.ReadDir(name) }

func (f *FaultFS) SyncDir(name string) error {
	f.mutations.Add(1)
	return f.base.SyncDir(name)
}

// Step passes the store's commit steps on to the base FS (fsys.Stepper).
func (f *FaultFS) Step(s fsys.Step) {
	if st, ok := f.base.(fsys.Stepper); ok {
		st.Step(s)
	}
}

type faultFile struct {
	fs   *FaultFS
	name string
	f    fsys.File
}

func (ff *faultFile) fail(op string, kind faultKind) error {
	if err := ff.fs.rule(kind, ff.name); err != nil {
		return &os.PathError{Op: op, Path: ff.name, Err: err}
	}
	return nil
}

func (ff *faultFile) WriteAt(p []byte, off int64) (int, error) {
	ff.fs.mutations.Add(1)
	if err := ff.fail("write", faultWrite); err != nil {
		return 0, err
	}
	return ff.f.WriteAt(p, off)
}

// WriteAtv writes the buffers one WriteAt at a time, each subject to the
// rules (fsys.VectorWriter), so that the store's frame written in one
// call meets the faults its header's and payload's writes would.
func (ff *faultFile) WriteAtv(bufs [][]byte, off int64) (int, error) {
	n := 0
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		m, err := ff.WriteAt(b, off+int64(n))
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (ff *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if err := ff.fail("read", faultRead); err != nil {
		return 0, err
	}
	return ff.f.ReadAt(p, off)
}

func (ff *faultFile) Sync() error {
	ff.fs.mutations.Add(1)
	if err := ff.fail("sync", faultSync); err != nil {
		return err
	}
	return ff.f.Sync()
}

func (ff *faultFile) Truncate(size int64) error {
	ff.fs.mutations.Add(1)
	if err := ff.fail("truncate", faultWrite); err != nil {
		return err
	}
	return ff.f.Truncate(size)
}

// Allocate is refused by the write rules (a full disk refuses an
// allocation as it refuses a write) and otherwise passed on where the
// file below allocates (fsys.Allocator); it changes no byte a read sees,
// so it is no mutation.
func (ff *faultFile) Allocate(off, n int64) error {
	if err := ff.fail("fallocate", faultWrite); err != nil {
		return err
	}
	if a, ok := ff.f.(fsys.Allocator); ok {
		return a.Allocate(off, n)
	}
	return nil
}

func (ff *faultFile) Size() (int64, error) { return ff.f.Size() }
func (ff *faultFile) Close() error         { return ff.f.Close() }
