package wire

// Reading one frame (the frame size limit, the request memory budget). A frame's buffer grows as its bytes arrive,
// and the budget is charged for the buffer before it grows: what a client
// holds of queued.max.request.bytes is what it has sent (at most twice,
// plus MinBodyGrow; a pooled frame's buffer, ReadBodyPooled, up to half
// more than the frame), never what it declared. A client that declares
// 100 MiB and sends nothing holds nothing.

import (
	"bufio"
	"io"
	"math/bits"

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
// bufpool.Cap(size) bytes (at most a quarter more than size) or, for a
// large frame, a kept one of up to half more than size
// (bufpool.GetWithin), whose capacity is what grow is asked for then. The body is then a slice of the returned
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
// full, the body a slice of it) when pooled. Its earlier steps of
// bufpool.MinPooled bytes and more are pooled buffers too, each returned
// to the pool once its bytes are copied into the next: nobody but
// readBody ever sees them. Their size is the largest class not above
// what the step would have taken, so the budget is charged no more than
// before; reusing them spares the zeroing of fresh heap for every growth
// of a large frame. On an error a pooled buffer, which nobody else has
// seen, goes back to the pool.
func readBody(br *bufio.Reader, size int, grow func(have, want int) error, queued func() int, pooled bool) (body, full []byte, err error) {
	charged := 0
	var step []byte // the pooled buffer body is a slice of before the last step
	for len(body) < size {
		if len(body) == cap(body) {
			if _, err := br.Peek(1); err != nil { // wait for the next bytes
				return nil, nil, fail(full, step, noEOF(err))
			}
			// Twice what has arrived: at least doubling, and a frame
			// that is mostly here is sized once, not regrown for its tail.
			// The kernel is asked (a system call) only when the
			// buffered bytes do not hold the frame already.
			arrived := len(body) + br.Buffered()
			if arrived < size {
				arrived += queued()
			}
			want := min(size, max(2*arrived, MinBodyGrow))
			last, stepped := want == size, false
			switch {
			case pooled && last:
				// Taken before it is charged, so that what is charged is
				// the capacity it has (up to half more than the frame,
				// a reused large buffer; bufpool.GetWithin).
				full = bufpool.GetWithin(size, size+size/2)
				want = cap(full)
			case !last && want >= bufpool.MinPooled && want <= bufpool.MaxPooled:
				want, stepped = classFloor(want), true // above len(body): at least 4/5 of twice it
			}
			if err := grow(charged, want); err != nil {
				return nil, nil, fail(full, step, err)
			}
			charged = want
			var grown, next []byte
			switch {
			case pooled && last:
				grown = full[:len(body):size]
			case stepped:
				next = bufpool.Get(want)
				grown = next[:len(body)]
			default:
				grown = make([]byte, len(body), want)
			}
			copy(grown, body)
			if step != nil {
				bufpool.Put(step)
			}
			body, step = grown, next
		}
		n, err := br.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if err != nil && len(body) < size {
			return nil, nil, fail(full, step, noEOF(err))
		}
	}
	return body, full, nil
}

// classFloor is the largest bufpool class size not above n, for n of
// bufpool.MinPooled to bufpool.MaxPooled bytes: the classes between 1<<e
// and 1<<(e+1) are the multiples of 1<<(e-2).
func classFloor(n int) int {
	e := bits.Len(uint(n)) - 1
	return n &^ (1<<(e-2) - 1)
}

// fail returns pooled buffers nobody has seen to their pool, and err.
func fail(full, step []byte, err error) error {
	if full != nil {
		bufpool.Put(full)
	}
	if step != nil {
		bufpool.Put(step)
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
