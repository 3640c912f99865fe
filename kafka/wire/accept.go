package wire

import (
	"errors"
	"os"
	"syscall"
)

// RetryableAccept says whether an accept error is a transient resource
// shortage (out of file descriptors, a connection reset while queued) after
// which the listener still works: the server backs off and accepts again
// rather than stop serving.
func RetryableAccept(err error) bool {
	if IsTimeout(err) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.ECONNRESET} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
