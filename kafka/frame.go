package kafka

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// Reading one frame (the frame size limit, the request memory budget). A frame's buffer grows as its bytes arrive,
// and the budget is charged for the buffer before it grows: what a client
// holds of queued.max.request.bytes is what it has sent (at most twice,
// plus minBodyGrow), never what it declared. A client that declares
// 100 MiB and sends nothing holds nothing.

// minBodyGrow is the smallest step a frame's buffer grows by.
const minBodyGrow = 4 << 10

// readFrame reads one size-prefixed frame and returns its body and the
// bytes of budget it holds (the body's capacity), which the caller owns;
// on error nothing is held. The frame size limit: the size is checked before anything is
// allocated.
func (c *conn) readFrame(br *bufio.Reader) ([]byte, int64, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, 0, err
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	lo, hi := int32(minFrame), c.maxFrame() // The pre-authentication gate
	if c.rawToken() {
		lo = 0 // a bare SASL token (SaslHandshake v0)
	}
	if size < lo || size > hi {
		return nil, 0, fmt.Errorf("%w: size %d outside [%d, %d]", errFrame, size, lo, hi)
	}
	c.frameStart = time.Now()
	var held int64
	body, err := readBody(br, int(size), func(have, want int) error {
		if err := c.growCharge(held, int64(want-have)); err != nil {
			return err
		}
		held += int64(want - have)
		return nil
	}, c.queuedBytes)
	c.frameStart = time.Time{}
	if err != nil {
		c.s.budget.release(held)
		return nil, 0, err
	}
	return body, held, nil
}

// growCharge takes n more bytes of budget for the frame being read, which
// holds held already. Waiting for the budget does not count against the
// frame's deadline (the idle connection timeout): the server, not the client, is slow then.
func (c *conn) growCharge(held, n int64) error {
	start := time.Now()
	err := c.s.budget.grow(c.ctx, c.s.closing, held, n)
	c.frameStart = c.frameStart.Add(time.Since(start))
	return err
}

// queuedBytes is how many bytes of the connection wait in the kernel, 0
// when unknown.
func (c *conn) queuedBytes() int { return socketQueued(c.nc) }

// readBody reads a size-byte body into a buffer of exactly size bytes,
// which grows as bytes arrive: it grows only when bytes wait to be read
// (in br or, by queued, in the kernel), to twice the bytes arrived. grow(have, want) is asked before the buffer grows from have to
// want bytes of capacity; an error from it or the reader is returned.
func readBody(br *bufio.Reader, size int, grow func(have, want int) error, queued func() int) ([]byte, error) {
	var body []byte
	for len(body) < size {
		if len(body) == cap(body) {
			if _, err := br.Peek(1); err != nil { // wait for the next bytes
				return nil, noEOF(err)
			}
			// Twice what has arrived: at least doubling, and a frame
			// that is mostly here is sized once, not regrown for its tail.
			arrived := len(body) + br.Buffered() + queued()
			want := min(size, max(2*arrived, minBodyGrow))
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
