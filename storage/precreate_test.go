package storage

import (
	"path/filepath"
	"testing"

	"github.com/kgateway/kgateway/storage/vfstest"
)

// TestPrecreatedFiles: CreateLogs creates the new logs' files before it
// returns, before any Write; a crash then (the files' directory
// entries unsynced) recovers every log empty and writable, and the first
// entries written to precreated files survive a crash once acknowledged
// (the group commit synced the directory, I1).
func TestPrecreatedFiles(t *testing.T) {
	m := vfstest.NewMachine(0)
	s, err := Open("/data", Options{FS: m.Files, PebbleFS: m.Index, JournalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var logs []LogID
	for id := LogID(1); id <= 40; id++ {
		logs = append(logs, id)
	}
	if err := s.CreateLogs(logs...); err != nil {
		t.Fatal(err)
	}
	name := func(id LogID) string {
		info, _ := s.Info(id)
		return filepath.Join(s.segDir, SegmentFileName(id, info.Ledgers[0].ID))
	}
	for _, id := range logs {
		f, err := m.Files.OpenFile(name(id), 0, 0)
		if err != nil {
			t.Fatalf("%v's file was not created by CreateLogs: %v", id, err)
		}
		_ = f.Close()
	}
	early := m.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
	acked := map[LogID]map[Offset][]byte{}
	writeRounds(t, s, logs, 1, "first entry", acked)
	late := m.Crash(vfstest.FilesFirst, vfstest.SyncedOnly)
	_ = s.Close()
	for i, img := range []vfstest.Image{early, late} {
		s2, err := Open("/data", Options{FS: img.Files, PebbleFS: img.Index})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			checkAcked(t, s2, acked)
		}
		for _, id := range logs {
			if _, err := s2.Append(id, 1, []byte("after"), AppendOptions{}); err != nil {
				t.Fatalf("crash %d: %v after recovery: %v", i, id, err)
			}
		}
		_ = s2.Close()
	}
}
