package ledger

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/vfscount"
)

// testLog is the log every test's managed ledger sits on; otherLog is used
// to consume ledger ids so that testLog's ids have gaps (R3).
const (
	testLog  LogID = 7
	otherLog LogID = 99
)

// errInjected is the I/O error the fault FS returns.
var errInjected = errors.New("injected I/O error")

// faultFS wraps the OS segment-file layer: it fails ReadAt on chosen
// segment files (R10) and counts every mutating call (R1).
type faultFS struct {
	inner     storage.FS
	mutations atomic.Int64
	mu        struct {
		sync.Mutex
		failing map[string]bool   // segment base names whose reads fail
		hook    func(base string) // called before every ReadAt
		sync    func()            // called before every segment Sync
	}
}

func (f *faultFS) setSyncHook(h func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.sync = h
}

func (f *faultFS) setReadHook(h func(base string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.hook = h
}

func newFaultFS() *faultFS {
	f := &faultFS{inner: storage.OSFS()}
	f.mu.failing = map[string]bool{}
	return f
}

// failReads makes reads of the ledger's segment file fail.
func (f *faultFS) failReads(ledger LedgerID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.failing[storage.SegmentFileName(testLog, ledger)] = true
}

func (f *faultFS) healReads() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.failing = map[string]bool{}
}

// beforeRead runs the hook (outside the lock) and says whether the read
// fails.
func (f *faultFS) beforeRead(base string) (fail bool) {
	f.mu.Lock()
	hook, fail := f.mu.hook, f.mu.failing[base]
	f.mu.Unlock()
	if hook != nil {
		hook(base)
	}
	return fail
}

func (f *faultFS) OpenFile(name string, flag int, perm uint32) (storage.File, error) {
	if flag&os.O_CREATE != 0 {
		if _, err := os.Stat(name); err != nil {
			f.mutations.Add(1) // creates a file
		}
	}
	if flag&(os.O_TRUNC|os.O_WRONLY|os.O_RDWR) != 0 {
		f.mutations.Add(1) // truncates, or opens for writing
	}
	file, err := f.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, base: filepath.Base(name)}, nil
}

func (f *faultFS) Remove(name string) error {
	f.mutations.Add(1)
	return f.inner.Remove(name)
}

func (f *faultFS) Rename(oldname, newname string) error {
	f.mutations.Add(1)
	return f.inner.Rename(oldname, newname)
}

func (f *faultFS) MkdirAll(name string, perm uint32) error {
	if _, err := os.Stat(name); err != nil {
		f.mutations.Add(1)
	}
	return f.inner.MkdirAll(name, perm)
}

func (f *faultFS) ReadDir(name string) ([]string, error) { return f.inner.ReadDir(name) }

func (f *faultFS) SyncDir(name string) error {
	f.mutations.Add(1)
	return f.inner.SyncDir(name)
}

type faultFile struct {
	storage.File
	fs   *faultFS
	base string
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if f.fs.beforeRead(f.base) {
		return 0, errInjected
	}
	return f.File.ReadAt(p, off)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mutations.Add(1)
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Sync() error {
	f.fs.mutations.Add(1)
	f.fs.mu.Lock()
	hook := f.fs.mu.sync
	f.fs.mu.Unlock()
	if hook != nil {
		hook()
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	f.fs.mutations.Add(1)
	return f.File.Truncate(size)
}

// fakeClock is Config.Now for the age roll policy.
type fakeClock struct {
	mu struct {
		sync.Mutex
		now time.Time
	}
}

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.mu.now = time.Now() // storage stamps ledgers with the real clock
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.now = c.mu.now.Add(d)
}

// env is one store in a temp dir with one managed ledger on testLog.
type env struct {
	t      testing.TB
	dir    string
	fs     *faultFS
	pebble atomic.Int64 // pebble file-system mutations
	store  *storage.Store
	m      *Managed
	cfg    Config
	clock  *fakeClock
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), fs: newFaultFS(), clock: newFakeClock()}
	if cfg.Now == nil {
		cfg.Now = e.clock.Now
	}
	e.cfg = cfg
	e.open()
	t.Cleanup(func() {
		if e.store != nil {
			e.m.Close()
			e.store.Close()
		}
	})
	return e
}

func (e *env) open() {
	e.t.Helper()
	opts := storage.Options{FS: e.fs, PebbleFS: vfscount.New(vfs.Default, &e.pebble)}
	s, err := storage.Open(e.dir, opts)
	if err != nil {
		e.t.Fatalf("storage.Open: %v", err)
	}
	m, err := Open(s, testLog, e.cfg)
	if err != nil {
		s.Close()
		e.t.Fatalf("ledger.Open: %v", err)
	}
	e.store, e.m = s, m
}

// reopen closes and reopens the store, so nothing is cached in memory.
func (e *env) reopen() {
	e.t.Helper()
	e.m.Close()
	if err := e.store.Close(); err != nil {
		e.t.Fatalf("storage.Close: %v", err)
	}
	e.store, e.m = nil, nil
	e.open()
}

func (e *env) append(payload string, records int) storage.EntryHeader {
	e.t.Helper()
	h, err := e.m.Append(records, []byte(payload), storage.AppendOptions{MaxTime: 1000})
	if err != nil {
		e.t.Fatalf("append %q: %v", payload, err)
	}
	return h
}

func (e *env) roll() LedgerID {
	e.t.Helper()
	id, err := e.m.Roll()
	if err != nil {
		e.t.Fatalf("roll: %v", err)
	}
	return id
}

func (e *env) info() storage.LogInfo {
	e.t.Helper()
	info, err := e.store.Info(testLog)
	if err != nil {
		e.t.Fatalf("info: %v", err)
	}
	return info
}

func (e *env) ledgerIDs() []LedgerID {
	var ids []LedgerID
	for _, li := range e.info().Ledgers {
		ids = append(ids, li.ID)
	}
	return ids
}

func (e *env) read(from Offset, maxEntries, maxBytes int, maxOffset Offset) []Entry {
	e.t.Helper()
	_, es, err := e.m.ReadEntries(Committed, from, maxOffset, maxEntries, maxBytes, nil)
	if err != nil {
		e.t.Fatalf("ReadEntries(%v, %d, %d, %v): %v", from, maxEntries, maxBytes, maxOffset, err)
	}
	return es
}

// payloads renders entries as "pos=payload" for comparisons.
func payloads(es []Entry) string {
	var b strings.Builder
	for i, en := range es {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%d=%s", en.Ledger, en.Entry, en.Payload)
	}
	return b.String()
}

// dirState is every file under dir: name -> size, mtime, sha256.
func dirState(t testing.TB, dir string) map[string]string {
	t.Helper()
	st := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		st[path] = fmt.Sprintf("size=%d mtime=%d sha=%x", fi.Size(), fi.ModTime().UnixNano(), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return st
}

// storeState is what the store's own read APIs say: log info, the whole
// entry index of testLog and the metadata keyspace.
func storeState(t testing.TB, s *storage.Store) string {
	t.Helper()
	var b strings.Builder
	info, err := s.Info(testLog)
	if err != nil {
		t.Fatalf("info: %v", err)
	}
	fmt.Fprintf(&b, "%+v\n", info)
	if info.End > info.Start {
		hdrs, err := s.IndexRange(testLog, info.Start, 1<<20)
		if err != nil {
			t.Fatalf("index range: %v", err)
		}
		for _, h := range hdrs {
			fmt.Fprintf(&b, "%+v\n", h)
		}
	}
	err = s.ScanMeta(nil, func(k, v []byte) error {
		fmt.Fprintf(&b, "meta %x=%x\n", k, v)
		return nil
	})
	if err != nil {
		t.Fatalf("scan meta: %v", err)
	}
	return b.String()
}

// keyspace is every key in pebble (every prefix, memtable included), as
// key -> value in hex.
func keyspace(t testing.TB, s *storage.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := s.Keyspace(func(k, v []byte) error {
		out[fmt.Sprintf("%x", k)] = fmt.Sprintf("%x", v)
		return nil
	})
	if err != nil {
		t.Fatalf("keyspace: %v", err)
	}
	return out
}

func diffStates(a, b map[string]string) []string {
	var diffs []string
	for k, v := range a {
		if b[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: %q -> %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: new %q", k, v))
		}
	}
	sort.Strings(diffs)
	return diffs
}
