package crc32c

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestFoldConstants checks the multipliers against the published ones for
// CRC32C (folding by 16, 32 and 64 bytes).
func TestFoldConstants(t *testing.T) {
	for d, want := range map[int][2]uint64{16: {0xf20c0dfe, 0x493c7d27}, 32: {0x3da6d0cb, 0xba4fc28e}, 64: {0x740eef02, 0x9e4addf8}} {
		if got := foldConst(d); got != want {
			t.Errorf("foldConst(%d) = %#x, want %#x", d, got, want)
		}
	}
}

// TestUpdateAgrees checks Update against hash/crc32 on every length up to
// 3 KiB and on long inputs, from several starting CRCs and alignments,
// and that a single flipped bit anywhere changes the result as it does
// there.
func TestUpdateAgrees(t *testing.T) {
	if !useFold {
		t.Log("no AVX-512 VPCLMULQDQ here: Update is hash/crc32")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 1<<20+300)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	check := func(crc uint32, p []byte) {
		t.Helper()
		if got, want := Update(crc, p), crc32.Update(crc, Table, p); got != want {
			t.Fatalf("Update(%#x, %d bytes at %p) = %#x, want %#x", crc, len(p), p, got, want)
		}
	}
	for n := 0; n <= 3<<10; n++ {
		check(0, buf[n%7:n%7+n])
		check(rng.Uint32(), buf[n%13:n%13+n])
	}
	for _, n := range []int{4 << 10, 64<<10 - 1, 64 << 10, 1<<20 - 28, 1 << 20, 1<<20 + 299} {
		for off := range 3 {
			check(rng.Uint32(), buf[off:off+n-off])
		}
	}
	// A corrupted byte, anywhere, is seen as hash/crc32 sees it.
	p := append([]byte(nil), buf[:100_000]...)
	for range 2000 {
		i, bit := rng.IntN(len(p)), byte(1)<<rng.IntN(8)
		p[i] ^= bit
		check(0, p)
		if Checksum(p) == Checksum(buf[:100_000]) {
			t.Fatalf("flipping bit %#x of byte %d left the CRC unchanged", bit, i)
		}
		p[i] ^= bit
	}
}

func BenchmarkChecksum(b *testing.B) {
	for _, n := range []int{512, 4 << 10, 64 << 10, 1 << 20} {
		p := make([]byte, n)
		b.Run("fold/"+itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				Checksum(p)
			}
		})
		b.Run("crc32/"+itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				crc32.Checksum(p, Table)
			}
		})
	}
}

func itoa(n int) string {
	if n >= 1<<20 {
		return string(rune('0'+n>>20)) + "MiB"
	}
	s := ""
	for v := n >> 10; v > 0 || s == ""; v /= 10 {
		s = string(rune('0'+v%10)) + s
	}
	if n < 1<<10 {
		return "512B"
	}
	return s + "KiB"
}

// FuzzUpdateAgrees: for any bytes and any starting CRC, Update is
// hash/crc32's Castagnoli CRC, on every length and alignment.
func FuzzUpdateAgrees(f *testing.F) {
	f.Add(uint32(0), make([]byte, 1000), uint8(0))
	f.Add(uint32(0xdeadbeef), make([]byte, 4096+63), uint8(5))
	f.Fuzz(func(t *testing.T, crc uint32, p []byte, off uint8) {
		if int(off) > len(p) {
			off = 0
		}
		p = p[off:]
		if got, want := Update(crc, p), crc32.Update(crc, Table, p); got != want {
			t.Fatalf("Update(%#x, %d bytes) = %#x, want %#x", crc, len(p), got, want)
		}
	})
}
