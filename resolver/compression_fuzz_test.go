package resolver

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"

	gsnappy "github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// FuzzCompressedRecords checks scanRecords, the produce path's record
// check (the codec check, the record count check and the decompression bound), against an oracle: the section decoded whole by other
// decoders (the standard library's gzip, golang/snappy with the test's own
// xerial unframing; lz4 and zstd have no second Go implementation here, so
// their whole-buffer paths stand in), then parsed by the slice-based record
// parser below. scanRecords must accept exactly what the oracle accepts;
// what decodes but has bad records is ErrInvalidRecord, what decompresses
// past the limit is refused.
//
// With wrap the fuzzer's bytes are a records section the harness
// compresses (so the search explores record framing behind valid codec
// data); without, they are the compressed data itself.
func FuzzCompressedRecords(f *testing.F) {
	good := plain(3, 5).encode()[batchHeaderLen:]
	for c := range uint8(6) {
		f.Add(c, uint8(2), true, good)
		f.Add(c, uint8(2), false, compress(f, fuzzCodec(c), good))
		f.Add(c, uint8(0), true, make([]byte, 5000))
	}
	f.Add(uint8(1), uint8(2), false, append(compress(f, CodecGzip, good), compress(f, CodecGzip, nil)...))
	f.Fuzz(func(t *testing.T, codec, count uint8, wrap bool, data []byte) {
		const limit = 4096
		c := fuzzCodec(codec)
		n := int(count%16) + 1
		sec := data
		if wrap {
			sec = compress(t, c, data)
		}
		b := withSection(withCount(plain(1, 5).encode(), n), c, sec)
		err := scanRecords(b, limit, nil)
		if err != nil && !errors.Is(err, ErrCorruptBatch) && !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("error %v wraps neither sentinel", err)
		}
		out, derr := oracleDecompress(c, sec, limit)
		switch {
		case errors.Is(derr, errHeaderTooLarge):
			// The oracle read only a frame header's size claim: the data
			// after it may be too large or broken, and either is refused.
			if err == nil {
				t.Fatalf("%s frame declaring more than %d bytes accepted", codecName(c), limit)
			}
		case derr != nil:
			if err == nil {
				t.Fatalf("%s data the oracle cannot decode (%v) accepted", codecName(c), derr)
			}
		case len(out) > limit:
			if !errors.Is(err, ErrInvalidRecord) {
				t.Fatalf("%s section of more than %d bytes: %v", codecName(c), limit, err)
			}
		default:
			want := oracleRecords(out, n)
			if (want == nil) != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidRecord)) {
				t.Fatalf("%s, %d records: scanRecords says %v, the oracle %v", codecName(c), n, err, want)
			}
		}
	})
}

// fuzzCodec maps a fuzz byte to a codec (5 is snappy in xerial framing).
func fuzzCodec(b uint8) Codec {
	if b%6 == 5 {
		return codecSnappyXerial
	}
	return Codec(b % 6)
}

// errHeaderTooLarge is the oracle's answer for a zstd frame whose header
// declares a size past its bound: it has not decoded the data behind it.
var errHeaderTooLarge = errors.New("frame header declares too much")

// oracleDecompress decodes sec whole, reading at most limit+1 bytes.
func oracleDecompress(c Codec, sec []byte, limit int) ([]byte, error) {
	readAll := func(r io.Reader) ([]byte, error) {
		out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
		if err == nil && len(out) <= limit {
			// Everything must decode, not only the first limit bytes.
			_, err = io.Copy(io.Discard, struct{ io.Reader }{r}) // not lz4's WriteTo, which fails after EOF
		}
		return out, err
	}
	switch c {
	case CodecNone:
		return sec, nil
	case CodecGzip:
		return oracleGunzip(sec, limit)
	case CodecLZ4:
		return readAll(lz4.NewReader(bytes.NewReader(sec)))
	case CodecZstd:
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderMaxMemory(1<<24))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		out, err := d.DecodeAll(sec, nil)
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			// DecodeAll refuses a frame whose header declares more than its
			// memory bound before decoding a byte of it.
			return nil, errHeaderTooLarge
		}
		return out, err
	}
	// snappy, raw or xerial
	blocks := [][]byte{sec}
	if len(sec) >= 16 && bytes.Equal(sec[:8], []byte("\x82SNAPPY\x00")) { // xerial framing, else a raw block
		blocks = nil
		for rest := sec[16:]; len(rest) > 0; {
			if len(rest) < 4 {
				return nil, errors.New("short chunk length")
			}
			n := int32(binary.BigEndian.Uint32(rest))
			if n < 0 || int(n) > len(rest)-4 {
				return nil, errors.New("chunk past the end")
			}
			blocks, rest = append(blocks, rest[4:4+n]), rest[4+n:]
		}
	}
	var out []byte
	for _, blk := range blocks {
		if n, err := gsnappy.DecodedLen(blk); err != nil {
			return nil, err
		} else if len(out)+n > limit {
			return make([]byte, limit+1), nil
		}
		d, err := gsnappy.Decode(nil, blk)
		if err != nil {
			return nil, err
		}
		out = append(out, d...)
	}
	return out, nil
}

// oracleRecords parses n v2 records from sec with slices: nil if they are
// exactly n well-formed records with offset deltas 0..n-1.
func oracleRecords(sec []byte, n int) error {
	// varint reads a zigzag varint of at most maxLen bytes whose value fits
	// bits bits.
	varint := func(maxLen int, bits uint) (int64, error) {
		var u uint64
		for i := 0; i < maxLen; i++ {
			if i >= len(sec) {
				return 0, io.ErrUnexpectedEOF
			}
			b := sec[i]
			u |= uint64(b&0x7f) << (7 * i)
			if b < 0x80 {
				if i == 9 && b > 1 {
					return 0, errors.New("varlong overflow")
				}
				sec = sec[i+1:]
				v := int64(u>>1) ^ -int64(u&1)
				if bits < 64 && (v < -(1<<(bits-1)) || v >= 1<<(bits-1)) {
					return 0, errors.New("varint out of range")
				}
				return v, nil
			}
		}
		return 0, errors.New("varint too long")
	}
	field := func(nullable bool) error {
		l, err := varint(5, 32)
		switch {
		case err != nil:
			return err
		case l == -1 && nullable:
			return nil
		case l < 0 || l > int64(len(sec)):
			return fmt.Errorf("field length %d", l)
		}
		sec = sec[l:]
		return nil
	}
	for i := 0; i < n; i++ {
		size, err := varint(5, 32)
		if err != nil || size < 1 || size > int64(len(sec)) {
			return fmt.Errorf("record %d: length %d, %v", i, size, err)
		}
		rest := sec[size:]
		sec = sec[:size]
		sec = sec[1:] // attributes
		if _, err := varint(10, 64); err != nil {
			return err
		}
		if d, err := varint(5, 32); err != nil || d != int64(i) {
			return fmt.Errorf("record %d: offset delta %d, %v", i, d, err)
		}
		if err := field(true); err != nil {
			return err
		}
		if err := field(true); err != nil {
			return err
		}
		h, err := varint(5, 32)
		if err != nil || h < 0 {
			return fmt.Errorf("record %d: %d headers, %v", i, h, err)
		}
		for range h {
			if err := field(false); err != nil {
				return err
			}
			if err := field(true); err != nil {
				return err
			}
		}
		if len(sec) != 0 {
			return fmt.Errorf("record %d: %d bytes left in it", i, len(sec))
		}
		sec = rest
	}
	if len(sec) != 0 {
		return fmt.Errorf("%d bytes after %d records", len(sec), n)
	}
	return nil
}

// oracleGunzip decodes gzip members one by one with the standard library,
// which ignores the reserved header flag bits; zlib (librdkafka) refuses
// them, and so must the produce path: the oracle does too.
func oracleGunzip(sec []byte, limit int) ([]byte, error) {
	in := bytes.NewReader(sec)
	var out []byte
	for first := true; first || in.Len() > 0; first = false {
		at := len(sec) - in.Len()
		if at+4 <= len(sec) && sec[at+3]&0xe0 != 0 {
			return nil, errors.New("reserved gzip flag bits")
		}
		r, err := stdgzip.NewReader(in) // in is a ByteReader: no read-ahead
		if err != nil {
			return nil, err
		}
		r.Multistream(false)
		b, err := io.ReadAll(io.LimitReader(r, int64(limit+1-len(out))))
		if err != nil {
			return nil, err
		}
		if out = append(out, b...); len(out) > limit {
			return out, nil
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}
