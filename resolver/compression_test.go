package resolver

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// codecSnappyXerial stands for snappy in the Java client's xerial framing
// in the tests' codec lists (it is CodecSnappy on the wire).
const codecSnappyXerial Codec = 0x40 | CodecSnappy

var testCodecs = []Codec{CodecGzip, CodecSnappy, codecSnappyXerial, CodecLZ4, CodecZstd}

func codecName(c Codec) string {
	if c == codecSnappyXerial {
		return "snappy-xerial"
	}
	return c.String()
}

// compress encodes a records section the way clients do.
func compress(t testing.TB, c Codec, sec []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch c {
	case CodecNone:
		return append([]byte(nil), sec...)
	case CodecGzip:
		w := gzip.NewWriter(&buf)
		w.Write(sec)
		w.Close()
	case CodecSnappy:
		return snappy.Encode(nil, sec)
	case codecSnappyXerial:
		buf.Write(xerialHeader)
		buf.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
		for rest := sec; len(rest) > 0; {
			n := min(len(rest), 32<<10)
			block := snappy.Encode(nil, rest[:n])
			buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(block))))
			buf.Write(block)
			rest = rest[n:]
		}
	case CodecLZ4:
		w := lz4.NewWriter(&buf)
		w.Write(sec)
		w.Close()
	case CodecZstd:
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(sec)
		w.Close()
	default:
		t.Fatalf("codec %v", c)
	}
	return buf.Bytes()
}

// withSection returns batch b with its records section replaced by sec and
// its codec set to c, the length and CRC fixed up.
func withSection(b []byte, c Codec, sec []byte) []byte {
	out := append(append([]byte(nil), b[:batchHeaderLen]...), sec...)
	binary.BigEndian.PutUint32(out[batchLengthOff:], uint32(len(out)-batchLenPrefix))
	attrs := binary.BigEndian.Uint16(out[attrsOff:])&^codecMask | uint16(c&codecMask)
	binary.BigEndian.PutUint16(out[attrsOff:], attrs)
	return recrc(out)
}

// compressed encodes tb with its records compressed with c.
func compressed(t testing.TB, tb testBatch, c Codec) []byte {
	t.Helper()
	b := tb.encode()
	return withSection(b, c, compress(t, c, b[batchHeaderLen:]))
}

// withCount sets a batch's record count and last offset delta.
func withCount(b []byte, n int) []byte {
	b = append([]byte(nil), b...)
	binary.BigEndian.PutUint32(b[countOff:], uint32(n))
	binary.BigEndian.PutUint32(b[lastDeltaOff:], uint32(n-1))
	return recrc(b)
}

// Compressed batches of every codec are accepted and stored as sent.
func TestProduceCompressed(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	var next Offset
	for _, c := range testCodecs {
		tb := plain(50, 1000)
		tb.value = bytes.Repeat([]byte("compressible "), 20)
		b := compressed(t, tb, c)
		res := g.produce("t", 0, b)
		if res.BaseOffset != next {
			t.Fatalf("%s: base offset %d, want %d", codecName(c), res.BaseOffset, next)
		}
		got := g.fetch("t", 0, next, 1<<20).Batches[0]
		if !bytes.Equal(got[batchLenPrefix+4:], b[batchLenPrefix+4:]) {
			t.Fatalf("%v: stored batch differs from the one sent", c)
		}
		next += 50
	}
}

// Compressed batches whose data is not their codec's, or whose records do
// not agree with the header, or that decompress past the bound (the decompression bound), are
// refused with Kafka's codes and append nothing.
func TestProduceCompressedRejects(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, map[string]string{"max.message.bytes": "2000"})
	limit := decompressedLimit(2000)
	shifted := plain(3, 1).encode() // offset deltas 1, 2, 3
	{
		var recs []byte
		for i := 0; i < 3; i++ {
			body := []byte{0}
			body = binary.AppendVarint(body, 0)
			body = binary.AppendVarint(body, int64(i+1))
			body = append(body, 1, 2, 'v', 0) // null key, value "v", no headers
			recs = binary.AppendVarint(recs, int64(len(body)))
			recs = append(recs, body...)
		}
		shifted = withSection(shifted, CodecNone, recs)
	}
	big := plain(1, 1)
	big.value = make([]byte, limit) // zeros: a few hundred bytes compressed
	for _, c := range testCodecs {
		five := plain(5, 1).encode()
		sec := five[batchHeaderLen:]
		good := compressed(t, plain(5, 1), c)
		data := good[batchHeaderLen:]
		other := CodecGzip
		if c == CodecGzip {
			other = CodecZstd
		}
		cases := []struct {
			name string
			b    []byte
			want error
		}{
			{"not compressed", withSection(five, c, sec), ErrCorruptBatch},
			{"other codec's data", withSection(five, c, compress(t, other, sec)), ErrCorruptBatch},
			{"truncated", withSection(five, c, data[:len(data)-3]), ErrCorruptBatch},
			{"bytes after the data", withSection(five, c, append(append([]byte(nil), data...), 1, 2, 3, 4, 5, 6, 7, 8, 9)), ErrCorruptBatch},
			{"more records than counted", withCount(good, 4), ErrInvalidRecord},
			{"fewer records than counted", withCount(good, 6), ErrInvalidRecord},
			{"offset deltas not 0..n-1", withSection(shifted, c, compress(t, c, shifted[batchHeaderLen:])), ErrInvalidRecord},
		}
		if c&codecMask != CodecSnappy {
			// Snappy expands at most about 21 times: a batch within
			// max.message.bytes cannot reach 64 times it (the bound
			// itself is checked in TestDecompressedLimitExact).
			cases = append(cases, struct {
				name string
				b    []byte
				want error
			}{"decompression bomb", compressed(t, big, c), ErrInvalidRecord})
		}
		for _, tc := range cases {
			t.Run(codecName(c)+"/"+tc.name, func(t *testing.T) {
				if len(tc.b) > 2000 {
					t.Fatalf("test batch of %d bytes is over max.message.bytes", len(tc.b))
				}
				if _, err := g.r.Produce("t", 0, tc.b); !errors.Is(err, tc.want) {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
				if _, hwm, _, _ := g.r.Bounds("t", 0); hwm != 0 {
					t.Fatalf("appended: hwm %d", hwm)
				}
			})
		}
	}
	// Uncompressed records are held to the same rules.
	if _, err := g.r.Produce("t", 0, shifted); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("uncompressed, offset deltas 1..3: %v", err)
	}
	if _, err := g.r.Produce("t", 0, withCount(plain(5, 1).encode(), 4)); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("uncompressed, more records than counted: %v", err)
	}
}

// A decompressed section of exactly the bound is accepted; one byte more is
// not (the decompression bound is the bound, not an approximation of it).
func TestDecompressedLimitExact(t *testing.T) {
	b := plain(1, 1).encode()
	sec := b[batchHeaderLen:]
	for _, c := range testCodecs {
		cb := withSection(b, c, compress(t, c, sec))
		if err := scanRecords(cb, int64(len(sec)), nil); err != nil {
			t.Fatalf("%v at the limit: %v", c, err)
		}
		if err := scanRecords(cb, int64(len(sec)-1), nil); !errors.Is(err, ErrInvalidRecord) {
			t.Fatalf("%v one byte over the limit: %v", c, err)
		}
	}
}

// scanRecords reports each record's deltas, compressed or not.
func TestScanRecordsMeta(t *testing.T) {
	tb := plain(4, 100)
	tb.tsDeltas = []int64{0, 7, -3, 1 << 40}
	for _, c := range append([]Codec{CodecNone}, testCodecs...) {
		var got []RecordMeta
		err := scanRecords(compressed(t, tb, c), 1<<20, func(m RecordMeta) error {
			got = append(got, m)
			return nil
		})
		if err != nil || len(got) != 4 {
			t.Fatalf("%v: %d records, %v", c, len(got), err)
		}
		for i, m := range got {
			if m.OffsetDelta != int32(i) || m.TimestampDelta != tb.tsDeltas[i] {
				t.Fatalf("%v: record %d is %+v", c, i, m)
			}
		}
	}
}
