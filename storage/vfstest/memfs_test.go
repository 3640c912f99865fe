package vfstest

import (
	"os"
	"testing"
)

// A directory entry is durable only once its parent is synced: a crash
// loses a directory created without that sync, with the synced file in it.
func TestMemFSDirectoryDurability(t *testing.T) {
	m := NewMemFS()
	if err := m.MkdirAll("/a/b", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := m.OpenFile("/a/b/f", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteAt([]byte("x"), 0)
	_ = f.Sync()
	_ = m.SyncDir("/a/b")
	survives := func() bool {
		_, err := m.Crash(CrashConfig{}).OpenFile("/a/b/f", os.O_RDONLY, 0)
		return err == nil
	}
	if survives() {
		t.Fatal("file survived although /a and /a/b were never made durable")
	}
	_ = m.SyncDir("/a") // b's entry in a
	if survives() {
		t.Fatal("file survived although /a's entry in / was never synced")
	}
	_ = m.SyncDir("/")
	if !survives() {
		t.Fatal("file lost although every entry on its path was synced")
	}
}
