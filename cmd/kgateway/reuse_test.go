package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
)

// log.segment.reuse reaches the store: with it (the default) retention
// leaves the partition one trimmed file to write its next ledger over
// (storage I8); without it, none, and a restart without it removes one
// left by an earlier run.
func TestSegmentReuseConfig(t *testing.T) {
	dir := t.TempDir()
	run := func(reuse bool, wantSpares int) {
		t.Helper()
		g := startTestWith(t, dir, func(c *Config) {
			c.SegmentReuse, c.LogSegmentBytes, c.LogRetentionBytes = reuse, 300, 900
		})
		if spares := countSpares(t, dir); !reuse && spares != 0 {
			t.Fatalf("log.segment.reuse=false: Open kept %d spare files", spares)
		}
		cl := newClient(t, g)
		for range 12 {
			produce(t, cl, "reuse", strings.Repeat("x", 200))
		}
		if err := g.Resolver().Passes().RunRetention(time.Now()); err != nil {
			t.Fatal(err)
		}
		if got := countSpares(t, dir); got != wantSpares {
			t.Fatalf("log.segment.reuse=%v: %d spare files after retention, want %d", reuse, got, wantSpares)
		}
		cl.Close()
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	run(true, 1)
	run(false, 0)
}

func countSpares(t *testing.T, dir string) int {
	t.Helper()
	spares, err := storage.SpareFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(spares)
}
