package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeDisk runs the probe at toy sizes: it must produce figures (their
// size is the disk's business) and leave nothing behind.
func TestProbeDisk(t *testing.T) {
	for _, sz := range []diskProbeSizes{
		{SyncWrites: 3, SyncWriteSize: 4 << 10, StreamBytes: 3 << 20, StreamWrite: 1 << 20, StreamSync: 2 << 20},
		{SyncWrites: 1, SyncWriteSize: 1, StreamBytes: 1000, StreamWrite: 300, StreamSync: 1 << 20}, // partial last write
	} {
		dir := filepath.Join(t.TempDir(), "probe")
		d, err := probeDisk(context.Background(), dir, sz)
		if err != nil {
			t.Fatalf("%+v: %v", sz, err)
		}
		if d.Sync4kP50Ms > d.Sync4kP99Ms || d.SyncWriteMBps <= 0 || d.Error != "" {
			t.Errorf("%+v: implausible %+v", sz, d)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%+v: probe dir left behind (stat: %v)", sz, err)
		}
	}
}

func TestProbeDiskFails(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		sz   diskProbeSizes
		want string
	}{
		{"cancelled", cancelled, defaultDiskProbe, "context canceled"},
		{"no writes", context.Background(), diskProbeSizes{StreamBytes: 1, StreamWrite: 1, StreamSync: 1}, "at least one write"},
		{"no stream", context.Background(), diskProbeSizes{SyncWrites: 1, SyncWriteSize: 1}, "stream sizes"},
	} {
		_, err := probeDisk(tc.ctx, t.TempDir(), tc.sz)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestDiskLine(t *testing.T) {
	for _, tc := range []struct {
		d    diskInfo
		want string
	}{
		{diskInfo{Sync4kP50Ms: 1.214, Sync4kP99Ms: 2.3, SyncWriteMBps: 402.4},
			"disk (work dir): 4 KiB write+fdatasync p50 1.21 ms p99 2.30 ms; 1 MiB writes, fdatasync per 8 MiB: 402 MB/s"},
		{diskInfo{Error: "kgbench: disk probe: no space"}, "disk (work dir): probe failed: kgbench: disk probe: no space"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
