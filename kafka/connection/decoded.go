package connection

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Decoded requests are bounded (the decoded-request bound). A request's memory is mostly not its
// frame: decoding an array element takes a struct (and a string header
// per name), answering it a response entry, far more than the few wire
// bytes that named it. A Metadata request of 20 MB naming 10 M topics took
// the process to 4.4 GB. So every byte of a request that is not record
// data (all of a request but Produce's record batches) is charged
// decodeFactor times to queued.max.request.bytes until the handler is
// done with it (the request memory budget), and a request whose charge could never fit is
// refused by closing the connection, as an oversized frame is (the frame size limit).

// decodeFactor is what one wire byte of a request other than record data
// may cost once decoded and answered, the Go heap's slack included:
// measured, the worst requests (Metadata with distinct names, OffsetFetch,
// ListOffsets) take about 30 bytes per wire byte at their peak.
const decodeFactor = 64

// ChargeDecode takes from the budget, for r, what decoding a
// non-produce request of n bytes may cost beyond the n its frame holds,
// before it is decoded.
func (c *Conn) ChargeDecode(r *Request, n int) error {
	return c.chargeExtra(r, n, "decoding")
}

// ChargeProduce takes, for r, what a decoded Produce request's bytes
// other than record batches may cost: its arrays of topics and
// partitions; frame is its frame's size.
func (c *Conn) ChargeProduce(r *Request, p *kmsg.ProduceRequest, frame int) error {
	records := 0
	for _, t := range p.Topics {
		for _, pt := range t.Partitions {
			records += len(pt.Records)
		}
	}
	return c.chargeExtra(r, frame-records, "its topic and partition arrays")
}

// chargeExtra takes (decodeFactor-1)*n bytes for r, refusing a request
// whose whole charge would exceed queued.max.request.bytes.
func (c *Conn) chargeExtra(r *Request, n int, what string) error {
	held, b := r.charge, c.opt.Budget
	extra := int64(decodeFactor-1) * int64(n)
	if held+extra > b.Total() {
		return fmt.Errorf("%w: %d request bytes would take %d bytes of queued.max.request.bytes (%d) for %s",
			ErrFrame, n, held+extra, b.Total(), what)
	}
	if extra == 0 {
		return nil
	}
	if err := b.Grow(c.ctx, c.opt.Closing, held, extra); err != nil {
		return err
	}
	r.charge += extra
	return nil
}
