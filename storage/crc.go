package storage

// CRC32C concatenation. A Kafka record batch carries the CRC32C of its
// bytes 21..end, which the resolver has already verified; the frame CRC
// covers the frame header and the whole payload. crcConcat derives the
// CRC of a++b from crc(a), crc(b) and len(b), so a frame over a batch
// costs a checksum of its first bytes, not a second pass over megabytes.
//
// The arithmetic is in GF(2)[x] modulo the Castagnoli polynomial, bit-
// reflected as the table-driven CRC is: appending n zero bytes to a
// message multiplies its (pre-conditioning-free) CRC by x^(8n), and the
// init/final XORs of the CRC cancel out in crc(a)·x^(8n) ⊕ crc(b).

// castagnoliReflected is the Castagnoli polynomial, bit-reflected.
const castagnoliReflected = 0x82f63b78

// x2k[k] is x^(2^k) mod P, reflected (bit 31 is x^0).
var x2k = func() (t [64]uint32) {
	p := uint32(1 << 30) // x^1
	for k := range t {
		t[k] = p
		p = gfMul(p, p)
	}
	return t
}()

// gfMul multiplies a and b modulo P (both reflected).
func gfMul(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1 << 31); m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReflected
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow8n returns x^(8n) mod P: one multiplication per set bit of n.
func xPow8n(n int64) uint32 {
	p := uint32(1 << 31) // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = gfMul(x2k[k], p)
		}
	}
	return p
}

// crcConcat returns the CRC32C of a++b given crcA = CRC32C(a), crcB =
// CRC32C(b) and lenB = len(b).
func crcConcat(crcA, crcB uint32, lenB int64) uint32 {
	return gfMul(xPow8n(lenB), crcA) ^ crcB
}
