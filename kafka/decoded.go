package kafka

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

// chargeDecode takes from the budget what decoding a non-produce request
// of n bytes may cost beyond the n its frame holds, before it is decoded;
// held is what the frame holds. It returns the bytes taken.
func (c *conn) chargeDecode(held int64, n int) (int64, error) {
	return c.chargeExtra(held, n, "decoding")
}

// chargeProduce takes what a decoded Produce request's bytes other than
// record batches may cost: its arrays of topics and partitions.
func (c *conn) chargeProduce(held int64, r *kmsg.ProduceRequest, frame int) (int64, error) {
	records := 0
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			records += len(p.Records)
		}
	}
	return c.chargeExtra(held, frame-records, "its topic and partition arrays")
}

// chargeExtra takes (decodeFactor-1)*n bytes, refusing a request whose
// whole charge would exceed queued.max.request.bytes.
func (c *conn) chargeExtra(held int64, n int, what string) (int64, error) {
	extra := int64(decodeFactor-1) * int64(n)
	if held+extra > c.s.budget.Total() {
		return 0, fmt.Errorf("%w: %d request bytes would take %d bytes of queued.max.request.bytes (%d) for %s",
			errFrame, n, held+extra, c.s.budget.Total(), what)
	}
	if extra == 0 {
		return 0, nil
	}
	if err := c.s.budget.Grow(c.ctx, c.s.closing, held, extra); err != nil {
		return 0, err
	}
	return extra, nil
}
