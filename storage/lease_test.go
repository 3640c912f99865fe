package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// leasedFixture is a store with five entries in a sealed ledger, and
// their headers.
func leasedFixture(t *testing.T) (*Store, string, []EntryHeader) {
	t.Helper()
	dir := t.TempDir()
	s := newStore(t, dir, Options{})
	t.Cleanup(func() { s.Close() })
	_ = s.CreateLog(1)
	for i := 0; i < 5; i++ {
		mustAppend(t, s, 1, 1, payloadFor(Offset(i), 70000), 0)
	}
	if _, err := s.Roll(1); err != nil {
		t.Fatal(err)
	}
	hdrs, err := s.IndexRange(1, 0, 5)
	if err != nil || len(hdrs) != 5 {
		t.Fatalf("index range: %d %v", len(hdrs), err)
	}
	return s, filepath.Join(dir, "segments", SegmentFileName(1, hdrs[0].Ledger)), hdrs
}

// A leased read with pins returns what ReadIndexed returns, each entry
// naming the file range that holds exactly its payload, and keeps the
// ledger's file (I6) until the lease is released, however a hard trim
// removed its records meanwhile.
func TestLeasedReadKeepsFileUntilRelease(t *testing.T) {
	s, name, hdrs := leasedFixture(t)
	want, err := s.ReadIndexed(1, hdrs)
	if err != nil {
		t.Fatal(err)
	}
	lease := NewLease(true)
	got, err := s.ReadIndexedLeased(1, hdrs, lease)
	if err != nil || len(got) != len(want) {
		t.Fatalf("leased read: %d %v", len(got), err)
	}
	for i, e := range got {
		if !bytes.Equal(e.Payload, want[i].Payload) || e.EntryHeader != want[i].EntryHeader {
			t.Fatalf("entry %d differs from ReadIndexed", i)
		}
		if e.Src.File == nil {
			t.Fatalf("entry %d: no file range", i)
		}
		fromFile := make([]byte, len(e.Payload))
		if _, err := e.Src.File.ReadAt(fromFile, e.Src.Off); err != nil || !bytes.Equal(fromFile, e.Payload) {
			t.Fatalf("entry %d: the file range does not hold the payload (%v)", i, err)
		}
	}
	if err := s.HardTrim(1, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); err != nil {
		t.Fatalf("file of a leased read removed before release: %v", err)
	}
	lease.Release()
	lease.Release() // idempotent
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Fatalf("file survives the lease's release: %v", err)
	}
}

// Without pins a lease only holds buffers: the read releases its pins as
// ReadIndexed does (a trim removes the file at once), names no file
// range, and its payloads stay intact until Release.
func TestLeasedReadWithoutPins(t *testing.T) {
	s, name, hdrs := leasedFixture(t)
	lease := NewLease(false)
	defer lease.Release()
	got, err := s.ReadIndexedLeased(1, hdrs, lease)
	if err != nil || len(got) != 5 {
		t.Fatalf("leased read: %d %v", len(got), err)
	}
	if err := s.HardTrim(1, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Fatalf("a lease without pins kept the file: %v", err)
	}
	for i, e := range got {
		if e.Src != (FileSpan{}) {
			t.Fatalf("entry %d names a file range without a pin", i)
		}
		if !bytes.Equal(e.Payload, payloadFor(Offset(i), 70000)) {
			t.Fatalf("entry %d payload changed before release", i)
		}
	}
}

// A lease dropped without Release (an error path that forgot it) unpins
// when it is garbage collected, so the file goes.
func TestLeaseReleasedWhenCollected(t *testing.T) {
	s, name, hdrs := leasedFixture(t)
	func() {
		if _, err := s.ReadIndexedLeased(1, hdrs, NewLease(true)); err != nil {
			t.Fatal(err)
		}
	}()
	if err := s.HardTrim(1, 5); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if _, err := os.Stat(name); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the file of a dropped lease was never removed")
		}
		runtime.Gosched()
	}
}

// A leased read checks every frame's CRC32C like ReadIndexed: a flipped
// byte is ErrCorrupt, never a payload (storage doc.go "Reads").
func TestLeasedReadChecksCRC(t *testing.T) {
	fs := vfstest.NewMemFS()
	s := newStore(t, "/d", Options{FS: fs, PebbleFS: vfs.NewMem()})
	defer s.Close()
	_ = s.CreateLog(1)
	h := mustAppend(t, s, 1, 1, []byte("hello world"), 0)
	f, _ := fs.OpenFile("/d/segments/"+SegmentFileName(1, h.Ledger), 2, 0)
	_, _ = f.WriteAt([]byte{'X'}, h.Pos+frameHeaderLen+3)
	for _, pins := range []bool{false, true} {
		lease := NewLease(pins)
		if got, err := s.ReadIndexedLeased(1, []EntryHeader{h}, lease); !errors.Is(err, ErrCorrupt) || len(got) != 0 {
			t.Fatalf("pins %v: corrupt leased read: %d entries, %v", pins, len(got), err)
		}
		lease.Release()
	}
}
