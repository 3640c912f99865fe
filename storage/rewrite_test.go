package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kgateway/kgateway/storage/vfstest"
)

// removeHook is an FS that calls onRemove before each Remove: a crash
// test's way to stop between a rewrite's index commit and its removal of
// the old generation's files.
type removeHook struct {
	FS
	mu       sync.Mutex
	onRemove func(name string)
}

func (r *removeHook) Remove(name string) error {
	r.mu.Lock()
	f := r.onRemove
	r.onRemove = nil
	r.mu.Unlock()
	if f != nil {
		f(name)
	}
	return r.FS.Remove(name)
}

// genLog fills log 1 with three sealed ledgers of five entries each and
// an open one of two, and returns every entry's payload by offset.
func genLog(t *testing.T, s *Store) map[Offset][]byte {
	t.Helper()
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	want := map[Offset][]byte{}
	for l := range 4 {
		n := 5
		if l == 3 {
			n = 2
		}
		for i := range n {
			p := []byte(fmt.Sprintf("old-%d-%d", l, i))
			h, err := s.Append(1, 2, p, AppendOptions{MaxTime: int64(10*l + i)})
			if err != nil {
				t.Fatal(err)
			}
			want[h.Offset] = p
		}
		if l < 3 {
			if _, err := s.Roll(1); err != nil {
				t.Fatal(err)
			}
		}
	}
	return want
}

// rewriteFirstTwo rewrites the first two ledgers keeping every third
// entry, as "new-<offset>", and returns the expected entries after it.
// hook runs at named instants: "begun", "appended", before "commit".
func rewriteFirstTwo(t *testing.T, s *Store, old map[Offset][]byte, hook func(string)) map[Offset][]byte {
	t.Helper()
	info, err := s.Info(1)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.BeginRewrite(1, []LedgerID{info.Ledgers[0].ID, info.Ledgers[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	hook("begun")
	first, end := w.Range()
	if first != 0 || end != info.Ledgers[2].FirstOffset {
		t.Fatalf("range [%v, %v)", first, end)
	}
	want := map[Offset][]byte{}
	for off, p := range old {
		if off >= end {
			want[off] = p
		}
	}
	for off := first; off < end; off += 2 {
		if off%3 != 0 {
			continue
		}
		p := []byte(fmt.Sprintf("new-%d", off))
		if err := w.Append(off, 2, 99, p); err != nil {
			t.Fatal(err)
		}
		want[off] = p
	}
	hook("appended")
	hook("commit")
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return want
}

// readLog reads every visible entry of log 1 by offset.
func readLog(t *testing.T, s *Store) map[Offset][]byte {
	t.Helper()
	info, err := s.Info(1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[Offset][]byte{}
	for off := info.Start; off < info.End; {
		es, err := s.ReadEntries(1, off, 0, 0)
		if err != nil {
			t.Fatalf("read at %v: %v", off, err)
		}
		if len(es) == 0 {
			break
		}
		for _, e := range es {
			got[e.Offset] = append([]byte(nil), e.Payload...)
			off = e.End()
		}
	}
	return got
}

func sameEntries(a, b map[Offset][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for off, p := range a {
		if !bytes.Equal(b[off], p) {
			return false
		}
	}
	return true
}

// Compacted generations: a crash at any instant of a rewrite leaves the old generation or
// the new one, whole, never a mix; the other generation's files are
// orphans that Open removes; the log takes appends after it.
func TestRewriteCrashAtomic(t *testing.T) {
	seed := vfstest.Seed(t)
	for _, at := range []string{"begun", "appended", "sync-held", "before-remove", "committed"} {
		t.Run(at, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(len(at))))
			m := vfstest.NewMachine(0)
			hfs := &removeHook{FS: m.Files}
			s, err := Open("/data", Options{FS: hfs, PebbleFS: m.Index})
			if err != nil {
				t.Fatal(err)
			}
			old := genLog(t, s)
			var img vfstest.Image
			taken := false
			take := func(order vfstest.Order) {
				if !taken {
					img, taken = m.Crash(order, vfstest.IndexAhead(rng)), true
				}
			}
			newGen := rewriteFirstTwo(t, s, old, func(step string) {
				switch {
				case step == at:
					take(vfstest.PebbleFirst) // at an instant: pebble first
				case step == "commit" && at == "sync-held":
					// The rewrite's file sync, held: either order.
					m.At(vfstest.SyncHeld, 1, func() { take(vfstest.Orders[rng.IntN(2)]) })
				case step == "commit" && at == "before-remove":
					hfs.onRemove = func(string) { take(vfstest.PebbleFirst) }
				}
			})
			m.Disarm()
			if at == "committed" {
				take(vfstest.PebbleFirst)
			}
			if !taken {
				t.Fatal("no crash image taken")
			}
			_ = s.Close()
			s2, err := Open("/data", Options{FS: img.Files, PebbleFS: img.Index})
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer s2.Close()
			got := readLog(t, s2)
			wantNew := at == "before-remove" || at == "committed"
			switch {
			case wantNew && !sameEntries(got, newGen):
				t.Fatalf("after a crash %s the commit: %d entries, want the new generation's %d", at, len(got), len(newGen))
			case !wantNew && !sameEntries(got, old):
				t.Fatalf("after a crash %s: %d entries, want the old generation's %d", at, len(got), len(old))
			}
			info, _ := s2.Info(1)
			if gen := info.Ledgers[0].Gen; gen != map[bool]uint64{true: 1, false: 0}[wantNew] {
				t.Fatalf("first ledger generation %d", gen)
			}
			// Exactly the live ledgers' files remain (Open removed the
			// other generation's).
			names, _ := img.Files.ReadDir("/data/segments")
			var live []string
			for _, l := range info.Ledgers {
				live = append(live, SegmentFileName(1, l.ID))
			}
			for _, n := range names {
				if strings.HasSuffix(n, ".seg") && !slices.Contains(live, filepath.Base(n)) {
					t.Fatalf("orphan %s survived Open (live %v)", n, live)
				}
			}
			if h, err := s2.Append(1, 1, []byte("after"), AppendOptions{}); err != nil || h.Offset != info.End {
				t.Fatalf("append after the crash: %+v %v", h, err)
			}
		})
	}
}

// blockFS holds the first ReadAt of a file whose name has the given
// suffix until release is closed, signalling reached when it gets there.
type blockFS struct {
	FS
	suffix  string
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

type blockFile struct {
	File
	fs *blockFS
}

func (b *blockFS) OpenFile(name string, flag int, perm uint32) (File, error) {
	f, err := b.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, b.suffix) {
		return f, err
	}
	return &blockFile{File: f, fs: b}, nil
}

func (f *blockFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.once.Do(func() {
		close(f.fs.reached)
		<-f.fs.release
	})
	return f.File.ReadAt(p, off)
}

// The generation swap: a read that pinned the old generation completes from it while the
// swap commits; the old file is removed only when that read releases it,
// and the next read sees the new generation.
func TestRewritePinnedReadCompletesFromOld(t *testing.T) {
	m := vfstest.NewMachine(0)
	bfs := &blockFS{FS: m.Files, reached: make(chan struct{}), release: make(chan struct{})}
	s, err := Open("/data", Options{FS: bfs, PebbleFS: m.Index, TailCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old := genLog(t, s)
	info, _ := s.Info(1)
	oldName := filepath.Join("/data/segments", SegmentFileName(1, info.Ledgers[0].ID))
	bfs.suffix = SegmentFileName(1, info.Ledgers[0].ID)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(bfs.release) }) }
	defer release() // before Close, which waits for the read
	type result struct {
		es  []Entry
		err error
	}
	done := make(chan result)
	go func() {
		es, err := s.ReadEntries(1, 0, 0, 0)
		done <- result{es, err}
	}()
	select {
	case <-bfs.reached: // the read holds its pin on the old first ledger
	case r := <-done:
		t.Fatalf("read finished without reaching the file: %+v", r)
	}
	newGen := rewriteFirstTwo(t, s, old, func(string) {})
	if _, err := m.Files.OpenFile(oldName, 0, 0); err != nil {
		t.Fatalf("the pinned old file was removed under the read: %v", err)
	}
	release()
	r := <-done
	if r.err != nil || len(r.es) == 0 {
		t.Fatalf("pinned read: %v, %d entries", r.err, len(r.es))
	}
	for _, e := range r.es {
		if e.Ledger == info.Ledgers[0].ID && !bytes.Equal(e.Payload, old[e.Offset]) {
			t.Fatalf("pinned read at %v: %q, want the old generation's %q", e.Offset, e.Payload, old[e.Offset])
		}
	}
	if _, err := m.Files.OpenFile(oldName, 0, 0); err == nil {
		t.Fatal("the old file outlived its last pin")
	}
	if got := readLog(t, s); !sameEntries(got, newGen) {
		t.Fatalf("after the swap: %d entries, want the new generation's %d", len(got), len(newGen))
	}
}

// Reads across gaps, R3: by offset, a read in a gap starts at the next entry; Floor
// and SeekTime resolve into gaps the same way; a gap running to the end
// reads nothing.
func TestRewriteGapsReadForward(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old := genLog(t, s)
	rewriteFirstTwo(t, s, old, func(string) {}) // keeps 0, 6, 12, 18 of [0, 20)
	for off, want := range map[Offset]Offset{0: 0, 1: 0, 2: 6, 5: 6, 7: 6, 8: 12, 13: 12, 14: 18, 19: 18, 20: 20} {
		h, err := s.Floor(1, off)
		if err != nil || h.Offset != want {
			t.Fatalf("Floor(%v) = %v %v, want the entry at %v", off, h.Offset, err, want)
		}
		_, hdrs, err := s.Headers(1, off, 1, 0)
		if err != nil || len(hdrs) != 1 || hdrs[0].Offset != want {
			t.Fatalf("Headers(%v) = %+v %v", off, hdrs, err)
		}
	}
	// Time keys name removed entries: they resolve forward.
	if h, err := s.SeekTime(1, 3); err != nil || h.Offset != 6 {
		t.Fatalf("SeekTime(3) = %v %v, want 6", h.Offset, err)
	}
	// A rewrite whose last entries are all gone: a gap to the end.
	s2, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s2.Append(1, 1, []byte("x"), AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	led, _ := s2.Info(1)
	if _, err := s2.Roll(1); err != nil {
		t.Fatal(err)
	}
	w, err := s2.BeginRewrite(1, []LedgerID{led.Ledgers[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(0, 1, 0, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, hdrs, err := s2.Headers(1, 1, 10, 1<<20); err != nil || len(hdrs) != 0 || b.End != 3 {
		t.Fatalf("in a gap to the end: %+v %+v %v", b, hdrs, err)
	}
	if _, err := s2.Floor(1, 1); err == nil {
		t.Fatal("Floor in a gap to the end found an entry")
	}
	if _, err := s2.BeginRewrite(1, []LedgerID{999}); err == nil {
		t.Fatal("a rewrite of a missing ledger began")
	}
	info, _ := s2.Info(1)
	if _, err := s2.BeginRewrite(1, []LedgerID{info.Ledgers[len(info.Ledgers)-1].ID}); err == nil {
		t.Fatal("a rewrite of the open ledger began")
	}
}

// Verify and the read-only inspection see a rewritten log as it is: its
// ledgers in offset order and its gaps allowed; overlaps still fail.
func TestRewriteVerifies(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := genLog(t, s)
	rewriteFirstTwo(t, s, old, func(string) {})
	want, _ := s.Info(1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	logs, err := ro.Logs()
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range logs[0].Ledgers {
		if l.ID != want.Ledgers[i].ID || l.Gen != want.Ledgers[i].Gen {
			t.Fatalf("ledger %d: %+v, want %+v", i, l, want.Ledgers[i])
		}
	}
	rep, err := ro.Verify(nil)
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify: %v %+v", err, rep.Problems)
	}
}
