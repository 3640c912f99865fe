package recordbatch

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// wordsBatch is an uncompressed batch of n records of compressible text
// (words drawn from a small vocabulary, seeded), keyless, no producer.
func wordsBatch(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"kafka", "topic", "partition", "offset", "record", "batch", "leader", "replica", "segment", "index"}
	var recs []byte
	for i := range n {
		var v []byte
		for range 40 {
			v = fmt.Appendf(v, "%s-%d ", words[rng.IntN(len(words))], rng.IntN(100))
		}
		body := []byte{0}                          // attributes
		body = binary.AppendVarint(body, 0)        // timestamp delta
		body = binary.AppendVarint(body, int64(i)) // offset delta
		body = binary.AppendVarint(body, -1)       // null key
		body = binary.AppendVarint(body, int64(len(v)))
		body = append(body, v...)
		body = binary.AppendVarint(body, 0) // no headers
		recs = append(binary.AppendVarint(recs, int64(len(body))), body...)
	}
	be := binary.BigEndian
	b := make([]byte, HeaderLen, HeaderLen+len(recs))
	be.PutUint64(b[0:], 0) // base offset
	be.PutUint32(b[LengthOff:], uint32(HeaderLen-LenPrefix+len(recs)))
	be.PutUint32(b[12:], 0xffffffff)         // partition leader epoch -1
	b[16] = 2                                // magic
	be.PutUint32(b[23:], uint32(n-1))        // last offset delta
	be.PutUint64(b[43:], 0xffffffffffffffff) // producer id -1
	be.PutUint16(b[51:], 0xffff)             // producer epoch -1
	be.PutUint32(b[53:], 0xffffffff)         // base sequence -1
	be.PutUint32(b[57:], uint32(n))          // record count
	b = append(b, recs...)
	be.PutUint32(b[CRCOff:], crc32.Checksum(b[AttrsOff:], Castagnoli))
	return b
}

// TestRecompressLevel: KIP-390's level changes what a recompressed batch
// is (gzip 1 against 9, lz4's default fast compressor against LZ4HC 17,
// zstd 1 against 19: the higher level smaller on compressible data), and
// each output reads back as the same records.
func TestRecompressLevel(t *testing.T) {
	b := wordsBatch(200)
	for range 2 { // the second time with pooled encoders
		for _, tc := range []struct {
			c         Codec
			low, high int
		}{{CodecGzip, 1, 9}, {CodecLZ4, LZ4DefaultLevel, 17}, {CodecZstd, 1, 19}} {
			lo, err := Recompress(b, tc.c, tc.low, 1<<26)
			if err != nil {
				t.Fatal(err)
			}
			hi, err := Recompress(b, tc.c, tc.high, 1<<26)
			if err != nil {
				t.Fatal(err)
			}
			if len(hi) >= len(lo) {
				t.Errorf("%v: level %d gives %d bytes, level %d %d: the level changes nothing", tc.c, tc.high, len(hi), tc.low, len(lo))
			}
			for _, out := range [][]byte{lo, hi} {
				n := 0
				if err := ScanRecords(out, 1<<26, func(RecordMeta) error { n++; return nil }); err != nil || n != 200 {
					t.Errorf("%v: read back %d records: %v", tc.c, n, err)
				}
			}
			t.Logf("%v: %d bytes at level %d, %d at %d (of %d)", tc.c, len(lo), tc.low, len(hi), tc.high, len(b))
		}
	}
}
