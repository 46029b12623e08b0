//go:build amd64 && !purego

#include "textflag.h"

DATA nib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nib<>(SB), RODATA|NOPTR, $16

// func dequant4AVX2(dst *float32, src *byte, n int, scale, offset float32)
// dst[2i] = float(src[i] & 15) * scale + offset, dst[2i+1] = float(src[i] >> 4) * scale +
// offset, for 16 bytes (32 floats) at a time; n is the byte count, a multiple of 16.
TEXT ·dequant4AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y14
	VBROADCASTSS offset+28(FP), Y15
	VMOVDQU nib<>(SB), X13
	SHRQ $4, CX
	JEQ dq_done
dq_loop:
	VMOVDQU (SI), X0
	VPAND X13, X0, X1
	VPSRLW $4, X0, X2
	VPAND X13, X2, X2
	VPUNPCKLBW X2, X1, X3
	VPUNPCKHBW X2, X1, X4
	VPMOVZXBD X3, Y5
	VPSRLDQ $8, X3, X3
	VPMOVZXBD X3, Y6
	VPMOVZXBD X4, Y7
	VPSRLDQ $8, X4, X4
	VPMOVZXBD X4, Y8
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6
	VCVTDQ2PS Y7, Y7
	VCVTDQ2PS Y8, Y8
	VFMADD213PS Y15, Y14, Y5
	VFMADD213PS Y15, Y14, Y6
	VFMADD213PS Y15, Y14, Y7
	VFMADD213PS Y15, Y14, Y8
	VMOVUPS Y5, (DI)
	VMOVUPS Y6, 32(DI)
	VMOVUPS Y7, 64(DI)
	VMOVUPS Y8, 96(DI)
	ADDQ $16, SI
	ADDQ $128, DI
	DECQ CX
	JNZ dq_loop
dq_done:
	VZEROUPPER
	RET
