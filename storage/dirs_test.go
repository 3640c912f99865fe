package storage

import (
	"testing"

	"github.com/kgateway/kgateway/storage/vfstest"
)

// TestDirsDurable (I9): a crash right after the first acknowledgement,
// keeping only what was synced (MemFS loses a directory whose entry was
// never synced, with everything in it), still has the data directory,
// segments/ and the acknowledged entry, whether Open created one
// directory level or several.
func TestDirsDurable(t *testing.T) {
	for _, dir := range []string{"/data", "/srv/kgw/data"} {
		m := vfstest.NewMachine(0)
		s := newStore(t, dir, Options{FS: m.Files, PebbleFS: m.Index})
		if err := s.CreateLog(1); err != nil {
			t.Fatal(err)
		}
		h := mustAppend(t, s, 1, 1, []byte("acknowledged"), 0)
		img := m.Crash(vfstest.PebbleFirst, vfstest.SyncedOnly)
		_ = s.Close()
		s2, err := Open(dir, Options{FS: img.Files, PebbleFS: img.Index})
		if err != nil {
			t.Fatalf("%s: reopen: %v\n%v", dir, err, img.Files)
		}
		got, err := s2.ReadEntries(1, h.Offset, 1, 0)
		if err != nil || len(got) != 1 || string(got[0].Payload) != "acknowledged" {
			t.Fatalf("%s: acknowledged entry after the crash: %v %v\n%v", dir, got, err, img.Files)
		}
		_ = s2.Close()
	}
}

// TestDirsDurablePreexisting (I9): a data directory someone else created
// (and segments/ in it, left by a start cut short), whose entries were
// never synced, is made durable by Open before the first
// acknowledgement: a crash right after it keeps the directory and the
// acknowledged entry.
func TestDirsDurablePreexisting(t *testing.T) {
	for _, pre := range []string{"/srv/data", "/srv/data/segments"} {
		m := vfstest.NewMachine(0)
		if err := m.Files.MkdirAll("/srv", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := m.Files.SyncDir("/"); err != nil { // /srv itself is durable
			t.Fatal(err)
		}
		if err := m.Files.MkdirAll(pre, 0o755); err != nil { // never synced
			t.Fatal(err)
		}
		s := newStore(t, "/srv/data", Options{FS: m.Files, PebbleFS: m.Index})
		if err := s.CreateLog(1); err != nil {
			t.Fatal(err)
		}
		h := mustAppend(t, s, 1, 1, []byte("acknowledged"), 0)
		img := m.Crash(vfstest.PebbleFirst, vfstest.SyncedOnly)
		_ = s.Close()
		s2, err := Open("/srv/data", Options{FS: img.Files, PebbleFS: img.Index})
		if err != nil {
			t.Fatalf("%s pre-existing: reopen: %v\n%v", pre, err, img.Files)
		}
		got, err := s2.ReadEntries(1, h.Offset, 1, 0)
		if err != nil || len(got) != 1 || string(got[0].Payload) != "acknowledged" {
			t.Fatalf("%s pre-existing: acknowledged entry after the crash: %v %v\n%v", pre, got, err, img.Files)
		}
		_ = s2.Close()
	}
}
