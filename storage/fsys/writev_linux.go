package fsys

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// WriteAtv is pwritev(2), repeated for what a short write left and after
// EINTR (VectorWriter).
func (o osFile) WriteAtv(bufs [][]byte, off int64) (int, error) {
	rc, err := o.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	total := 0
	for bufs = advance(bufs, 0); len(bufs) > 0; {
		var n int
		var werr error
		if err := rc.Write(func(fd uintptr) bool {
			n, werr = unix.Pwritev(int(fd), bufs, off+int64(total))
			return true
		}); err != nil {
			return total, err
		}
		switch {
		case werr == unix.EINTR:
			continue
		case werr != nil:
			return total, &os.PathError{Op: "pwritev", Path: o.f.Name(), Err: werr}
		case n == 0:
			return total, &os.PathError{Op: "pwritev", Path: o.f.Name(), Err: io.ErrShortWrite}
		}
		total += n
		bufs = advance(bufs, n)
	}
	return total, nil
}

// advance drops the first n bytes written from bufs, and the empty
// buffers before what is left. A buffer cut in the middle is cut in a
// copy of the list: the caller's buffers stay as they were.
func advance(bufs [][]byte, n int) [][]byte {
	for len(bufs) > 0 && n >= len(bufs[0]) {
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	if n > 0 {
		bufs = append([][]byte{bufs[0][n:]}, bufs[1:]...)
	}
	return bufs
}
