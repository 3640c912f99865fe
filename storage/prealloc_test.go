package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kgateway/kgateway/storage/fsys"
	"github.com/kgateway/kgateway/storage/vfstest"
	"golang.org/x/sys/unix"
)

// allocated is the file's size and the bytes of disk it holds.
func allocated(t *testing.T, name string) (size, disk int64) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(name, &st); err != nil {
		t.Fatal(err)
	}
	return st.Size, st.Blocks * 512
}

// openLedger is log id's newest ledger.
func openLedger(t *testing.T, s *Store, id LogID) LedgerID {
	t.Helper()
	info, err := s.Info(id)
	if err != nil {
		t.Fatal(err)
	}
	return info.Ledgers[len(info.Ledgers)-1].ID
}

// skipWithoutFallocate skips where dir's file system has no
// fallocate(FALLOC_FL_KEEP_SIZE).
func skipWithoutFallocate(t *testing.T, dir string) {
	f, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 4096); err != nil {
		t.Skipf("no fallocate here: %v", err)
	}
}

// Blocks allocated ahead of the writes (prealloc.go): the open ledger's
// file holds blocks past its last entry, at most allocAheadMax past it,
// its size stays its entries' bytes, and the blocks past the size are
// freed when the ledger is sealed (Roll) and when the store closes; a
// reopen finds every entry.
func TestSegmentBlocksAllocatedAhead(t *testing.T) {
	dir := t.TempDir()
	skipWithoutFallocate(t, dir)
	s := newStore(t, dir, Options{})
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	const slack = 64 << 10 // block rounding, extent tree blocks
	payload := bytes.Repeat([]byte("p"), 128<<10)
	want := int64(0)
	appendOne := func() {
		t.Helper()
		if _, err := s.Append(1, 1, payload, AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		want += frameHeaderLen + int64(len(payload))
	}
	first := s.segPath(1, openLedger(t, s, 1))
	appendOne()
	size, disk := allocated(t, first)
	if size != want {
		t.Fatalf("size %d after one entry, want %d: allocating ahead changed it", size, want)
	}
	if disk < want+allocAheadMin-4096 {
		t.Fatalf("%d bytes allocated for %d written: nothing allocated ahead", disk, size)
	}
	// Grow past a few strides: the tail stays bounded. Stop where one
	// is held, for the roll below to free.
	for i := 0; i < 200 && (want < 3*allocAheadMax || disk-size < allocAheadMin); i++ {
		appendOne()
		size, disk = allocated(t, first)
		if size != want {
			t.Fatalf("size %d, want %d", size, want)
		}
		if disk > size+allocAheadMax+slack {
			t.Fatalf("%d bytes allocated past %d written: more than %d ahead", disk-size, size, allocAheadMax)
		}
	}
	if disk-size < allocAheadMin {
		t.Fatalf("only %d bytes allocated ahead at %d written", disk-size, size)
	}
	if _, err := s.Roll(1); err != nil {
		t.Fatal(err)
	}
	if size, disk = allocated(t, first); size != want || disk > size+slack {
		t.Fatalf("sealed ledger: size %d (want %d), %d bytes allocated: its tail was not freed", size, want, disk)
	}
	second := s.segPath(1, openLedger(t, s, 1))
	total := want
	want = 0
	appendOne()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if size, disk = allocated(t, second); size != want || disk > size+slack {
		t.Fatalf("closed store's open ledger: size %d (want %d), %d bytes allocated: its tail was not freed", size, want, disk)
	}
	s = newStore(t, dir, Options{})
	defer s.Close()
	info, err := s.Info(1)
	if err != nil {
		t.Fatal(err)
	}
	if n := int64(info.End) * (frameHeaderLen + int64(len(payload))); n != total+want {
		t.Fatalf("reopened: end %d, want %d entries", info.End, (total+want)/(frameHeaderLen+int64(len(payload))))
	}
}

// allocFS is a MemFS whose files refuse every allocation ahead with err.
type allocFS struct {
	FS
	err   error
	calls int
}

func (a *allocFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := a.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &allocFile{File: f, fs: a}, nil
}

type allocFile struct {
	File
	fs *allocFS
}

func (f *allocFile) Allocate(off, n int64) error {
	f.fs.calls++
	if f.fs.err == nil {
		return nil
	}
	return &os.PathError{Op: "fallocate", Path: "x", Err: f.fs.err}
}

// A ledger written over a spare (I8) allocates nothing while its writes
// go over the spare's blocks (prealloc.go startAlloc), and allocates
// ahead again past them.
func TestSpareNotAllocatedAhead(t *testing.T) {
	afs := &allocFS{FS: fsys.OS()}
	s := newStore(t, t.TempDir(), Options{FS: afs})
	defer s.Close()
	_ = s.CreateLog(1)
	fillLedger(t, s, 1, 64, 4000) // ledger A, ~256 KB
	info, _ := s.Info(1)
	a := info.Ledgers[0]
	fillLedger(t, s, 1, 2, 100) // ledger B
	if err := s.HardTrim(1, a.FirstOffset+64); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Roll(1); err != nil {
		t.Fatal(err)
	}
	afs.calls = 0
	for i := 0; i < 60; i++ { // inside A's 64 frames
		mustAppend(t, s, 1, 1, make([]byte, 4000), 0)
	}
	if afs.calls != 0 {
		t.Fatalf("%d allocations while writing over the spare's blocks", afs.calls)
	}
	for i := 0; i < 10; i++ { // past them
		mustAppend(t, s, 1, 1, make([]byte, 4000), 0)
	}
	if afs.calls == 0 {
		t.Fatal("nothing allocated ahead past the spare's blocks")
	}
}

// An allocation ahead that fails never fails the write (prealloc.go):
// one refused for lack of space stops allocating ahead and drops the
// spares (a full disk's warning), one refused otherwise stops allocating
// ahead; the entries are all there.
func TestAllocAheadFailureKeepsWrites(t *testing.T) {
	for _, errno := range []error{syscall.ENOSPC, syscall.EOPNOTSUPP} {
		t.Run(errno.Error(), func(t *testing.T) {
			machine := vfstest.NewMachine(0)
			afs := &allocFS{FS: machine.Files, err: errno}
			s := newStore(t, "/d", Options{FS: afs, PebbleFS: machine.Index})
			defer s.Close()
			if err := s.CreateLog(1); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 10; i++ {
				if _, err := s.Append(1, 1, []byte("payload"), AppendOptions{}); err != nil {
					t.Fatalf("append %d: %v", i, err)
				}
			}
			if afs.calls != 1 {
				t.Fatalf("%d allocations tried, want 1 (none after it failed)", afs.calls)
			}
			if got := s.lowSpace.Load(); got != errors.Is(errno, syscall.ENOSPC) {
				t.Fatalf("lowSpace %v after %v", got, errno)
			}
			got, err := s.ReadEntries(1, 0, 100, 1<<20)
			if err != nil || len(got) != 10 {
				t.Fatalf("read %d entries, %v; want 10", len(got), err)
			}
		})
	}
}
