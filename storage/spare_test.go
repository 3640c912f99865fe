package storage

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// fillLedger appends n entries of size bytes (one record each) and rolls,
// so that the entries fill one sealed ledger. It returns what it wrote.
func fillLedger(t *testing.T, s *Store, id LogID, n, size int) map[Offset][]byte {
	t.Helper()
	out := map[Offset][]byte{}
	for i := 0; i < n; i++ {
		info, _ := s.Info(id)
		p := payloadFor(info.End, size)
		h := mustAppend(t, s, id, 1, p, 0)
		out[h.Offset] = p
	}
	if _, err := s.Roll(id); err != nil {
		t.Fatal(err)
	}
	return out
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// readAll reads every visible entry of id and checks it against want.
func readChecked(t *testing.T, s *Store, id LogID, want map[Offset][]byte) int {
	t.Helper()
	info, _ := s.Info(id)
	got, err := s.ReadEntries(id, info.Start, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got {
		if !bytes.Equal(e.Payload, want[e.Offset]) {
			t.Fatalf("entry %v: wrong bytes", e.Offset)
		}
	}
	return len(got)
}

// I8: HardTrim keeps the newest trimmed file as the log's spare, the next
// Roll writes over it, nothing of the old ledger shows through (reads,
// Tail, verify), the sealed file is cut to its entries, and a clean close
// leaves the open ledger's file cut too.
func TestSpareReusedByNextRoll(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	_ = s.CreateLog(1)
	want := fillLedger(t, s, 1, 64, 4000) // ledger A: 64 frames, ~256 KB
	info, _ := s.Info(1)
	a := info.Ledgers[0]
	oldSize := fileSize(t, filepath.Join(dir, "segments", SegmentFileName(1, a.ID)))
	for off, p := range fillLedger(t, s, 1, 2, 100) { // ledger B
		want[off] = p
	}
	if err := s.HardTrim(1, a.FirstOffset+64); err != nil {
		t.Fatal(err)
	}
	spare := filepath.Join(dir, "segments", spareFileName(1))
	if fileSize(t, spare) != oldSize {
		t.Fatalf("spare is not ledger %v's file", a.ID)
	}
	if _, err := s.Roll(1); err != nil {
		t.Fatal(err)
	}
	info, _ = s.Info(1)
	d := info.Ledgers[len(info.Ledgers)-1]
	if _, err := os.Stat(spare); !os.IsNotExist(err) {
		t.Fatalf("spare still there after the Roll: %v", err)
	}
	dPath := filepath.Join(dir, "segments", SegmentFileName(1, d.ID))
	if fileSize(t, dPath) != oldSize {
		t.Fatalf("ledger %v did not reuse the spare (size %d)", d.ID, fileSize(t, dPath))
	}
	for i := 0; i < 3; i++ { // a few small frames over A's big ones
		info, _ := s.Info(1)
		p := payloadFor(info.End, 10+i)
		want[mustAppend(t, s, 1, 1, p, 0).Offset] = p
	}
	if n := readChecked(t, s, 1, want); n != 5 {
		t.Fatalf("%d entries visible, want 5", n)
	}
	// While it runs, the old frames past the end are no tail (verify and
	// Open's recovery read the tail the same way). The tail may hold the
	// newest entries, if the read-only index lags the NoSync commits, but
	// only those.
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	tail, err := r.Tail(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range tail {
		if h.Ledger != d.ID || want[h.Offset] == nil || int(h.Size) != len(want[h.Offset]) {
			t.Fatalf("tail entry %+v is not one of the new ledger's", h)
		}
	}
	_ = r.Close()
	// Rolling the reused ledger cuts its file to its entries (durably,
	// before the record says it is sealed): no old bytes past its end.
	if _, err := s.Roll(1); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, dPath); got != 3*frameHeaderLen+10+11+12 {
		t.Fatalf("sealed reused ledger file is %d bytes, want it cut to its 3 entries", got)
	}
	// Another trim makes another spare (B's file); a clean Close cuts the
	// open ledger written over it.
	info, _ = s.Info(1)
	if err := s.HardTrim(1, info.Ledgers[len(info.Ledgers)-2].FirstOffset); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Roll(1); err != nil {
		t.Fatal(err)
	}
	info, _ = s.Info(1)
	ePath := filepath.Join(dir, "segments", SegmentFileName(1, info.Ledgers[len(info.Ledgers)-1].ID))
	if fileSize(t, ePath) == 0 {
		t.Fatal("second Roll did not reuse the spare")
	}
	p := payloadFor(info.End, 7)
	want[mustAppend(t, s, 1, 1, p, 0).Offset] = p
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fileSize(t, ePath); got != frameHeaderLen+7 {
		t.Fatalf("closed: open ledger file is %d bytes, want it cut to its entry", got)
	}
	verifyClean(t, dir)
	s = newStore(t, dir, Options{})
	defer s.Close()
	if n := readChecked(t, s, 1, want); n != 4 {
		t.Fatalf("after reopen: %d entries, want 4 (D's three and E's one)", n)
	}
}

func verifyClean(t *testing.T, dir string) {
	t.Helper()
	r, err := OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := r.Verify(nil)
	if err != nil || len(rep.Problems) != 0 || len(rep.Notes) != 0 {
		t.Fatalf("verify: %v problems %v notes %v", err, rep.Problems, rep.Notes)
	}
}

// A spare belongs to its log: DeleteLog removes it before the log's
// records (a new log of the same ID starts at offset 0 again, where the
// old frames could continue its sequence), Open adopts a live log's spare
// and removes a dead log's.
func TestSpareLifecycle(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	for _, id := range []LogID{1, 2} {
		_ = s.CreateLog(id)
		fillLedger(t, s, id, 4, 1000)
		fillLedger(t, s, id, 1, 10)
		if err := s.HardTrim(id, 4); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteLog(2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "segments", spareFileName(2))); !os.IsNotExist(err) {
		t.Fatalf("deleted log's spare: %v", err)
	}
	_ = s.CreateLog(2)
	if _, err := s.Roll(2); err != nil {
		t.Fatal(err)
	}
	info, _ := s.Info(2)
	if got := fileSize(t, filepath.Join(dir, "segments", SegmentFileName(2, info.Ledgers[1].ID))); got != 0 {
		t.Fatalf("new log 2 got an old file (%d bytes)", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A spare whose log is gone (as a crash could leave one).
	stray := filepath.Join(dir, "segments", spareFileName(9))
	if err := os.WriteFile(stray, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = newStore(t, dir, Options{})
	defer s.Close()
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatalf("stray spare kept: %v", err)
	}
	if _, err := s.Roll(1); err != nil {
		t.Fatal(err)
	}
	info, _ = s.Info(1)
	if got := fileSize(t, filepath.Join(dir, "segments", SegmentFileName(1, info.Ledgers[len(info.Ledgers)-1].ID))); got == 0 {
		t.Fatal("reopened store did not adopt log 1's spare")
	}
}

// D2 over a reused file: crash while writing a ledger over an old one of
// the same log. Every acknowledged entry comes back, every visible entry
// is one that was written (never an old frame past the end), offsets stay
// dense. The old ledger's frames are large and the new ones small, so the
// new ledger's end falls in the middle of old frames and at old frame
// boundaries alike.
func TestSpareCrash(t *testing.T) {
	for seed := int64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		m := vfstest.NewMachine(0)
		fs := m.Files
		s, err := Open("/data", Options{FS: fs, PebbleFS: m.Index})
		if err != nil {
			t.Fatal(err)
		}
		_ = s.CreateLog(1)
		written := map[Offset][]byte{}
		for i := 0; i < 20; i++ {
			p := make([]byte, 50+rng.IntN(400))
			for j := range p {
				p[j] = byte(rng.Uint32())
			}
			written[mustAppend(t, s, 1, 1+rng.IntN(3), p, 0).Offset] = p
		}
		if _, err := s.Roll(1); err != nil {
			t.Fatal(err)
		}
		info, _ := s.Info(1)
		if err := s.HardTrim(1, info.End); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Roll(1); err != nil { // reuses the trimmed ledger's file
			t.Fatal(err)
		}
		info, _ = s.Info(1)
		f, err := fs.OpenFile(filepath.Join("/data", "segments", SegmentFileName(1, info.Ledgers[len(info.Ledgers)-1].ID)), os.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if size, _ := f.Size(); size == 0 {
			t.Fatalf("seed %d: the new ledger did not reuse the trimmed file", seed)
		}
		_ = f.Close()
		start := info.Start
		acked := map[Offset]bool{}
		var pending []*Pending
		for i := 0; i < 1+rng.IntN(12); i++ {
			p := make([]byte, 1+rng.IntN(120))
			for j := range p {
				p[j] = byte(rng.Uint32())
			}
			pd, err := s.Write(1, 1+rng.IntN(3), p, AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			written[pd.Header().Offset] = p
			pending = append(pending, pd)
			if rng.IntN(3) == 0 {
				for _, pd := range pending {
					if err := pd.Wait(); err != nil {
						t.Fatal(err)
					}
					acked[pd.Header().Offset] = true
				}
				pending = nil
			}
		}
		img := m.Crash(vfstest.PebbleFirst, vfstest.RandomKeep(rng))
		_ = s.Close()
		s2, err := Open("/data", Options{FS: img.Files, PebbleFS: img.Index})
		if err != nil {
			t.Fatalf("seed %d: reopen: %v", seed, err)
		}
		info, _ = s2.Info(1)
		got, err := s2.ReadEntries(1, start, 0, 0)
		if err != nil && info.End > start {
			t.Fatalf("seed %d: read: %v", seed, err)
		}
		next := start
		seen := map[Offset]bool{}
		for _, e := range got {
			if e.Offset != next || !bytes.Equal(e.Payload, written[e.Offset]) {
				t.Fatalf("seed %d: entry at %v (want %v) is not one that was written there", seed, e.Offset, next)
			}
			seen[e.Offset] = true
			next = e.Offset + Offset(e.Records)
		}
		for off := range acked {
			if !seen[off] {
				t.Fatalf("seed %d: acknowledged entry %v lost", seed, off)
			}
		}
		_ = s2.Close()
	}
}

// A full disk (I7) makes the store give up its spares: they are removed
// in the background, and no trimmed file is kept from then on, until the
// store is reopened.
func TestSparesDroppedOnFullDisk(t *testing.T) {
	mem := vfstest.NewMemFS()
	ffs := vfstest.NewFaultFS(mem)
	s, err := Open("/data", Options{FS: ffs, PebbleFS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	spares := func() int {
		names, err := mem.ReadDir("/data/segments")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, name := range names {
			if _, ok := parseSpareFileName(name); ok {
				n++
			}
		}
		return n
	}
	for _, id := range []LogID{1, 2} {
		_ = s.CreateLog(id)
		fillLedger(t, s, id, 4, 500)
		if err := s.HardTrim(id, 4); err != nil {
			t.Fatal(err)
		}
	}
	if spares() != 2 {
		t.Fatalf("%d spares before the disk filled, want 2", spares())
	}
	ffs.FailWrite("", syscall.ENOSPC)
	if _, err := s.Append(1, 1, []byte("x"), AppendOptions{}); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("append on a full disk: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); spares() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d spares left after the disk filled", spares())
		}
		runtime.Gosched()
	}
	ffs.FailWrite("", nil)
	fillLedger(t, s, 1, 3, 500)
	info, _ := s.Info(1)
	if err := s.HardTrim(1, info.Ledgers[len(info.Ledgers)-1].FirstOffset); err != nil {
		t.Fatal(err)
	}
	if spares() != 0 {
		t.Fatal("a spare was kept after the disk had filled")
	}
}
