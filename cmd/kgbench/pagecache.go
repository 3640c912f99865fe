package main

// pagecache.go readies the page cache's memory before every workload, the
// same for every system.
//
// On a VM whose free memory is handed back to the host (virtio-balloon
// free page reporting), a page the kernel has not used for a few seconds
// must be supplied by the host again at its next first touch. Writing 0.5
// GB into the page cache then costs the writer 1.0–1.6 s of CPU per GB
// after a pause, against 0.17–0.29 right after another file's pages were
// freed (BENCHMARKS.md "Produce CPU: the VM's first touch of page-cache
// memory"). Which system meets which depends on how long its predecessor
// in the round took to start (a JVM: seconds; kgateway: milliseconds), not
// on what it does with a byte. So before each workload kgbench writes
// --warm-page-cache bytes into a file beside the system's data, unsynced,
// and deletes it: the workload's page-cache writes then take pages the
// guest has just used, as on a machine without page reporting. Its time
// and CPU are kgbench's own, before the workload's clock starts.

import (
	"fmt"
	"os"
	"path/filepath"
)

// warmChunk is the write size of the warm-up.
const warmChunk = 1 << 20

// warmPageCache writes n bytes into a new file in dir without syncing
// them, removes it and returns how many it wrote. n ≤ 0 does nothing.
func warmPageCache(dir string, n int64) (written int64, err error) {
	if n <= 0 {
		return 0, nil
	}
	path := filepath.Join(dir, "kgbench-page-cache-warmup")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, fmt.Errorf("warm page cache: %w", err)
	}
	defer os.Remove(path)
	defer f.Close()
	buf := make([]byte, warmChunk)
	for i := range buf {
		buf[i] = byte(i)
	}
	for written < n {
		k, err := f.Write(buf[:min(int64(len(buf)), n-written)])
		written += int64(k)
		if err != nil {
			return written, fmt.Errorf("warm page cache: %w", err)
		}
	}
	return written, nil
}
