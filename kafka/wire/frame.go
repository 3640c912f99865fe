package wire

// Reading one frame (the frame size limit, the request memory budget). A frame's buffer grows as its bytes arrive,
// and the budget is charged for the buffer before it grows: what a client
// holds of queued.max.request.bytes is what it has sent (at most twice,
// plus MinBodyGrow; a pooled frame's buffer, ReadBodyPooled, up to a quarter
// more than the frame), never what it declared. A client that declares
// 100 MiB and sends nothing holds nothing.

import (
	"bufio"
	"io"

	"github.com/kgateway/kgateway/bufpool"
)

// MinBodyGrow is the smallest step a frame's buffer grows by.
const MinBodyGrow = 4 << 10

// ReadBody reads a size-byte body into a buffer of exactly size bytes,
// which grows as bytes arrive: it grows only when bytes wait to be read
// (in br or, by queued, in the kernel), to twice the bytes arrived.
// grow(have, want) is asked before the buffer grows from have to
// want bytes of capacity; an error from it or the reader is returned.
func ReadBody(br *bufio.Reader, size int, grow func(have, want int) error, queued func() int) ([]byte, error) {
	body, _, err := readBody(br, size, grow, queued, false)
	return body, err
}

// ReadBodyPooled is ReadBody whose last step, for a frame of
// bufpool.MinPooled to bufpool.MaxPooled bytes, takes a pooled buffer of
// bufpool.Cap(size) bytes (at most a quarter more than size), which is
// what grow is asked for then. The body is then a slice of the returned
// Shared buffer, which the caller holds once (bufpool "The last holder
// returns it"); otherwise the Shared is nil and the body is ReadBody's.
func ReadBodyPooled(br *bufio.Reader, size int, grow func(have, want int) error, queued func() int) ([]byte, *bufpool.Shared, error) {
	body, full, err := readBody(br, size, grow, queued, size >= bufpool.MinPooled && size <= bufpool.MaxPooled)
	if err != nil || full == nil {
		return body, nil, err
	}
	return body, bufpool.New(full), nil
}

// readBody is ReadBody, its last step into a pooled buffer (returned as
// full, the body a slice of it) when pooled. On an error a pooled buffer,
// which nobody else has seen, goes back to the pool.
func readBody(br *bufio.Reader, size int, grow func(have, want int) error, queued func() int, pooled bool) (body, full []byte, err error) {
	charged := 0
	for len(body) < size {
		if len(body) == cap(body) {
			if _, err := br.Peek(1); err != nil { // wait for the next bytes
				return nil, nil, fail(full, noEOF(err))
			}
			// Twice what has arrived: at least doubling, and a frame
			// that is mostly here is sized once, not regrown for its tail.
			arrived := len(body) + br.Buffered() + queued()
			want := min(size, max(2*arrived, MinBodyGrow))
			var grown []byte
			if pooled && want == size {
				if err := grow(charged, bufpool.Cap(size)); err != nil {
					return nil, nil, err
				}
				charged = bufpool.Cap(size)
				full = bufpool.Get(size)
				grown = full[:len(body):size]
			} else {
				if err := grow(charged, want); err != nil {
					return nil, nil, err
				}
				charged = want
				grown = make([]byte, len(body), want)
			}
			copy(grown, body)
			body = grown
		}
		n, err := br.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if err != nil && len(body) < size {
			return nil, nil, fail(full, noEOF(err))
		}
	}
	return body, full, nil
}

// fail returns a pooled buffer nobody has seen to its pool, and err.
func fail(full []byte, err error) error {
	if full != nil {
		bufpool.Put(full)
	}
	return err
}

// noEOF turns an EOF inside a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
