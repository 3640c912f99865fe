package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The page-cache warm-up writes its bytes and leaves nothing behind, so
// that the memory it used is free again for the workload's writes.
func TestWarmPageCacheLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if n, err := warmPageCache(dir, 3*warmChunk+5); err != nil || n != 3*warmChunk+5 {
		t.Fatalf("wrote %d bytes (%v), want %d", n, err, 3*warmChunk+5)
	}
	if n, err := warmPageCache(dir, 0); err != nil || n != 0 {
		t.Fatalf("wrote %d bytes (%v) when off", n, err)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	if _, err := warmPageCache(filepath.Join(dir, "missing"), 1); err == nil {
		t.Fatal("no error for a directory that does not exist")
	}
}
