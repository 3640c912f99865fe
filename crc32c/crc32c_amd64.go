package crc32c

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useFold: the CPU and the OS support the 512-bit carry-less folding.
var useFold = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VPCLMULQDQ &&
	cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE42

// foldK are the folding multipliers foldAVX512 reads: by 256 bytes (four
// 512-bit lanes), 64 (one), then 48, 32 and 16 (a 512-bit lane's four
// 128-bit parts onto the last).
var foldK = func() (k [10]uint64) {
	for i, d := range []int{256, 64, 48, 32, 16} {
		c := foldConst(d)
		k[2*i], k[2*i+1] = c[0], c[1]
	}
	return k
}()

// fold returns the CRC32C of p (a multiple of 64 bytes, at least 256)
// from crc, both without the pre- and post-inversion.
func fold(crc uint32, p []byte) uint32 {
	return foldAVX512(crc, unsafe.SliceData(p), len(p), &foldK)
}

// foldAVX512 is fold: n is a multiple of 64, at least 256.
//
//go:noescape
func foldAVX512(crc uint32, p *byte, n int, k *[10]uint64) uint32
