package wire

// Reading one frame (the frame size limit, the request memory budget). A frame's buffer grows as its bytes arrive,
// and the budget is charged for the buffer before it grows: what a client
// holds of queued.max.request.bytes is what it has sent (at most twice,
// plus MinBodyGrow), never what it declared. A client that declares
// 100 MiB and sends nothing holds nothing.

import (
	"bufio"
	"io"
)

// MinBodyGrow is the smallest step a frame's buffer grows by.
const MinBodyGrow = 4 << 10

// ReadBody reads a size-byte body into a buffer of exactly size bytes,
// which grows as bytes arrive: it grows only when bytes wait to be read
// (in br or, by queued, in the kernel), to twice the bytes arrived.
// grow(have, want) is asked before the buffer grows from have to
// want bytes of capacity; an error from it or the reader is returned.
func ReadBody(br *bufio.Reader, size int, grow func(have, want int) error, queued func() int) ([]byte, error) {
	var body []byte
	for len(body) < size {
		if len(body) == cap(body) {
			if _, err := br.Peek(1); err != nil { // wait for the next bytes
				return nil, noEOF(err)
			}
			// Twice what has arrived: at least doubling, and a frame
			// that is mostly here is sized once, not regrown for its tail.
			arrived := len(body) + br.Buffered() + queued()
			want := min(size, max(2*arrived, MinBodyGrow))
			if err := grow(cap(body), want); err != nil {
				return nil, err
			}
			grown := make([]byte, len(body), want)
			copy(grown, body)
			body = grown
		}
		n, err := br.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if err != nil && len(body) < size {
			return nil, noEOF(err)
		}
	}
	return body, nil
}

// noEOF turns an EOF inside a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
