// Package sendfile writes a response made of memory pieces and ranges of
// files to a connection, sending the file ranges to a plaintext TCP
// socket with sendfile(2): their bytes go from the page cache to the
// socket without being copied through the process (Kafka's zero-copy
// fetch).
//
// A piece names its bytes twice: Bytes, always, and for a file piece the
// range of File they lie in (Off, len(Bytes)). The caller promises that
// the range holds exactly Bytes while Write runs (kgateway's fetch holds
// the ledger file's pin, and the bytes were read and their CRC checked
// just before: storage "Leased reads"). Write sends the file range when
// it can — a *net.TCPConn and a piece of at least MinFileBytes — and
// Bytes otherwise, so a TLS connection gets the same bytes through its
// encryption.
package sendfile

import (
	"net"
	"os"
)

// MinFileBytes is the smallest file piece sent with sendfile; a smaller
// one goes with the memory pieces around it in one writev, which costs
// less than a system call of its own.
const MinFileBytes = 32 << 10

// Piece is one part of a response.
type Piece struct {
	Bytes []byte
	// File, when non-nil, holds Bytes at Off.
	File *os.File
	Off  int64
}

// Supported reports whether Write sends file pieces of c with sendfile.
func Supported(c net.Conn) bool {
	_, ok := c.(*net.TCPConn)
	return ok && haveSendfile
}

// Write writes pieces to c in order and returns the bytes written, file
// pieces with sendfile when files is set and c Supported. The
// connection's write deadline applies to every part.
func Write(c net.Conn, pieces []Piece, files bool) (int64, error) {
	tc, _ := c.(*net.TCPConn)
	if !haveSendfile || !files {
		tc = nil
	}
	var (
		total int64
		mem   net.Buffers
	)
	flush := func() error {
		if len(mem) == 0 {
			return nil
		}
		n, err := mem.WriteTo(c)
		total += n
		mem = mem[:0]
		return err
	}
	for _, p := range pieces {
		if tc == nil || p.File == nil || len(p.Bytes) < MinFileBytes {
			mem = append(mem, p.Bytes)
			continue
		}
		if err := flush(); err != nil {
			return total, err
		}
		n, err := sendRange(tc, p.File, p.Off, len(p.Bytes))
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, flush()
}
