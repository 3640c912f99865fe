package main

// diskprobe.go measures the disk under --work-dir before any system runs,
// so that every result says what disk it ran on: the development VM's disk
// has been about 4× slower on one day than on another, and a durable
// system's number without its disk is misleading.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// diskInfo is what the probe measured; Error is set when it could not.
type diskInfo struct {
	Sync4kP50Ms   float64 `json:"sync_4k_p50_ms"`
	Sync4kP99Ms   float64 `json:"sync_4k_p99_ms"`
	SyncWriteMBps float64 `json:"sync_write_mbps"` // 1 MB = 10^6 bytes
	Error         string  `json:"error,omitempty"`
}

// String is the line printed above the table.
func (d diskInfo) String() string {
	if d.Error != "" {
		return "disk (work dir): probe failed: " + d.Error
	}
	return fmt.Sprintf("disk (work dir): 4 KiB write+fdatasync p50 %.2f ms p99 %.2f ms; "+
		"1 MiB writes, fdatasync per 8 MiB: %s MB/s", d.Sync4kP50Ms, d.Sync4kP99Ms, fmtRate(d.SyncWriteMBps))
}

// diskProbeSizes sets how much the probe writes; tests shrink it.
type diskProbeSizes struct {
	SyncWrites    int   // appends, each followed by fdatasync (the latency probe)
	SyncWriteSize int   // bytes per append
	StreamBytes   int64 // bytes of the throughput probe
	StreamWrite   int   // bytes per write of the throughput probe
	StreamSync    int64 // fdatasync after this many bytes (and at the end)
}

// defaultDiskProbe: a group commit of one small batch (latency), and a
// large sequential fill synced as a server's group commits would (MB/s).
var defaultDiskProbe = diskProbeSizes{
	SyncWrites: 200, SyncWriteSize: 4 << 10,
	StreamBytes: 256 << 20, StreamWrite: 1 << 20, StreamSync: 8 << 20,
}

// measureDisk runs the default probe in a directory of its own under root
// and reports a failure in the result rather than failing the run
// (invariant 1).
func measureDisk(ctx context.Context, root string) *diskInfo {
	fmt.Fprintln(os.Stderr, "== disk probe")
	d, err := probeDisk(ctx, filepath.Join(root, "disk-probe"), defaultDiskProbe)
	if err != nil {
		d.Error = err.Error()
	}
	return &d
}

// probeDisk measures dir's disk with the given sizes. It creates dir and
// removes it afterwards, so no probe data is left to occupy the page cache
// or the disk the systems then use.
func probeDisk(ctx context.Context, dir string, sz diskProbeSizes) (diskInfo, error) {
	var d diskInfo
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return d, err
	}
	defer os.RemoveAll(dir)
	lat, err := syncAppends(ctx, filepath.Join(dir, "sync"), sz.SyncWrites, sz.SyncWriteSize)
	if err != nil {
		return d, fmt.Errorf("kgbench: disk probe: %w", err)
	}
	ps := percentiles("sync", lat, 0.5, 0.99)
	d.Sync4kP50Ms, d.Sync4kP99Ms = ps[0].Ms, ps[1].Ms
	if d.SyncWriteMBps, err = syncedStream(ctx, filepath.Join(dir, "stream"), sz); err != nil {
		return d, fmt.Errorf("kgbench: disk probe: %w", err)
	}
	return d, nil
}

// syncAppends times n appends of size bytes at the end of a new file, each
// followed by fdatasync: the cost of acknowledging one small durable batch.
func syncAppends(ctx context.Context, path string, n, size int) ([]time.Duration, error) {
	if n < 1 || size < 1 {
		return nil, errors.New("need at least one write of at least one byte")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := randomBytes(size)
	out := make([]time.Duration, 0, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		if _, err := f.WriteAt(buf, int64(i)*int64(size)); err != nil {
			return nil, err
		}
		if err := fdatasync(f); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, f.Close()
}

// syncedStream writes sz.StreamBytes to a new file and returns MB/s from
// the first write to the last fdatasync.
func syncedStream(ctx context.Context, path string, sz diskProbeSizes) (float64, error) {
	if sz.StreamBytes < 1 || sz.StreamWrite < 1 || sz.StreamSync < 1 {
		return 0, errors.New("stream sizes must be positive")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := randomBytes(sz.StreamWrite)
	var written, unsynced int64
	start := time.Now()
	for written < sz.StreamBytes {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, err := f.Write(buf[:min(int64(len(buf)), sz.StreamBytes-written)])
		written, unsynced = written+int64(n), unsynced+int64(n)
		if err != nil {
			return 0, err
		}
		if unsynced >= sz.StreamSync || written == sz.StreamBytes {
			if err := fdatasync(f); err != nil {
				return 0, err
			}
			unsynced = 0
		}
	}
	secs := time.Since(start).Seconds()
	return float64(written) / bytesPerMB / secs, f.Close()
}

// fdatasync rather than (*os.File).Sync, which is fsync: kgateway syncs
// segment data with fdatasync (storage/osfs.go), and the probe should pay
// what it pays. (kfake-durable uses fsync, which may cost more.)
func fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var syncErr error
	if err := rc.Control(func(fd uintptr) { syncErr = syscall.Fdatasync(int(fd)) }); err != nil {
		return err
	}
	return syncErr
}

// randomBytes: incompressible, so no layer below can shrink the writes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
