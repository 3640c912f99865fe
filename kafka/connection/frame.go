package connection

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/kgateway/kgateway/bufpool"
	"github.com/kgateway/kgateway/kafka/wire"
)

// Reading one frame (the frame size limit, the request memory budget). A frame's buffer grows as its bytes arrive,
// and the budget is charged for the buffer before it grows: what a client
// holds of queued.max.request.bytes is what it has sent (at most twice,
// plus minBodyGrow; a pooled frame's buffer, ReadBodyPooled, up to half
// more than the frame), never what it declared. A client that declares
// 100 MiB and sends nothing holds nothing.

// ReadFrame reads one size-prefixed frame and returns its body and the
// bytes of budget it holds (the body's capacity), which the caller owns;
// on error nothing is held. It is the read loop's first step. The frame
// size limit: the size is checked before anything is
// allocated.
func (c *Conn) ReadFrame(br *bufio.Reader) ([]byte, int64, error) {
	body, _, held, err := c.readFrame(br)
	return body, held, err
}

// readFrame is ReadFrame whose large frames are read into pooled buffers
// (wire.ReadBodyPooled): frame, when not nil, is the buffer body is a
// slice of, held once for the request (Request.Frame).
func (c *Conn) readFrame(br *bufio.Reader) (body []byte, frame *bufpool.Shared, held int64, err error) {
	var hdr [4]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, nil, 0, err
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	lo, hi := c.h.FrameSizes() // The pre-authentication gate
	if size < lo || size > hi {
		return nil, nil, 0, fmt.Errorf("%w: size %d outside [%d, %d]", ErrFrame, size, lo, hi)
	}
	c.frameStart = time.Now()
	body, frame, err = wire.ReadBodyPooled(br, int(size), func(have, want int) error {
		if err := c.growCharge(held, int64(want-have)); err != nil {
			return err
		}
		held += int64(want - have)
		return nil
	}, c.queuedBytes)
	c.frameStart = time.Time{}
	if err != nil {
		c.opt.Budget.Release(held)
		return nil, nil, 0, err
	}
	return body, frame, held, nil
}

// growCharge takes n more bytes of budget for the frame being read, which
// holds held already. Waiting for the budget does not count against the
// frame's deadline (the idle connection timeout): the server, not the client, is slow then.
func (c *Conn) growCharge(held, n int64) error {
	start := time.Now()
	err := c.opt.Budget.Grow(c.ctx, c.opt.Closing, held, n)
	c.frameStart = c.frameStart.Add(time.Since(start))
	return err
}

// queuedBytes is how many bytes of the connection wait in the kernel, 0
// when unknown.
func (c *Conn) queuedBytes() int { return wire.SocketQueued(c.nc) }
