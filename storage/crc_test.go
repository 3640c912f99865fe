package storage

import (
	"bytes"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// crcConcat(crc(a), crc(b), len(b)) is crc(a++b) for every split of
// random data, empty halves and lengths past 2^k boundaries included.
func TestCRCConcat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 21, 64, 255, 256, 4096, 1<<16 + 3, 1 << 20} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		want := crc32.Checksum(data, castagnoli)
		for _, cut := range []int{0, n / 3, n / 2, n - min(n, 21), n} {
			a, b := data[:cut], data[cut:]
			got := crcConcat(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), int64(len(b)))
			if got != want {
				t.Fatalf("len %d cut %d: crcConcat %08x, want %08x", n, cut, got, want)
			}
		}
	}
}

func BenchmarkCRCConcat(b *testing.B) {
	for i := 0; i < b.N; i++ {
		_ = crcConcat(0x12345678, 0x9abcdef0, 1000012)
	}
}

// A caller's suffix CRC stands in for reading the suffix: right, the entry
// reads back and verifies; wrong, the frame fails its CRC on read (fails
// closed) instead of serving bytes its CRC does not cover.
func TestAppendSuffixCRC(t *testing.T) {
	s := newStore(t, t.TempDir(), Options{TailCacheBytes: -1})
	defer s.Close()
	if err := s.CreateLog(1); err != nil {
		t.Fatal(err)
	}
	good := payloadFor(0, 5000)
	opts := AppendOptions{SuffixFrom: 21, SuffixCRC: crc32.Checksum(good[21:], castagnoli)}
	if _, err := s.Append(1, 1, good, opts); err != nil {
		t.Fatal(err)
	}
	bad := payloadFor(1, 5000)
	opts.SuffixCRC = crc32.Checksum(bad[21:], castagnoli) ^ 1
	if _, err := s.Append(1, 1, bad, opts); err != nil {
		t.Fatal(err)
	}
	if es, err := s.ReadEntries(1, 0, 1, 1<<20); err != nil || !bytes.Equal(es[0].Payload, good) {
		t.Fatalf("entry with a right suffix CRC: %v", err)
	}
	if _, err := s.ReadEntries(1, 1, 1, 1<<20); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("entry with a wrong suffix CRC read with err %v, want ErrCorrupt", err)
	}
}
