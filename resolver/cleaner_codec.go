package resolver

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The cleaner's view of a batch's records: decompressed whole (through
// openRecords, bounded as every decompression, Z3), parsed into records
// that point into the decompressed bytes, and encoded back into a batch
// with the same codec.

// cleanRecord is one record of a batch being cleaned. Key and value are
// slices of the decompressed section; a nil key or value is null.
type cleanRecord struct {
	attrs   byte
	ts      int64
	off     Offset
	key     []byte
	value   []byte
	headers []byte // the header count and headers, as encoded
}

// decodeSection returns the batch's records section uncompressed.
func decodeSection(b []byte, limit int64) ([]byte, error) {
	h := decodeHeader(b)
	c := Codec(h.Attributes & codecMask)
	if c == CodecNone {
		return b[batchHeaderLen:], nil
	}
	s, err := openRecords(c, b[batchHeaderLen:], limit)
	if err != nil {
		return nil, err
	}
	defer s.close()
	var out []byte
	for {
		out = append(out, s.buf...)
		s.buf = nil
		if !s.fill() {
			break
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	return out, nil
}

// parseRecords parses the h.Records records of an uncompressed section.
func parseRecords(h batchHeader, sec []byte) ([]cleanRecord, error) {
	out := make([]cleanRecord, 0, h.Records)
	for i := int32(0); i < h.Records; i++ {
		r, n, err := parseRecord(h, sec)
		if err != nil {
			return nil, fmt.Errorf("%w: record %d of %d: %v", ErrCorruptBatch, i, h.Records, err)
		}
		out = append(out, r)
		sec = sec[n:]
	}
	if len(sec) != 0 {
		return nil, fmt.Errorf("%w: bytes after the %d records", ErrCorruptBatch, h.Records)
	}
	return out, nil
}

func parseRecord(h batchHeader, b []byte) (cleanRecord, int, error) {
	size, p := binary.Varint(b)
	if p <= 0 || size < 1 || size > int64(len(b)-p) {
		return cleanRecord{}, 0, errRecordShort
	}
	rec, end := b[p:p+int(size)], p+int(size)
	var r cleanRecord
	r.attrs = rec[0]
	q := 1
	ts, n := binary.Varint(rec[q:])
	if n <= 0 {
		return r, 0, errRecordShort
	}
	q += n
	od, n := binary.Varint(rec[q:])
	if n <= 0 {
		return r, 0, errRecordShort
	}
	q += n
	r.ts, r.off = h.BaseTimestamp+ts, h.BaseOffset+Offset(od)
	var ok bool
	if r.key, q, ok = nullableBytes(rec, q); !ok {
		return r, 0, errRecordShort
	}
	if r.value, q, ok = nullableBytes(rec, q); !ok {
		return r, 0, errRecordShort
	}
	r.headers = rec[q:]
	return r, end, nil
}

// nullableBytes reads a length-prefixed field: nil for null (-1), else a
// non-nil slice (empty for length 0).
func nullableBytes(b []byte, p int) ([]byte, int, bool) {
	l, n := binary.Varint(b[p:])
	switch {
	case n <= 0 || l < -1 || l > int64(len(b)-p-n):
		return nil, 0, false
	case l == -1:
		return nil, p + n, true
	}
	p += n
	return b[p : p+int(l) : p+int(l)], p + int(l), true
}

// cleanedBatch encodes a batch that keeps orig's header (base offset,
// lastOffsetDelta, partition leader epoch, producer, codec, timestamp
// type: L4) with recs, under baseTS (the first kept record's timestamp,
// or the delete horizon when horizon is set: L8).
func cleanedBatch(orig []byte, recs []cleanRecord, horizon int64) ([]byte, error) {
	h := decodeHeader(orig)
	baseTS, maxTS := h.BaseTimestamp, int64(-1)
	if len(recs) > 0 {
		baseTS = recs[0].ts
	}
	for _, r := range recs {
		maxTS = max(maxTS, r.ts)
	}
	attrs := uint16(h.Attributes) &^ deleteHorizonBit
	if horizon >= 0 {
		baseTS = horizon
		attrs |= deleteHorizonBit
	}
	if h.Attributes&logAppendTimeBit != 0 || len(recs) == 0 {
		maxTS = h.MaxTimestamp // LogAppendTime: the batch's own time
	}
	var sec []byte
	for _, r := range recs {
		sec = appendRecord(sec, r, baseTS, h.BaseOffset)
	}
	sec, err := compressSection(Codec(h.Attributes&codecMask), sec)
	if err != nil {
		return nil, err
	}
	be := binary.BigEndian
	b := make([]byte, batchHeaderLen, batchHeaderLen+len(sec))
	copy(b, orig[:batchHeaderLen])
	be.PutUint32(b[batchLengthOff:], uint32(batchHeaderLen-batchLenPrefix+len(sec)))
	be.PutUint16(b[attrsOff:], attrs)
	be.PutUint64(b[baseTSOff:], uint64(baseTS))
	be.PutUint64(b[maxTSOff:], uint64(maxTS))
	be.PutUint32(b[countOff:], uint32(len(recs)))
	b = append(b, sec...)
	be.PutUint32(b[crcOff:], crc32.Checksum(b[attrsOff:], castagnoli))
	return b, nil
}

// deleteHorizonBit is Kafka's attribute bit saying the base timestamp
// is the batch's delete horizon (KIP-534, L8).
const deleteHorizonBit = 0x40

func appendRecord(out []byte, r cleanRecord, baseTS int64, base Offset) []byte {
	var body []byte
	body = append(body, r.attrs)
	body = binary.AppendVarint(body, r.ts-baseTS)
	body = binary.AppendVarint(body, int64(r.off-base))
	body = appendNullable(body, r.key)
	body = appendNullable(body, r.value)
	body = append(body, r.headers...)
	out = binary.AppendVarint(out, int64(len(body)))
	return append(out, body...)
}

func appendNullable(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	return append(binary.AppendVarint(b, int64(len(v))), v...)
}

var (
	zstdEncoders = sync.Pool{New: func() any {
		// Windows of 1 MiB: far below what the decoders accept (Z1).
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
		return e
	}}
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	lz4Writers  = sync.Pool{New: func() any { return lz4.NewWriter(nil) }}
)

// compressSection compresses a records section with codec c, in the
// forms the decompressors read (compression.go): gzip, a raw snappy
// block, lz4 frames, zstd frames.
func compressSection(c Codec, sec []byte) ([]byte, error) {
	switch c {
	case CodecNone:
		return sec, nil
	case CodecSnappy:
		return snappy.Encode(nil, sec), nil
	case CodecZstd:
		e := zstdEncoders.Get().(*zstd.Encoder)
		defer zstdEncoders.Put(e)
		return e.EncodeAll(sec, nil), nil
	case CodecGzip:
		w := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(w)
		return streamCompress(w, sec)
	case CodecLZ4:
		w := lz4Writers.Get().(*lz4.Writer)
		defer lz4Writers.Put(w)
		return streamCompress(w, sec)
	}
	return nil, fmt.Errorf("%w: codec %d", ErrCorruptBatch, c)
}

// resetWriter is a compressor that writes to a new destination.
type resetWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

func streamCompress(w resetWriter, sec []byte) ([]byte, error) {
	var buf bytes.Buffer
	w.Reset(&buf)
	if _, err := w.Write(sec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
