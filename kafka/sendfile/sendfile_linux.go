package sendfile

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

const haveSendfile = true

// errShortFile: the file ended before the range did.
var errShortFile = errors.New("sendfile: file shorter than the range")

// sendRange sends n bytes of f from off to tc. sendfile with an explicit
// offset neither uses nor moves f's own offset, so f may be shared; on a
// full socket buffer it waits in the runtime's poller (EAGAIN), under
// tc's write deadline.
func sendRange(tc *net.TCPConn, f *os.File, off int64, n int) (int, error) {
	dst, err := tc.SyscallConn()
	if err != nil {
		return 0, err
	}
	src, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	written := 0
	var serr error
	cerr := src.Control(func(sfd uintptr) {
		werr := dst.Write(func(dfd uintptr) bool {
			for written < n {
				m, e := syscall.Sendfile(int(dfd), int(sfd), &off, n-written)
				if m > 0 {
					written += m
				}
				switch {
				case e == syscall.EAGAIN:
					return false // wait until the socket takes more
				case e == syscall.EINTR:
					continue
				case e != nil:
					serr = os.NewSyscallError("sendfile", e)
					return true
				case m == 0:
					serr = errShortFile
					return true
				}
			}
			return true
		})
		if serr == nil {
			serr = werr
		}
	})
	if serr == nil {
		serr = cerr
	}
	if serr == nil && written < n {
		serr = io.ErrShortWrite
	}
	return written, serr
}
