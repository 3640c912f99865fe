package wire

import (
	"net"
	"syscall"
	"unsafe"
)

// SocketQueued is how many received bytes wait in nc's kernel buffer
// (ioctl SIOCINQ), 0 when it cannot tell. ReadBody's callers use it to size a
// frame's buffer once for bytes already sent.
func SocketQueued(nc net.Conn) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	var n int32
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}); err != nil || errno != 0 || n < 0 {
		return 0
	}
	return int(n)
}
