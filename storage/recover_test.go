package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// TestReopenAfterTornTail: garbage and a half frame after the last whole
// entry are truncated; whole unindexed entries are re-indexed.
func TestReopenAfterTornTail(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	_ = s.CreateLog(1)
	var last EntryHeader
	for i := 0; i < 5; i++ {
		last = mustAppend(t, s, 1, 2, payloadFor(Offset(i*2), 40), int64(i))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "segments", SegmentFileName(1, last.Ledger))
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// One whole frame the index never saw, then a torn one.
	end := last.Pos + frameHeaderLen + int64(last.Size)
	whole := make([]byte, frameHeaderLen+3)
	copy(whole[frameHeaderLen:], "new")
	encodeFrameHeader(whole, 10, 1, 99, whole[frameHeaderLen:], suffixCRC{})
	torn := make([]byte, frameHeaderLen+100)
	encodeFrameHeader(torn, 11, 1, 99, torn[frameHeaderLen:], suffixCRC{})
	if _, err := f.WriteAt(append(whole, torn[:60]...), end); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	s = newStore(t, dir, Options{})
	defer s.Close()
	info, _ := s.Info(1)
	if info.End != 11 || info.Ledgers[0].Entries != 6 {
		t.Fatalf("after torn tail %+v", info)
	}
	st, _ := os.Stat(name)
	if want := end + int64(len(whole)); st.Size() != want {
		t.Fatalf("file is %d bytes, want %d", st.Size(), want)
	}
	got, err := s.ReadEntries(1, 10, 0, 0)
	if err != nil || len(got) != 1 || string(got[0].Payload) != "new" || got[0].Cum != last.Cum+3 {
		t.Fatalf("re-indexed entry %+v %v", got, err)
	}
	if h, err := s.SeekTime(1, 99); err != nil || h.Offset != 10 {
		t.Fatalf("time index of re-indexed entry %+v %v", h, err)
	}
	if h := mustAppend(t, s, 1, 1, []byte("x"), 0); h.Offset != 11 || h.Entry != 6 {
		t.Fatalf("append after torn tail %+v", h)
	}
}

// TestOpenReadsOnlyTheTail: Open never reads sealed ledgers nor the indexed
// part of the open one (start-up time does not grow with the data).
func TestOpenReadsOnlyTheTail(t *testing.T) {
	mem := vfstest.NewMemFS()
	pfs := vfs.NewMem()
	s := newStore(t, "/d", Options{FS: mem, PebbleFS: pfs})
	_ = s.CreateLog(1)
	for i := 0; i < 3; i++ {
		mustAppend(t, s, 1, 1, make([]byte, 1000), 0)
		_, _ = s.Roll(1)
	}
	mustAppend(t, s, 1, 1, make([]byte, 1000), 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ffs := vfstest.NewFaultFS(mem)
	ffs.FailReadAt("", errors.New("open read a data file"))
	s = newStore(t, "/d", Options{FS: ffs, PebbleFS: pfs})
	defer s.Close()
	if info, _ := s.Info(1); info.End != 4 {
		t.Fatalf("end %v", info.End)
	}
}

// countingPebbleFS counts pebble's write operations, opening a file for
// writing included (errorfs files that under reads).
func countingPebbleFS(n *atomic.Int64) vfs.FS {
	return countOpenRW{errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			n.Add(1)
		}
		return nil
	})), n}
}

type countOpenRW struct {
	vfs.FS
	n *atomic.Int64
}

func (c countOpenRW) OpenReadWrite(name string, cat vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	c.n.Add(1)
	return c.FS.OpenReadWrite(name, cat, opts...)
}

// keyspaceOf is every pebble key and value (every prefix, memtable
// included), rendered for comparison.
func keyspaceOf(t *testing.T, s *Store) string {
	t.Helper()
	var b strings.Builder
	if err := s.Keyspace(func(k, v []byte) error {
		fmt.Fprintf(&b, "%x=%x\n", k, v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReadsWriteNothing: every read API leaves files and pebble untouched
// (no mutating file call, no open for writing, not one key of the whole
// keyspace changed, memtable included) and returns the right data (R1 in
// ledger/ relies on this).
func TestReadsWriteNothing(t *testing.T) {
	var pebbleWrites atomic.Int64
	ffs := vfstest.NewFaultFS(vfstest.NewMemFS())
	s := newStore(t, "/d", Options{FS: ffs, PebbleFS: countingPebbleFS(&pebbleWrites)})
	defer s.Close()
	_ = s.CreateLog(1)
	var hs []EntryHeader
	for i := 0; i < 20; i++ {
		hs = append(hs, mustAppend(t, s, 1, 3, payloadFor(Offset(i), 500), int64(i)))
		if i%7 == 6 {
			_, _ = s.Roll(1)
		}
	}
	_ = s.SoftTrim(1, 4) // entry 0 (offsets 0-2) is trimmed, entry 1 visible
	files, pw, keys, wal := ffs.Mutations(), pebbleWrites.Load(), keyspaceOf(t, s), s.IndexWrites()
	if files == 0 || pw == 0 || keys == "" || wal == 0 {
		t.Fatalf("counters do not count: files %d pebble %d keys %q", files, pw, keys)
	}
	// want checks that es are whole consecutive entries, the first holding
	// off, each with the payload it was appended with.
	want := func(what string, off Offset, es []Entry, err error) {
		t.Helper()
		if err != nil || len(es) == 0 {
			t.Fatalf("%s(%d): %d entries, %v", what, off, len(es), err)
		}
		for j, e := range es {
			i := int(e.Offset / 3)
			if i >= len(hs) || e.EntryHeader != hs[i] || !bytes.Equal(e.Payload, payloadFor(Offset(i), 500)) {
				t.Fatalf("%s(%d): entry %d is %+v, want %+v", what, off, j, e.EntryHeader, hs[min(i, len(hs)-1)])
			}
			if j == 0 && !(e.Offset <= off && off < e.End()) || j > 0 && e.Offset != es[j-1].End() {
				t.Fatalf("%s(%d): entry %d at %d out of place", what, off, j, e.Offset)
			}
		}
	}
	for i := 0; i < 50; i++ {
		off := Offset(3 + i%57) // every visible offset, 3..59
		es, err := s.ReadEntries(1, off, 5, 2000)
		want("ReadEntries", off, es, err)
		if h, err := s.FirstOffset(1); err != nil || h != hs[1] {
			t.Fatalf("FirstOffset %+v %v", h, err)
		}
		if h, err := s.LastOffset(1); err != nil || h != hs[19] {
			t.Fatalf("LastOffset %+v %v", h, err)
		}
		if h, err := s.Floor(1, off); err != nil || h != hs[off/3] {
			t.Fatalf("Floor(%d) %+v %v", off, h, err)
		}
		_, _ = s.Info(1)
		hdrs, err := s.IndexRange(1, off, 4)
		if err != nil || len(hdrs) == 0 || hdrs[0] != hs[off/3] {
			t.Fatalf("IndexRange(%d) %+v %v", off, hdrs, err)
		}
		es, err = s.ReadIndexed(1, hdrs)
		want("ReadIndexed", off, es, err)
		if h, err := s.EntryAt(1, hs[i%19+1].Ledger, hs[i%19+1].Entry); err != nil || h != hs[i%19+1] {
			t.Fatalf("EntryAt %+v %v", h, err)
		}
		if h, err := s.SeekTime(1, int64(i%19+1)); err != nil || h != hs[i%19+1] {
			t.Fatalf("SeekTime(%d) %+v %v", i%19+1, h, err)
		}
		release, _ := s.Pin(1, hs[19].Ledger)
		release()
		_, _ = s.GetMeta([]byte("k"))
		_ = s.ScanMeta(nil, func(k, v []byte) error { return nil })
	}
	if got := ffs.Mutations(); got != files {
		t.Fatalf("reads changed segment files: %d mutations", got-files)
	}
	if got := pebbleWrites.Load(); got != pw {
		t.Fatalf("reads wrote to pebble: %d write ops", got-pw)
	}
	if got := s.IndexWrites(); got != wal {
		t.Fatalf("reads wrote %d bytes to pebble's WAL", got-wal)
	}
	if got := keyspaceOf(t, s); got != keys {
		t.Fatalf("reads changed pebble's keyspace:\nbefore:\n%s\nafter:\n%s", keys, got)
	}
}

// TestDeleteLogWaitsForPins: DeleteLog removes an unpinned file at once and
// a pinned one when the last pin goes.
func TestDeleteLogWaitsForPins(t *testing.T) {
	mem := vfstest.NewMemFS()
	s := newStore(t, "/d", Options{FS: mem, PebbleFS: vfs.NewMem()})
	defer s.Close()
	_ = s.CreateLog(1)
	h := mustAppend(t, s, 1, 1, []byte("a"), 0)
	led2, _ := s.Roll(1)
	release, err := s.Pin(1, h.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteLog(1); err != nil {
		t.Fatal(err)
	}
	names, _ := mem.ReadDir("/d/segments")
	if len(names) != 1 || names[0] != SegmentFileName(1, h.Ledger) {
		t.Fatalf("files while pinned: %v (open ledger %v)", names, led2)
	}
	release()
	if names, _ := mem.ReadDir("/d/segments"); len(names) != 0 {
		t.Fatalf("files after release: %v", names)
	}
}

// TestPinnedReadSurvivesHardTrim: a read holding a pin keeps reading the
// file while HardTrim removes the ledger's records.
func TestPinnedReadSurvivesHardTrim(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{})
	defer s.Close()
	_ = s.CreateLog(1)
	for i := 0; i < 5; i++ {
		mustAppend(t, s, 1, 1, payloadFor(Offset(i), 100), 0)
	}
	_, _ = s.Roll(1)
	hdrs, err := s.IndexRange(1, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	release, err := s.Pin(1, hdrs[0].Ledger)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := s.HardTrim(1, 5); err != nil {
		t.Fatal(err)
	}
	// The read in progress still reads the pinned file; new reads see the
	// ledger gone.
	if got, err := s.ReadIndexed(1, hdrs); err != nil || len(got) != 5 {
		t.Fatalf("pinned read after hard trim: %d %v", len(got), err)
	}
	if _, err := s.ReadEntries(1, 0, 0, 0); !errors.Is(err, ErrTrimmed) {
		t.Fatalf("read below start: %v", err)
	}
	release()
	if _, err := s.ReadIndexed(1, hdrs); !errors.Is(err, ErrRemoved) {
		t.Fatalf("read of a removed, unpinned ledger: %v", err)
	}
}

// TestOrphanFilesRemoved: a segment file no record names (a crash between
// creating a ledger file and recording it) is removed at Open.
func TestOrphanFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	_ = s.CreateLog(1)
	_ = s.Close()
	orphan := filepath.Join(dir, "segments", SegmentFileName(1, 99))
	if err := os.WriteFile(orphan, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = newStore(t, dir, Options{})
	defer s.Close()
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("orphan survived: %v", err)
	}
	if led, err := s.Roll(1); err != nil || led <= 99 {
		t.Fatalf("roll after orphan %v %v", led, err)
	}
}
