package fsys

import (
	"os"

	"golang.org/x/sys/unix"
)

// Allocate is fallocate(2) with FALLOC_FL_KEEP_SIZE, repeated after EINTR
// (Allocator).
func (o osFile) Allocate(off, n int64) error {
	rc, err := o.f.SyscallConn()
	if err != nil {
		return err
	}
	for {
		var ferr error
		if err := rc.Control(func(fd uintptr) {
			ferr = unix.Fallocate(int(fd), unix.FALLOC_FL_KEEP_SIZE, off, n)
		}); err != nil {
			return err
		}
		if ferr != unix.EINTR {
			if ferr != nil {
				return &os.PathError{Op: "fallocate", Path: o.f.Name(), Err: ferr}
			}
			return nil
		}
	}
}
