package storage

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/kgateway/kgateway/storage/vfstest"
)

// halfFS writes half of each write and then reports ENOSPC while full is
// set, and refuses truncates too (as FaultFS's ENOSPC rule does): the
// worst a full disk does before any sync.
type halfFS struct {
	FS
	full atomic.Bool
}

func (h *halfFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := h.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &halfFile{File: f, fs: h}, nil
}

type halfFile struct {
	File
	fs *halfFS
}

func (f *halfFile) WriteAt(p []byte, off int64) (int, error) {
	if !f.fs.full.Load() {
		return f.File.WriteAt(p, off)
	}
	n, _ := f.File.WriteAt(p[:len(p)/2], off)
	return n, syscall.ENOSPC
}

func (f *halfFile) Truncate(size int64) error {
	if f.fs.full.Load() {
		return syscall.ENOSPC
	}
	return f.File.Truncate(size)
}

// I7: a full disk refuses the write (ErrNoSpace, not ErrFailed), harms no
// acknowledged entry, consumes no offset, and appends work again once space
// is freed, without a reopen; after a reopen (clean or crash) every
// acknowledged entry is there exactly once and no partial one.
func TestNoSpaceRecoversWithoutReopen(t *testing.T) {
	for _, name := range []string{"faultfs", "partial-write"} {
		t.Run(name, func(t *testing.T) {
			machine := vfstest.NewMachine(0)
			mem := machine.Files
			var (
				fs       FS
				setFull  func(bool)
				pfs             = machine.Index
				acked           = map[Offset][]byte{}
				wantNext Offset = 0
			)
			if name == "faultfs" {
				ffs := vfstest.NewFaultFS(mem)
				fs, setFull = ffs, func(on bool) {
					if on {
						ffs.FailWrite("", syscall.ENOSPC)
					} else {
						ffs.Clear()
					}
				}
			} else {
				hfs := &halfFS{FS: mem}
				fs, setFull = hfs, hfs.full.Store
			}
			s := newStore(t, "/d", Options{FS: fs, PebbleFS: pfs})
			if err := s.CreateLog(1); err != nil {
				t.Fatal(err)
			}
			appendOK := func(i int) {
				t.Helper()
				payload := bytes.Repeat(fmt.Appendf(nil, "entry %d;", i), 1+i%5)
				h, err := s.Append(1, 1+i%3, payload, AppendOptions{})
				if err != nil || h.Offset != wantNext {
					t.Fatalf("append %d at %d (want %d): %v", i, h.Offset, wantNext, err)
				}
				acked[h.Offset] = payload
				wantNext = h.End()
			}
			for round := range 3 {
				for i := range 4 {
					appendOK(10*round + i)
				}
				setFull(true)
				for i := range 3 {
					_, err := s.Append(1, 2, bytes.Repeat([]byte("lost"), 100), AppendOptions{})
					if !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) || errors.Is(err, ErrFailed) {
						t.Fatalf("round %d, full write %d: %v", round, i, err)
					}
				}
				if info, _ := s.Info(1); info.End != wantNext {
					t.Fatalf("end %d after refused writes, want %d", info.End, wantNext)
				}
				setFull(false)
			}
			appendOK(99)
			checkEntries(t, s, acked)
			// Crash now (unsynced index entries may be lost; the files hold
			// every acknowledged frame) and reopen.
			img := machine.Crash(vfstest.PebbleFirst, vfstest.SyncedOnly)
			pclone, fclone := img.Index, img.Files
			s.Close()
			s2 := newStore(t, "/d", Options{FS: fclone, PebbleFS: pclone})
			defer s2.Close()
			checkEntries(t, s2, acked)
			if h, err := s2.Append(1, 1, []byte("after"), AppendOptions{}); err != nil || h.Offset != wantNext {
				t.Fatalf("append after reopen at %d, want %d: %v", h.Offset, wantNext, err)
			}
		})
	}
}

// checkEntries reads the whole log: exactly the acknowledged entries.
func checkEntries(t *testing.T, s *Store, acked map[Offset][]byte) {
	t.Helper()
	got, err := s.ReadEntries(1, 0, 0, 0)
	if err != nil || len(got) != len(acked) {
		t.Fatalf("read %d entries, want %d: %v", len(got), len(acked), err)
	}
	for _, e := range got {
		if want, ok := acked[e.Offset]; !ok || !bytes.Equal(want, e.Payload) {
			t.Fatalf("entry at %d: %q, acknowledged %v %q", e.Offset, e.Payload, ok, want)
		}
	}
}
