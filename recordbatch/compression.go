package recordbatch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Decompression of a record batch's records section (record validation in doc.go).
//
// A compressed batch's records section (everything after the 61-byte
// header) is one compressed stream of the records. openRecords turns a
// section into a recordStream: the bytes themselves when uncompressed,
// else a decompressor read through a pooled window, so that decompressing
// never holds more than a window (plus the codec's own state) whatever
// the batch decompresses to, and keeps nothing once closed. recordwalk.go
// walks a recordStream record by record.
//
// Codecs follow what Kafka's clients write:
//   - gzip: RFC 1952, members may be concatenated;
//   - snappy: a raw snappy block (librdkafka, franz-go) or the xerial
//     framing of the Java client (a 16-byte header, then big-endian
//     length-prefixed raw blocks); decoded strictly (no s2 extensions,
//     which a snappy consumer cannot read);
//   - lz4: LZ4 frames;
//   - zstd: zstd frames, windows up to ZstdMaxWindow.
//
// Raw snappy is a block format: it is decoded whole, into a pooled buffer,
// after its declared length was checked against the limit (the decompression bound).

// Codec is a record batch's compression codec (attributes bits 0-2).
type Codec int8

const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1
	CodecSnappy Codec = 2
	CodecLZ4    Codec = 3
	CodecZstd   Codec = 4
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// BatchCodec is the codec of the record batch at the start of b; false when
// b is too short to hold the attributes. The Kafka front end uses it for
// the checks that depend on the request version (zstd needs Produce v7).
func BatchCodec(b []byte) (Codec, bool) {
	if len(b) < AttrsOff+2 {
		return 0, false
	}
	return Codec(b[AttrsOff+1] & CodecMask), true
}

const (
	// decompressRatio bounds what a compressed batch may decompress to:
	// this many times the topic's max.message.bytes (64 MiB with the
	// default), the decompression bound. Kafka 4.4 has no such bound on
	// a batch (it bounds each record, max.decompressed.message.bytes,
	// which the topic's RecordRules check); clients stay far below it
	// (franz-go and librdkafka cap a batch's uncompressed size at their
	// own max message size, 1 MB by default).
	decompressRatio = 64
	// ZstdMaxWindow is the largest zstd window accepted: 8 MiB is what
	// zstd levels up to 19 use, far more than franz-go (64 KiB) and the
	// default levels of librdkafka and the Java client (2 MiB). A frame
	// asking for more is refused as corrupt rather than given the memory.
	ZstdMaxWindow = 8 << 20
	// windowSize is the pooled buffer a streaming codec decompresses into.
	windowSize = 64 << 10
	// maxPooledBlock is the largest snappy block buffer kept for reuse.
	maxPooledBlock = 1 << 20
)

// DecompressedLimit is the decompression bound for a topic with this max.message.bytes.
func DecompressedLimit(maxMessageBytes int32) int64 {
	return decompressRatio * int64(max(maxMessageBytes, 1))
}

// decompressSlots bounds how many batches decompress at once (streamed decompression): it is
// CPU work that never waits on I/O, so more at once than there are CPUs
// only multiplies the codecs' memory.
var decompressSlots = make(chan struct{}, max(4, 2*runtime.GOMAXPROCS(0)))

// errDecompressedTooLarge is returned (wrapped) once a section decompresses
// past its limit.
var errDecompressedTooLarge = errors.New("decompresses to more than")

// chunkSource yields a decompressed records section piece by piece. A
// piece is valid until the next call; io.EOF follows the last one.
type chunkSource interface {
	next() ([]byte, error)
	close()
}

// openRecords returns the records section sec of a batch with codec c as a
// stream that fails once more than limit bytes come out of it. The caller
// must close it. Codec errors wrap ErrCorruptBatch (the data is not what
// the codec says), the limit ErrInvalidRecord.
func openRecords(c Codec, sec []byte, limit int64) (*recordStream, error) {
	s := &recordStream{limit: limit, codec: c}
	if c == CodecNone {
		if int64(len(sec)) > limit {
			return nil, s.tooLarge()
		}
		s.buf = sec
		return s, nil
	}
	decompressSlots <- struct{}{}
	s.slot = true
	var err error
	switch c {
	case CodecGzip:
		s.src, err = newGzipSource(sec)
	case CodecSnappy:
		s.src, err = newSnappySource(sec, limit)
	case CodecLZ4:
		s.src = newLZ4Source(sec)
	case CodecZstd:
		s.src, err = newZstdSource(sec)
	default:
		err = fmt.Errorf("unknown codec")
	}
	if err != nil {
		s.close()
		return nil, s.codecErr(err)
	}
	return s, nil
}

// readerSource streams an io.Reader decompressor through a pooled window.
// After the decompressor's io.EOF every compressed byte must have been
// consumed (in states this, as a codec may stop at the end of a frame).
type readerSource struct {
	r       io.Reader
	in      *bytes.Reader
	win     *[]byte
	pending error // returned by the next call, after a final piece
	done    func()
}

var windows = sync.Pool{New: func() any { b := make([]byte, windowSize); return &b }}

func newReaderSource(r io.Reader, in *bytes.Reader, done func()) *readerSource {
	return &readerSource{r: r, in: in, win: windows.Get().(*[]byte), done: done}
}

func (s *readerSource) next() ([]byte, error) {
	if s.pending != nil {
		return nil, s.pending
	}
	for range 100 {
		n, err := s.r.Read(*s.win)
		if err == io.EOF && s.in.Len() != 0 {
			err = fmt.Errorf("%d bytes after the compressed data", s.in.Len())
		}
		if n > 0 {
			s.pending = err
			return (*s.win)[:n], nil
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, io.ErrNoProgress
}

func (s *readerSource) close() {
	if s.win != nil {
		windows.Put(s.win)
		s.win = nil
	}
	if s.done != nil {
		s.done()
		s.done = nil
	}
}

// gzipDecoder is pooled with the bytes.Reader it reads from. It reads the
// section member by member itself: in multistream mode the gzip reader
// takes an io.EOF inside a later member's header (a name or comment cut
// short) for the end of the stream, and would accept the truncated data.
// Here a later member's header must parse whole, like the first's.
type gzipDecoder struct {
	zr gzip.Reader
	in bytes.Reader
}

var gzipDecoders sync.Pool

func newGzipSource(sec []byte) (chunkSource, error) {
	d, _ := gzipDecoders.Get().(*gzipDecoder)
	if d == nil {
		d = new(gzipDecoder)
	}
	d.in.Reset(sec)
	put := func() { d.in.Reset(nil); gzipDecoders.Put(d) }
	if err := d.zr.Reset(&d.in); err != nil {
		put()
		return nil, err
	}
	d.zr.Multistream(false)
	return newReaderSource(d, &d.in, put), nil
}

// Read reads the current member, then starts the next one while bytes
// are left.
func (d *gzipDecoder) Read(p []byte) (int, error) {
	n, err := d.zr.Read(p)
	if err != io.EOF || d.in.Len() == 0 {
		return n, err
	}
	if err := d.zr.Reset(&d.in); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // bytes were left, so the header is cut short
		}
		return n, err
	}
	d.zr.Multistream(false)
	return n, nil
}

type lz4Decoder struct {
	zr *lz4.Reader
	in bytes.Reader
}

var lz4Decoders sync.Pool

func newLZ4Source(sec []byte) chunkSource {
	d, _ := lz4Decoders.Get().(*lz4Decoder)
	if d == nil {
		d = &lz4Decoder{zr: lz4.NewReader(nil)}
	}
	d.in.Reset(sec)
	d.zr.Reset(&d.in)
	return newReaderSource(d.zr, &d.in, func() {
		d.zr.Reset(nil)
		d.in.Reset(nil)
		lz4Decoders.Put(d)
	})
}

type zstdDecoder struct {
	zr *zstd.Decoder
	in bytes.Reader
}

var zstdDecoders sync.Pool

func newZstdSource(sec []byte) (chunkSource, error) {
	d, _ := zstdDecoders.Get().(*zstdDecoder)
	if d == nil {
		zr, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1), // synchronous: no goroutines
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(ZstdMaxWindow))
		if err != nil {
			return nil, err
		}
		d = &zstdDecoder{zr: zr}
		// A pooled decoder dropped by the GC releases its buffers.
		runtime.AddCleanup(d, func(zr *zstd.Decoder) { zr.Close() }, zr)
	}
	d.in.Reset(sec)
	put := func() {
		_ = d.zr.Reset(nil)
		d.in.Reset(nil)
		zstdDecoders.Put(d)
	}
	if err := d.zr.Reset(&d.in); err != nil {
		put()
		return nil, err
	}
	return newReaderSource(d.zr, &d.in, put), nil
}

// XerialHeader starts the Java client's snappy framing; a version and a
// minimum compatible version (4 bytes each) follow it.
var XerialHeader = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16

// snappySource decodes raw snappy blocks into a pooled buffer: the whole
// section when it is one raw block, else each xerial chunk in turn.
type snappySource struct {
	rest   []byte // undecoded input
	xerial bool
	budget int64 // decoded bytes still allowed (the decompression bound), checked before decoding
	buf    *[]byte
}

var snappyBufs sync.Pool

func newSnappySource(sec []byte, limit int64) (chunkSource, error) {
	s := &snappySource{rest: sec, budget: limit}
	if len(sec) >= xerialHeaderLen && bytes.HasPrefix(sec, XerialHeader) {
		s.xerial, s.rest = true, sec[xerialHeaderLen:]
	}
	return s, nil
}

func (s *snappySource) next() ([]byte, error) {
	if len(s.rest) == 0 {
		return nil, io.EOF
	}
	block := s.rest
	if s.xerial {
		if len(s.rest) < 4 {
			return nil, errors.New("truncated xerial chunk length")
		}
		n := int64(int32(uint32(s.rest[0])<<24 | uint32(s.rest[1])<<16 | uint32(s.rest[2])<<8 | uint32(s.rest[3])))
		if n < 0 || n > int64(len(s.rest)-4) {
			return nil, fmt.Errorf("xerial chunk of %d bytes with %d left", n, len(s.rest)-4)
		}
		block, s.rest = s.rest[4:4+n], s.rest[4+n:]
	} else {
		s.rest = nil
	}
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return nil, err
	}
	if int64(n) > s.budget {
		return nil, errDecompressedTooLarge
	}
	s.budget -= int64(n)
	if s.buf == nil {
		s.buf, _ = snappyBufs.Get().(*[]byte)
		if s.buf == nil {
			s.buf = new([]byte)
		}
	}
	out, err := snappy.DecodeStrict((*s.buf)[:0], block)
	if err != nil {
		return nil, err
	}
	if cap(out) <= maxPooledBlock {
		*s.buf = out
	}
	return out, nil
}

func (s *snappySource) close() {
	if s.buf != nil && cap(*s.buf) > 0 {
		snappyBufs.Put(s.buf)
	}
	s.buf = nil
}
