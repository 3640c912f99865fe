package resolver

import (
	"errors"
	"fmt"
)

// ListOffsets by timestamp answers per record: the batch is found by its
// max timestamp through the index, then its records are walked with the
// produce path's scanRecords (decompressing, streaming and bounded: the decompression bound,
// streamed decompression) for each record's offset and timestamp; nothing else is kept.

// maxRecordScanBytes bounds the decompressed bytes of one stored batch
// walked (decompression bombs): a batch past it is refused as corrupt.
const maxRecordScanBytes = 64 << 20

// errStopWalk ends a walk early; it never leaves walkRecords.
var errStopWalk = errors.New("resolver: walk stopped")

// walkRecords calls fn with the offset and timestamp of each record of
// the batch b in order, until fn returns false. A LogAppendTime batch's
// records all carry its max timestamp, as Kafka reads them.
func walkRecords(b []byte, fn func(off Offset, ts int64) bool) error {
	if len(b) < batchHeaderLen {
		return fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(b))
	}
	h := decodeHeader(b)
	err := scanStoredRecords(b, maxRecordScanBytes, func(m RecordMeta) error {
		ts := h.BaseTimestamp + m.TimestampDelta
		if h.Attributes&logAppendTimeBit != 0 {
			ts = h.MaxTimestamp
		}
		if !fn(h.BaseOffset+Offset(m.OffsetDelta), ts) {
			return errStopWalk
		}
		return nil
	})
	if errors.Is(err, errStopWalk) {
		return nil
	}
	if errors.Is(err, ErrInvalidRecord) {
		// A stored batch passed the record count check when it was produced: this one is not
		// what was written.
		return fmt.Errorf("%w: %v", ErrCorruptBatch, err)
	}
	return err
}

// batchAt reads the stored batch holding offset off (the read path's
// KIP-74 first batch), nil when there is none at or past off any more.
func (h Partition) batchAt(off Offset) ([]byte, error) {
	res, err := h.Fetch(off, 0, true, ReadUncommitted, nil)
	switch {
	case errors.Is(err, ErrOffsetOutOfRange):
		return nil, nil // trimmed or gone since the lookup
	case err != nil:
		return nil, err
	case len(res.Batches) == 0:
		return nil, nil
	}
	return res.Batches[0], nil
}

// recordAtOrAfter is ListOffsets by timestamp, per record as Kafka's
// FileRecords.searchForTimestamp: from the batch holding off (the first
// whose max timestamp is at or after ts), the first record whose
// timestamp is at or after ts and whose offset is at or past logStart
// (a batch may straddle it), going on to later batches only when that
// batch has none.
func (h Partition) recordAtOrAfter(off Offset, ts int64, logStart, end Offset) (Offset, int64, error) {
	for off = max(off, logStart); off < end; {
		b, err := h.batchAt(off) // the batch holding off
		if err != nil || b == nil {
			return -1, -1, err
		}
		hd := decodeHeader(b)
		found, foundTS := Offset(-1), int64(-1)
		if hd.MaxTimestamp >= ts {
			err = walkRecords(b, func(o Offset, t int64) bool {
				if t >= ts && o >= logStart && o < end {
					found, foundTS = o, t
					return false
				}
				return true
			})
			if err != nil || found >= 0 {
				return found, foundTS, err
			}
		}
		off = hd.BaseOffset + Offset(hd.LastOffsetDelta) + 1
	}
	return -1, -1, nil
}

// maxTimestampRecord is ListOffsets -3 per record, as Kafka's
// offsetOfMaxTimestamp: in the batch at off, whose max timestamp is
// maxTS, the first record carrying maxTS.
func (h Partition) maxTimestampRecord(off Offset, maxTS int64, logStart Offset) (Offset, int64, error) {
	b, err := h.batchAt(max(off, logStart)) // a batch may straddle log start
	if err != nil || b == nil {
		return -1, -1, err
	}
	found := Offset(-1)
	err = walkRecords(b, func(o Offset, t int64) bool {
		if t == maxTS {
			found = o
			return false
		}
		return true
	})
	if err != nil || found < 0 {
		return -1, -1, err
	}
	return found, maxTS, nil
}
