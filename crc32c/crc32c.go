// Package crc32c computes the CRC32C (Castagnoli) checksum that Kafka
// record batches and kgateway's storage frames carry, as hash/crc32 does
// with crc32.MakeTable(crc32.Castagnoli), and to the same results.
//
// hash/crc32 computes it with the SSE4.2 CRC32 instruction, one 8-byte
// step per cycle at best (~30 GB/s over bytes in the cache, ~13 GB/s
// from memory). Every produced byte is checked once (the batch's CRC,
// before it is appended) and every fetched byte once (the storage
// frame's), so on the produce path that pass was the largest cost in user
// space. On CPUs with AVX-512 and VPCLMULQDQ, Update folds the input 256
// bytes at a time with carry-less multiplications instead (the folding
// of Intel's "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ", four 512-bit lanes wide), and reduces the last 128 bits
// with two CRC32 instructions; anything shorter than foldMin, and the
// tail under 64 bytes, goes to hash/crc32.
package crc32c

import "hash/crc32"

// Table is the Castagnoli table, for callers that still need hash/crc32
// (a hash.Hash32, crc32.Update over a few bytes).
var Table = crc32.MakeTable(crc32.Castagnoli)

// foldMin is the shortest input Update folds: below it the folding's
// setup and final reduction cost more than they save (measured: 768
// bytes 18 ns folded against 28; 512 bytes 18–23 against 16).
const foldMin = 768

// Checksum returns the CRC32C of p.
func Checksum(p []byte) uint32 { return Update(0, p) }

// Update returns the CRC32C of the bytes whose CRC32C is crc followed by
// p, as crc32.Update(crc, Table, p) does.
func Update(crc uint32, p []byte) uint32 {
	if useFold && len(p) >= foldMin {
		n := len(p) &^ 63
		crc = ^fold(^crc, p[:n])
		p = p[n:]
	}
	return crc32.Update(crc, Table, p)
}

// castagnoliReflected is the Castagnoli polynomial, bit-reflected.
const castagnoliReflected = 0x82f63b78

// xnModP returns x^n mod P, bit-reflected (bit 31 is x^0).
func xnModP(n int) uint32 {
	acc := uint32(1 << 31)
	for range n {
		if acc&1 != 0 {
			acc = acc>>1 ^ castagnoliReflected
		} else {
			acc >>= 1
		}
	}
	return acc
}

// foldConst is the pair of multipliers that moves a 128-bit lane d bytes
// further along the message: its first 8 bytes (earlier in the message,
// so moved further) by x^(8d+31), its last 8 by x^(8d-33), mod P (the
// offsets place each 64×32-bit product where the two CRC32 instructions
// that reduce the last 128 bits expect it). TestFoldConstants checks
// them against the published multipliers.
func foldConst(d int) [2]uint64 {
	return [2]uint64{uint64(xnModP(8*d + 31)), uint64(xnModP(8*d - 33))}
}
