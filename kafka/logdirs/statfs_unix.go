//go:build linux || darwin

package logdirs

import (
	"math"
	"syscall"
)

// Stat is the usage of dir's file system; an error (the directory is
// gone) is Kafka's storage error. A size past int64 is MaxInt64, as
// Kafka's adjustForLargeFileSystems.
func Stat(dir string) (Usage, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return Usage{Total: -1, Usable: -1}, err
	}
	bs := uint64(st.Bsize)
	return Usage{Total: clamp(uint64(st.Blocks), bs), Usable: clamp(uint64(st.Bavail), bs)}, nil
}

func clamp(blocks, size uint64) int64 {
	if size != 0 && blocks > math.MaxInt64/size {
		return math.MaxInt64
	}
	return int64(blocks * size)
}
