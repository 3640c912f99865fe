package recordbatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/kgateway/kgateway/crc32c"
)

// The cleaner's view of a batch's records: decompressed whole (through
// openRecords, bounded as every decompression, the decompression bound), parsed into records
// that point into the decompressed bytes, and encoded back into a batch
// with the same codec.

// Record is one record of a batch being cleaned. Key and value are
// slices of the decompressed section; a nil key or value is null.
type Record struct {
	Attrs   byte
	TS      int64
	Off     Offset
	Key     []byte
	Value   []byte
	Headers []byte // the header count and headers, as encoded
}

// DecodeSection returns the batch's records section uncompressed.
func DecodeSection(b []byte, limit int64) ([]byte, error) {
	h := DecodeHeader(b)
	c := Codec(h.Attributes & CodecMask)
	if c == CodecNone {
		return b[HeaderLen:], nil
	}
	return Decompress(c, b[HeaderLen:], limit)
}

// Decompress returns data, one stream compressed with codec c in the forms
// a records section takes (compression.go), decompressed. More than limit
// bytes out is an error wrapping ErrInvalidRecord whose text says
// "decompresses to more than" (IsDecompressedTooLarge); a codec error wraps
// ErrCorruptBatch. KIP-714 telemetry payloads use the same codecs.
func Decompress(c Codec, data []byte, limit int64) ([]byte, error) {
	if c == CodecNone {
		if int64(len(data)) > limit {
			return nil, (&recordStream{limit: limit, codec: c}).tooLarge()
		}
		return data, nil
	}
	s, err := openRecords(c, data, limit)
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

// ParseRecords parses the h.Records records of an uncompressed section.
func ParseRecords(h Header, sec []byte) ([]Record, error) {
	out := make([]Record, 0, h.Records)
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

func parseRecord(h Header, b []byte) (Record, int, error) {
	size, p := binary.Varint(b)
	if p <= 0 || size < 1 || size > int64(len(b)-p) {
		return Record{}, 0, errRecordShort
	}
	rec, end := b[p:p+int(size)], p+int(size)
	var r Record
	r.Attrs = rec[0]
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
	r.TS, r.Off = h.BaseTimestamp+ts, h.BaseOffset+Offset(od)
	var ok bool
	if r.Key, q, ok = nullableBytes(rec, q); !ok {
		return r, 0, errRecordShort
	}
	if r.Value, q, ok = nullableBytes(rec, q); !ok {
		return r, 0, errRecordShort
	}
	r.Headers = rec[q:]
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

// Rebuild encodes a batch that keeps orig's header (base offset,
// lastOffsetDelta, partition leader epoch, producer, codec, timestamp
// type: the latest-record rewrite) with recs, under baseTS (the first kept record's timestamp,
// or the delete horizon when horizon is set: the tombstone horizon).
func Rebuild(orig []byte, recs []Record, horizon int64) ([]byte, error) {
	h := DecodeHeader(orig)
	baseTS, maxTS := h.BaseTimestamp, int64(-1)
	if len(recs) > 0 {
		baseTS = recs[0].TS
	}
	for _, r := range recs {
		maxTS = max(maxTS, r.TS)
	}
	attrs := uint16(h.Attributes) &^ DeleteHorizonBit
	if horizon >= 0 {
		baseTS = horizon
		attrs |= DeleteHorizonBit
	}
	if h.Attributes&LogAppendTimeBit != 0 || len(recs) == 0 {
		maxTS = h.MaxTimestamp // LogAppendTime: the batch's own time
	}
	var sec []byte
	for _, r := range recs {
		sec = appendRecord(sec, r, baseTS, h.BaseOffset)
	}
	sec, err := CompressSection(Codec(h.Attributes&CodecMask), sec)
	if err != nil {
		return nil, err
	}
	be := binary.BigEndian
	b := make([]byte, HeaderLen, HeaderLen+len(sec))
	copy(b, orig[:HeaderLen])
	be.PutUint32(b[LengthOff:], uint32(HeaderLen-LenPrefix+len(sec)))
	be.PutUint16(b[AttrsOff:], attrs)
	be.PutUint64(b[BaseTSOff:], uint64(baseTS))
	be.PutUint64(b[MaxTSOff:], uint64(maxTS))
	be.PutUint32(b[CountOff:], uint32(len(recs)))
	b = append(b, sec...)
	be.PutUint32(b[CRCOff:], crc32c.Checksum(b[AttrsOff:]))
	return b, nil
}

// DeleteHorizonBit is Kafka's attribute bit saying the base timestamp
// is the batch's delete horizon (KIP-534, the tombstone horizon).
const DeleteHorizonBit = 0x40

func appendRecord(out []byte, r Record, baseTS int64, base Offset) []byte {
	var body []byte
	body = append(body, r.Attrs)
	body = binary.AppendVarint(body, r.TS-baseTS)
	body = binary.AppendVarint(body, int64(r.Off-base))
	body = appendNullable(body, r.Key)
	body = appendNullable(body, r.Value)
	body = append(body, r.Headers...)
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
		// Windows of 1 MiB: far below what the decoders accept (the codec check).
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
		return e
	}}
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	lz4Writers  = sync.Pool{New: func() any { return lz4.NewWriter(nil) }}
)

// CompressSection compresses a records section with codec c, in the
// forms the decompressors read (compression.go): gzip, a raw snappy
// block, lz4 frames, zstd frames.
func CompressSection(c Codec, sec []byte) ([]byte, error) {
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

// Recompress is batch b with its records section in codec c at Kafka's
// compression level (CompressSectionLevel): records, offsets, timestamps,
// producer fields and attributes other than the codec unchanged (but for
// a producer's LogAppendTime bit, below), a new length and CRC. A batch
// already in c is returned as it is (Kafka's
// in-place path: the level applies only to what is recompressed). limit
// bounds the decompression (the decompression bound).
func Recompress(b []byte, c Codec, level int, limit int64) ([]byte, error) {
	h := DecodeHeader(b)
	if Codec(h.Attributes&CodecMask) == c {
		return b, nil
	}
	sec, err := DecodeSection(b, limit)
	if err != nil {
		return nil, err
	}
	baseTS, attrs := h.BaseTimestamp, uint16(h.Attributes)&^uint16(CodecMask)|uint16(c)
	if h.Attributes&LogAppendTimeBit != 0 {
		// A producer's LogAppendTime bit (a CreateTime topic's batch: a
		// LogAppendTime topic refuses it). Kafka rebuilds the records at
		// the time they read as, the max timestamp, into a CreateTime
		// batch.
		if sec, err = restamp(h, sec); err != nil {
			return nil, err
		}
		baseTS, attrs = h.MaxTimestamp, attrs&^LogAppendTimeBit
	}
	if sec, err = CompressSectionLevel(c, level, sec); err != nil {
		return nil, fmt.Errorf("%w: recompressing to %v: %v", ErrCorruptBatch, c, err)
	}
	be := binary.BigEndian
	out := make([]byte, HeaderLen, HeaderLen+len(sec))
	copy(out, b[:HeaderLen])
	be.PutUint32(out[LengthOff:], uint32(HeaderLen-LenPrefix+len(sec)))
	be.PutUint16(out[AttrsOff:], attrs)
	be.PutUint64(out[BaseTSOff:], uint64(baseTS))
	out = append(out, sec...)
	be.PutUint32(out[CRCOff:], crc32c.Checksum(out[AttrsOff:]))
	return out, nil
}

// restamp re-encodes the uncompressed records section sec of h with every
// record at h's max timestamp (timestamp delta 0 from it).
func restamp(h Header, sec []byte) ([]byte, error) {
	recs, err := ParseRecords(h, sec)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, r := range recs {
		r.TS = h.MaxTimestamp
		out = appendRecord(out, r, h.MaxTimestamp, h.BaseOffset)
	}
	return out, nil
}

// IsDecompressedTooLarge reports whether err is Decompress's (or a
// records walk's) refusal of output past its limit.
func IsDecompressedTooLarge(err error) bool { return errors.Is(err, errDecompressedTooLarge) }
