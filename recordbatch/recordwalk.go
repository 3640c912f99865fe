package recordbatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Walking the records of a batch (the codec check, the record count check in doc.go).
//
// A v2 record (all varints zigzag):
//
//	length         varint  bytes after this field
//	attributes     int8    unused
//	timestampDelta varlong
//	offsetDelta    varint
//	keyLength      varint  -1 for a null key
//	key
//	valueLength    varint  -1 for a null value
//	value
//	headerCount    varint
//	headers        per header: keyLength varint (>= 0), key,
//	               valueLength varint (-1 for null), value
//
// The walk reads the fields it needs and skips keys, values and headers'
// bytes, so that it holds no record, only the stream's current piece.

// RecordMeta is what a walk reports of each record.
type RecordMeta struct {
	OffsetDelta    int32
	TimestampDelta int64
	NullKey        bool  // the key is null (length -1)
	Size           int32 // the record's declared length: its body, the length prefix not counted
}

// ScanRecords checks that the records of batch b (a whole batch whose
// header Parse accepted) agree with its header, decompressing them if
// needed, and calls fn (when not nil) for each record in order. Errors
// wrap ErrCorruptBatch (the data is not what the codec says) or
// ErrInvalidRecord (the records do not match the header, are malformed, or
// decompress to more than limit bytes), or are fn's.
//
// Nothing decompressed outlives the call (streamed decompression): fn sees only RecordMeta.
// limit is DecompressedLimit of the topic's max.message.bytes (the decompression bound).
func ScanRecords(b []byte, limit int64, fn func(RecordMeta) error) error {
	return walkBatch(b, limit, false, fn)
}

// ScanStoredRecords is ScanRecords for a stored batch, which the cleaner
// may have rewritten (the latest-record rewrite): its records' offset deltas increase but may
// skip (the removed records' offsets stay unused), and none passes the
// header's lastOffsetDelta.
func ScanStoredRecords(b []byte, limit int64, fn func(RecordMeta) error) error {
	last := DecodeHeader(b).LastOffsetDelta
	return walkBatch(b, limit, true, func(m RecordMeta) error {
		if m.OffsetDelta > last {
			return fmt.Errorf("%w: offset delta %d past the last offset delta %d", ErrInvalidRecord, m.OffsetDelta, last)
		}
		if fn == nil {
			return nil
		}
		return fn(m)
	})
}

func walkBatch(b []byte, limit int64, gaps bool, fn func(RecordMeta) error) error {
	h := DecodeHeader(b)
	if Codec(h.Attributes&CodecMask) == CodecNone {
		// The hot path: the section is the records, walked in place.
		return walkPlain(b[HeaderLen:], h.Records, limit, gaps, fn)
	}
	s, err := openRecords(Codec(h.Attributes&CodecMask), b[HeaderLen:], limit)
	if err != nil {
		return err
	}
	defer s.close()
	s.gaps = gaps
	return s.walk(h.Records, fn)
}

// recordStream is a batch's records section as a stream of bytes.
type recordStream struct {
	buf   []byte      // unread bytes of the current piece
	src   chunkSource // the rest of the section; nil when buf is all of it
	off   int64       // bytes consumed
	total int64       // bytes received (buf included)
	limit int64
	codec Codec
	err   error // the source's failure, sticky
	slot  bool  // holds a decompressSlots slot
	gaps  bool  // offset deltas may skip (a cleaned batch, the latest-record rewrite)
}

func (s *recordStream) close() {
	if s.src != nil {
		s.src.close()
		s.src = nil
	}
	if s.slot {
		<-decompressSlots
		s.slot = false
	}
}

func (s *recordStream) tooLarge() error {
	return fmt.Errorf("%w: %s records %w %d bytes", ErrInvalidRecord, s.codec, errDecompressedTooLarge, s.limit)
}

func (s *recordStream) codecErr(err error) error {
	if errors.Is(err, errDecompressedTooLarge) {
		return s.tooLarge()
	}
	return fmt.Errorf("%w: records are not valid %s data: %v", ErrCorruptBatch, s.codec, err)
}

// fill replaces the consumed piece with the next one; false at the end of
// the section or on a failure (then s.err is set).
func (s *recordStream) fill() bool {
	if s.src == nil || s.err != nil {
		return false
	}
	c, err := s.src.next()
	switch {
	case len(c) > 0:
		if s.total += int64(len(c)); s.total > s.limit {
			s.err = s.tooLarge()
			return false
		}
		s.buf = c
		return true
	case err == io.EOF:
		s.src.close()
		s.src = nil
	case err != nil:
		s.err = s.codecErr(err)
	}
	return false
}

// byte reads one byte.
func (s *recordStream) byte() (byte, bool) {
	if len(s.buf) == 0 && !s.fill() {
		return 0, false
	}
	b := s.buf[0]
	s.buf = s.buf[1:]
	s.off++
	return b, true
}

// varint reads a zigzag varint of at most maxLen bytes (5 for Kafka's
// varint, 10 for its varlong).
func (s *recordStream) varint(maxLen int) (int64, bool) {
	if len(s.buf) >= maxLen {
		v, n := binary.Varint(s.buf[:maxLen])
		if n <= 0 {
			return 0, false
		}
		s.buf = s.buf[n:]
		s.off += int64(n)
		return v, true
	}
	var tmp [binary.MaxVarintLen64]byte
	for i := 0; i < maxLen; i++ {
		b, ok := s.byte()
		if !ok {
			return 0, false
		}
		tmp[i] = b
		if b < 0x80 {
			v, n := binary.Varint(tmp[:i+1])
			return v, n > 0
		}
	}
	return 0, false
}

// varint32 reads a Kafka varint (an int32 in at most 5 bytes).
func (s *recordStream) varint32() (int32, bool) {
	v, ok := s.varint(5)
	if !ok || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, false
	}
	return int32(v), true
}

// skip discards n bytes.
func (s *recordStream) skip(n int64) bool {
	for n > int64(len(s.buf)) {
		n -= int64(len(s.buf))
		s.off += int64(len(s.buf))
		s.buf = nil
		if !s.fill() {
			return false
		}
	}
	s.buf = s.buf[n:]
	s.off += n
	return true
}

// atEnd reports whether the section is exhausted, cleanly.
func (s *recordStream) atEnd() bool {
	return len(s.buf) == 0 && !s.fill() && s.err == nil
}

// walk reads count records (the record count check): each well formed and exactly its declared
// length, the i-th with offset delta i, and nothing after the last.
func (s *recordStream) walk(count int32, fn func(RecordMeta) error) error {
	next := int32(0) // the least offset delta the next record may have
	for i := int32(0); i < count; i++ {
		m, err := s.record(next)
		if err != nil {
			if s.err != nil {
				return s.err
			}
			return fmt.Errorf("%w: record %d of %d: %v", ErrInvalidRecord, i, count, err)
		}
		next = m.OffsetDelta + 1
		if fn != nil {
			if err := fn(m); err != nil {
				return err
			}
		}
	}
	if !s.atEnd() {
		if s.err != nil {
			return s.err
		}
		return fmt.Errorf("%w: bytes after the %d records the header counts", ErrInvalidRecord, count)
	}
	return nil
}

var (
	errRecordShort = errors.New("malformed or cut short")
	errRecordSize  = errors.New("fields do not fill the record's length")
)

// record reads the next record, whose offset delta must be i (or, with
// gaps, at least i).
func (s *recordStream) record(i int32) (RecordMeta, error) {
	size, ok := s.varint32()
	if !ok || size < 1 {
		return RecordMeta{}, errRecordShort
	}
	end := s.off + int64(size)
	m := RecordMeta{Size: size}
	if _, ok = s.byte(); !ok { // attributes
		return m, errRecordShort
	}
	if m.TimestampDelta, ok = s.varint(binary.MaxVarintLen64); !ok {
		return m, errRecordShort
	}
	if m.OffsetDelta, ok = s.varint32(); !ok {
		return m, errRecordShort
	}
	if m.OffsetDelta != i && (!s.gaps || m.OffsetDelta < i) {
		return m, fmt.Errorf("offset delta %d", m.OffsetDelta)
	}
	// key, value
	for k := range 2 {
		null, ok := s.nullableField(end)
		if !ok {
			return m, errRecordShort
		}
		if k == 0 {
			m.NullKey = null
		}
	}
	headers, ok := s.varint32()
	if !ok || headers < 0 {
		return m, errRecordShort
	}
	for range headers {
		if !s.bytesField(end, false) || !s.bytesField(end, true) {
			return m, errRecordShort
		}
	}
	if s.off != end {
		return m, errRecordSize
	}
	return m, nil
}

// nullableField is bytesField for a nullable field, saying whether it
// was null.
func (s *recordStream) nullableField(end int64) (null, ok bool) {
	n, ok := s.varint32()
	switch {
	case !ok || n < -1:
		return false, false
	case n == -1:
		return true, s.off <= end
	}
	return false, int64(n) <= end-s.off && s.skip(int64(n))
}

// bytesField skips a length-prefixed field that must end by end; -1 (null)
// is allowed when nullable.
func (s *recordStream) bytesField(end int64, nullable bool) bool {
	n, ok := s.varint32()
	switch {
	case !ok || n < -1 || (n == -1 && !nullable):
		return false
	case n == -1:
		return s.off <= end
	}
	return int64(n) <= end-s.off && s.skip(int64(n))
}

// walkPlain is walk over an uncompressed section, on the slice itself:
// the same checks (the record count check, the decompression bound) without the stream's bookkeeping, because every
// produced uncompressed batch pays for it.
func walkPlain(sec []byte, count int32, limit int64, gaps bool, fn func(RecordMeta) error) error {
	if int64(len(sec)) > limit {
		return fmt.Errorf("%w: none records %w %d bytes", ErrInvalidRecord, errDecompressedTooLarge, limit)
	}
	next := int32(0)
	for i := int32(0); i < count; i++ {
		m, n, err := plainRecord(sec, next, gaps)
		if err != nil {
			return fmt.Errorf("%w: record %d of %d: %v", ErrInvalidRecord, i, count, err)
		}
		sec = sec[n:]
		next = m.OffsetDelta + 1
		if fn != nil {
			if err := fn(m); err != nil {
				return err
			}
		}
	}
	if len(sec) != 0 {
		return fmt.Errorf("%w: bytes after the %d records the header counts", ErrInvalidRecord, count)
	}
	return nil
}

// plainRecord parses the record at the start of b, whose offset delta must
// be i (with gaps: at least i), and returns its size. Its varints are
// mostly one or two bytes (a 1 KiB value's length is two); zz32 decodes
// those inline.
func plainRecord(b []byte, i int32, gaps bool) (RecordMeta, int, error) {
	var m RecordMeta
	size, w := zz32(b, 0)
	if w <= 0 || size < 1 || int64(size) > int64(len(b)-w) {
		return m, 0, errRecordShort
	}
	end := w + int(size)
	m.Size = size
	rec := b[:end]
	p := w + 1 // attributes
	if p > end {
		return m, 0, errRecordShort
	}
	ts, p := zz64(rec, p)
	if p <= 0 {
		return m, 0, errRecordShort
	}
	m.TimestampDelta = ts
	d, p := zz32(rec, p)
	if p <= 0 {
		return m, 0, errRecordShort
	}
	if m.OffsetDelta = d; d != i && (!gaps || d < i) {
		return m, 0, fmt.Errorf("offset delta %d", d)
	}
	key, q := zz32(rec, p)
	m.NullKey = q > 0 && key == -1
	if p = skipBody(rec, key, q, true); p < 0 {
		return m, 0, errRecordShort
	}
	if p = skipField(rec, p, true); p < 0 {
		return m, 0, errRecordShort
	}
	headers, p := zz32(rec, p)
	if p <= 0 || headers < 0 {
		return m, 0, errRecordShort
	}
	for range headers {
		if p = skipField(rec, p, false); p < 0 {
			return m, 0, errRecordShort
		}
		if p = skipField(rec, p, true); p < 0 {
			return m, 0, errRecordShort
		}
	}
	if p != end {
		return m, 0, errRecordSize
	}
	return m, end, nil
}

// skipField skips the length-prefixed field at b[p:] and returns the
// position after it, -1 if it is malformed or runs past b.
func skipField(b []byte, p int, nullable bool) int {
	l, p := zz32(b, p)
	return skipBody(b, l, p, nullable)
}

// skipBody skips the body of a field whose length l was read (zz32) up to
// p, as skipField.
func skipBody(b []byte, l int32, p int, nullable bool) int {
	switch {
	case p <= 0 || l < -1 || (l == -1 && !nullable):
		return -1
	case l == -1:
		return p
	case int64(l) > int64(len(b)-p):
		return -1
	}
	return p + int(l)
}

// zz32 reads a Kafka varint (an int32 in at most 5 bytes) at b[p:] and
// returns it with the position after it; that position is <= 0 when there
// is no valid varint. One and two bytes are decoded inline.
func zz32(b []byte, p int) (int32, int) {
	if p+1 < len(b) {
		if b0 := b[p]; b0 < 0x80 {
			u := int32(b0)
			return u>>1 ^ -(u & 1), p + 1
		} else if b1 := b[p+1]; b1 < 0x80 {
			u := int32(b0&0x7f) | int32(b1)<<7
			return u>>1 ^ -(u & 1), p + 2
		}
	}
	return zz32Slow(b, p)
}

func zz32Slow(b []byte, p int) (int32, int) {
	if p >= len(b) {
		return 0, 0
	}
	v, n := binary.Varint(b[p:min(len(b), p+5)])
	if n <= 0 || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, 0
	}
	return int32(v), p + n
}

// zz64 reads a Kafka varlong (at most 10 bytes) at b[p:] as zz32 reads a
// varint.
func zz64(b []byte, p int) (int64, int) {
	if p+1 < len(b) {
		if b0 := b[p]; b0 < 0x80 {
			u := int64(b0)
			return u>>1 ^ -(u & 1), p + 1
		} else if b1 := b[p+1]; b1 < 0x80 {
			u := int64(b0&0x7f) | int64(b1)<<7
			return u>>1 ^ -(u & 1), p + 2
		}
	}
	if p >= len(b) {
		return 0, 0
	}
	v, n := binary.Varint(b[p:min(len(b), p+binary.MaxVarintLen64)])
	if n <= 0 {
		return 0, 0
	}
	return v, p + n
}
