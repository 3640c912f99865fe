package resolver

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// This file walks the records of a stored batch, decompressing when the
// batch is compressed, to answer ListOffsets per record (a record's
// offset and timestamp; nothing else of it is kept). Decompression
// streams: memory stays small whatever the batch holds, except for a raw
// snappy block, which is decoded whole and so is checked against
// maxRecordScanBytes first. At most maxRecordScanBytes are decompressed.

// maxRecordScanBytes bounds the decompressed bytes of one batch walked
// (decompression bombs): a batch claiming more is refused as corrupt.
const maxRecordScanBytes = 64 << 20

// errScanTooLarge is a batch that decompresses past maxRecordScanBytes.
var errScanTooLarge = fmt.Errorf("%w: batch decompresses past %d bytes", ErrCorruptBatch, maxRecordScanBytes)

// xerialMagic starts a snappy payload framed the way the Java client
// frames it (then a version and a compatible-version int32, then chunks
// of a big-endian int32 length and a raw snappy block).
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// walkRecords calls fn with the offset and timestamp of each record of
// the batch b in order, until fn returns false. A LogAppendTime batch's
// records all carry its max timestamp, as Kafka reads them.
func walkRecords(b []byte, fn func(off Offset, ts int64) bool) error {
	if len(b) < batchHeaderLen {
		return fmt.Errorf("%w: %d bytes is shorter than a batch header", ErrCorruptBatch, len(b))
	}
	h := decodeHeader(b)
	src, done, err := recordsReader(h.Attributes&codecMask, b[batchHeaderLen:])
	if err != nil {
		return err
	}
	defer done()
	rd := &countReader{r: bufio.NewReader(&boundedReader{r: src, left: maxRecordScanBytes})}
	for range h.Records {
		off, ts, err := nextRecord(rd, h)
		if err != nil {
			return err
		}
		if !fn(off, ts) {
			return nil
		}
	}
	return nil
}

// nextRecord reads one record's length, attributes, timestamp delta and
// offset delta, and skips the rest of it (key, value, headers).
func nextRecord(rd *countReader, h batchHeader) (Offset, int64, error) {
	length, err := binary.ReadVarint(rd)
	if err != nil {
		return 0, 0, recordErr(err)
	}
	start := rd.n
	if _, err := rd.ReadByte(); err != nil { // attributes
		return 0, 0, recordErr(err)
	}
	tsDelta, err := binary.ReadVarint(rd)
	if err != nil {
		return 0, 0, recordErr(err)
	}
	offDelta, err := binary.ReadVarint(rd)
	if err != nil {
		return 0, 0, recordErr(err)
	}
	rest := length - (rd.n - start)
	if rest < 0 {
		return 0, 0, fmt.Errorf("%w: record length %d", ErrCorruptBatch, length)
	}
	if _, err := io.CopyN(io.Discard, rd, rest); err != nil {
		return 0, 0, recordErr(err)
	}
	ts := h.BaseTimestamp + tsDelta
	if h.Attributes&logAppendTimeBit != 0 {
		ts = h.MaxTimestamp
	}
	return h.BaseOffset + Offset(offDelta), ts, nil
}

func recordErr(err error) error {
	if errors.Is(err, errScanTooLarge) {
		return err
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: records: %v", ErrCorruptBatch, err)
}

// recordsReader returns the decompressed records section of a batch with
// codec, and a func that frees the decompressor.
func recordsReader(codec int16, payload []byte) (io.Reader, func(), error) {
	nop := func() {}
	switch codec {
	case 0:
		return bytes.NewReader(payload), nop, nil
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(payload))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: gzip: %v", ErrCorruptBatch, err)
		}
		return zr, func() { zr.Close() }, nil
	case 2:
		out, err := snappyDecode(payload)
		return bytes.NewReader(out), nop, err
	case 3:
		return lz4.NewReader(bytes.NewReader(payload)), nop, nil
	case codecZstd:
		zr, err := zstd.NewReader(bytes.NewReader(payload), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxMemory(maxRecordScanBytes))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: zstd: %v", ErrCorruptBatch, err)
		}
		return zr, zr.Close, nil
	}
	return nil, nil, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, codec)
}

// snappyDecode decodes a raw snappy block or a xerial-framed one, never
// past maxRecordScanBytes in all.
func snappyDecode(payload []byte) ([]byte, error) {
	if !bytes.HasPrefix(payload, xerialMagic) {
		return snappyBlock(nil, payload)
	}
	if len(payload) < 16 {
		return nil, fmt.Errorf("%w: snappy: short xerial header", ErrCorruptBatch)
	}
	var out []byte
	for rest := payload[16:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, fmt.Errorf("%w: snappy: short xerial chunk", ErrCorruptBatch)
		}
		n := binary.BigEndian.Uint32(rest)
		if uint64(n) > uint64(len(rest)-4) {
			return nil, fmt.Errorf("%w: snappy: xerial chunk of %d bytes with %d left", ErrCorruptBatch, n, len(rest)-4)
		}
		var err error
		if out, err = snappyBlock(out, rest[4:4+n]); err != nil {
			return nil, err
		}
		rest = rest[4+n:]
	}
	return out, nil
}

// snappyBlock appends the decoded raw snappy block to out.
func snappyBlock(out, block []byte) ([]byte, error) {
	n, err := s2.DecodedLen(block)
	if err != nil {
		return nil, fmt.Errorf("%w: snappy: %v", ErrCorruptBatch, err)
	}
	if len(out)+n > maxRecordScanBytes {
		return nil, errScanTooLarge
	}
	at := len(out)
	out = slices.Grow(out, n)[:at+n]
	if _, err := s2.Decode(out[at:], block); err != nil {
		return nil, fmt.Errorf("%w: snappy: %v", ErrCorruptBatch, err)
	}
	return out, nil
}

// boundedReader fails with errScanTooLarge past left bytes.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		if n, _ := b.r.Read(make([]byte, 1)); n > 0 {
			return 0, errScanTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// countReader counts the bytes read through it.
type countReader struct {
	r *bufio.Reader
	n int64
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// batchAt reads the stored batch holding offset off (the read path's
// KIP-74 first batch), nil when there is none at or past off any more.
func (r *Resolver) batchAt(topic string, partition int32, off Offset) ([]byte, error) {
	res, err := r.Fetch(topic, partition, off, 0, ReadUncommitted, true)
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
func (r *Resolver) recordAtOrAfter(topic string, partition int32, off Offset, ts int64, logStart, end Offset) (Offset, int64, error) {
	for off = max(off, logStart); off < end; {
		b, err := r.batchAt(topic, partition, off) // the batch holding off
		if err != nil || b == nil {
			return -1, -1, err
		}
		h := decodeHeader(b)
		found, foundTS := Offset(-1), int64(-1)
		if h.MaxTimestamp >= ts {
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
		off = h.BaseOffset + Offset(h.LastOffsetDelta) + 1
	}
	return -1, -1, nil
}

// maxTimestampRecord is ListOffsets -3 per record, as Kafka's
// offsetOfMaxTimestamp: in the batch at off, whose max timestamp is
// maxTS, the first record carrying maxTS.
func (r *Resolver) maxTimestampRecord(topic string, partition int32, off Offset, maxTS int64, logStart Offset) (Offset, int64, error) {
	b, err := r.batchAt(topic, partition, max(off, logStart)) // a batch may straddle log start
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
