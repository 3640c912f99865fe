#include "textflag.h"

// func foldAVX512(crc uint32, p *byte, n int, k *[10]uint64) uint32
//
// Z0–Z3 hold the message's next 256 bytes, the CRC so far XORed into the
// first 4. Each round moves them 256 bytes on (a carry-less multiplication
// of each 128-bit part's halves by the pair for 256 bytes, XORed with the
// bytes 256 further), then they fold into Z3, Z3 takes the remaining 64-byte
// blocks, its four 128-bit parts fold into one, and the CRC32 instruction
// reduces that part's 16 bytes from zero: the CRC of the n bytes.
TEXT ·foldAVX512(SB), NOSPLIT, $0-36
	MOVL crc+0(FP), AX
	MOVQ p+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ k+24(FP), DX

	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVD     AX, X9
	VPXORQ    Z9, Z0, Z0
	ADDQ      $256, SI
	SUBQ      $256, CX
	VBROADCASTI32X4 0(DX), Z8

loop256:
	CMPQ CX, $256
	JB   fold4
	VMOVDQU64  0(SI), Z12
	VMOVDQU64  64(SI), Z13
	VMOVDQU64  128(SI), Z14
	VMOVDQU64  192(SI), Z15
	VPCLMULQDQ $0x00, Z8, Z0, Z4
	VPCLMULQDQ $0x11, Z8, Z0, Z0
	VPCLMULQDQ $0x00, Z8, Z1, Z5
	VPCLMULQDQ $0x11, Z8, Z1, Z1
	VPCLMULQDQ $0x00, Z8, Z2, Z6
	VPCLMULQDQ $0x11, Z8, Z2, Z2
	VPCLMULQDQ $0x00, Z8, Z3, Z7
	VPCLMULQDQ $0x11, Z8, Z3, Z3
	VPTERNLOGQ $0x96, Z12, Z4, Z0
	VPTERNLOGQ $0x96, Z13, Z5, Z1
	VPTERNLOGQ $0x96, Z14, Z6, Z2
	VPTERNLOGQ $0x96, Z15, Z7, Z3
	ADDQ       $256, SI
	SUBQ       $256, CX
	JMP        loop256

fold4:
	// Z0 onto Z1, Z1 onto Z2, Z2 onto Z3: 64 bytes each.
	VBROADCASTI32X4 16(DX), Z8
	VPCLMULQDQ $0x00, Z8, Z0, Z4
	VPCLMULQDQ $0x11, Z8, Z0, Z0
	VPTERNLOGQ $0x96, Z4, Z0, Z1
	VPCLMULQDQ $0x00, Z8, Z1, Z4
	VPCLMULQDQ $0x11, Z8, Z1, Z1
	VPTERNLOGQ $0x96, Z4, Z1, Z2
	VPCLMULQDQ $0x00, Z8, Z2, Z4
	VPCLMULQDQ $0x11, Z8, Z2, Z2
	VPTERNLOGQ $0x96, Z4, Z2, Z3

loop64:
	CMPQ CX, $64
	JB   parts
	VMOVDQU64  0(SI), Z12
	VPCLMULQDQ $0x00, Z8, Z3, Z4
	VPCLMULQDQ $0x11, Z8, Z3, Z3
	VPTERNLOGQ $0x96, Z12, Z4, Z3
	ADDQ       $64, SI
	SUBQ       $64, CX
	JMP        loop64

parts:
	// Z3's parts 0, 1 and 2 onto part 3: 48, 32 and 16 bytes.
	VEXTRACTI32X4 $1, Z3, X1
	VEXTRACTI32X4 $2, Z3, X2
	VEXTRACTI32X4 $3, Z3, X13
	VMOVDQU    32(DX), X6
	VMOVDQU    48(DX), X7
	VMOVDQU    64(DX), X8
	VPCLMULQDQ $0x00, X6, X3, X4
	VPCLMULQDQ $0x11, X6, X3, X3
	VPXOR      X4, X3, X3
	VPCLMULQDQ $0x00, X7, X1, X5
	VPCLMULQDQ $0x11, X7, X1, X1
	VPXOR      X5, X1, X1
	VPCLMULQDQ $0x00, X8, X2, X4
	VPCLMULQDQ $0x11, X8, X2, X2
	VPXOR      X4, X2, X2
	VPXOR      X3, X13, X13
	VPXOR      X1, X2, X2
	VPXOR      X2, X13, X13

	VMOVQ   X13, AX
	VPEXTRQ $1, X13, BX
	XORL    R8, R8
	CRC32Q  AX, R8
	CRC32Q  BX, R8
	VZEROUPPER
	MOVL    R8, ret+32(FP)
	RET
