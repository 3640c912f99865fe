package fsys

import (
	"io"
	"math/bits"
	"os"
	"syscall"
	"unsafe"
)

// WriteAtv is pwritev(2), repeated for what a short write left and after
// EINTR (VectorWriter).
func (o osFile) WriteAtv(bufs [][]byte, off int64) (int, error) {
	iov := make([]syscall.Iovec, 0, len(bufs))
	for _, b := range bufs {
		if len(b) > 0 {
			v := syscall.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			iov = append(iov, v)
		}
	}
	rc, err := o.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	total := 0
	for len(iov) > 0 {
		var n uintptr
		var errno syscall.Errno
		if err := rc.Write(func(fd uintptr) bool {
			pos := off + int64(total)
			lo, hi := uintptr(pos), uintptr(uint64(pos)>>(bits.UintSize/2)>>(bits.UintSize/2))
			n, _, errno = syscall.Syscall6(syscall.SYS_PWRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)), lo, hi, 0)
			return true
		}); err != nil {
			return total, err
		}
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return total, &os.PathError{Op: "pwritev", Path: o.f.Name(), Err: errno}
		case n == 0:
			return total, &os.PathError{Op: "pwritev", Path: o.f.Name(), Err: io.ErrShortWrite}
		}
		total += int(n)
		iov = advance(iov, int(n))
	}
	return total, nil
}

// advance drops the first n bytes written from iov.
func advance(iov []syscall.Iovec, n int) []syscall.Iovec {
	for len(iov) > 0 && n >= int(iov[0].Len) {
		n -= int(iov[0].Len)
		iov = iov[1:]
	}
	if n > 0 {
		iov[0].Base = (*byte)(unsafe.Add(unsafe.Pointer(iov[0].Base), n))
		iov[0].SetLen(int(iov[0].Len) - n)
	}
	return iov
}
