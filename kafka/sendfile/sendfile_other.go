//go:build !linux

package sendfile

import (
	"errors"
	"net"
	"os"
)

// Elsewhere than Linux every piece is written from memory.
const haveSendfile = false

func sendRange(*net.TCPConn, *os.File, int64, int) (int, error) {
	return 0, errors.New("sendfile: not supported on this system")
}
