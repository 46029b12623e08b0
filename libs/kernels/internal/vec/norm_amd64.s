//go:build amd64 && !purego

#include "textflag.h"

// Row statistics and the affine step of the layer norms, 8 lanes at a time (n a multiple
// of 8). Sums accumulate in float64.

// func sumsAVX2(x *float32, n int) (sum, sumsq float64)
TEXT ·sumsAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	SHRQ $3, CX
	JEQ sums_done
sums_loop:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VADDPD Y0, Y4, Y4
	VADDPD Y1, Y5, Y5
	VFMADD231PD Y0, Y0, Y6
	VFMADD231PD Y1, Y1, Y7
	ADDQ $32, SI
	DECQ CX
	JNZ sums_loop
sums_done:
	VADDPD Y5, Y4, Y4
	VADDPD Y7, Y6, Y6
	VEXTRACTF128 $1, Y4, X5
	VADDPD X5, X4, X4
	VHADDPD X4, X4, X4
	VEXTRACTF128 $1, Y6, X7
	VADDPD X7, X6, X6
	VHADDPD X6, X6, X6
	VZEROUPPER
	MOVSD X4, sum+16(FP)
	MOVSD X6, sumsq+24(FP)
	RET

// func sumSqDevAVX2(x *float32, n int, m float64) float64
// The sum of (x[i] - m)^2.
TEXT ·sumSqDevAVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSD m+16(FP), Y3
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	SHRQ $3, CX
	JEQ dev_done
dev_loop:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VSUBPD Y3, Y0, Y0
	VSUBPD Y3, Y1, Y1
	VFMADD231PD Y0, Y0, Y6
	VFMADD231PD Y1, Y1, Y7
	ADDQ $32, SI
	DECQ CX
	JNZ dev_loop
dev_done:
	VADDPD Y7, Y6, Y6
	VEXTRACTF128 $1, Y6, X7
	VADDPD X7, X6, X6
	VHADDPD X6, X6, X6
	VZEROUPPER
	MOVSD X6, ret+24(FP)
	RET

// func affineAVX2(y, x, gamma, beta *float32, n int, m, inv float32)
// y[i] = (x[i] - m) * inv * gamma[i] + beta[i]; beta may be nil (no shift).
TEXT ·affineAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gamma+16(FP), DX
	MOVQ beta+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSS m+40(FP), Y2
	VBROADCASTSS inv+44(FP), Y3
	SHRQ $3, CX
	JEQ aff_done
	TESTQ BX, BX
	JEQ aff_noshift
aff_loop:
	VMOVUPS (SI), Y0
	VSUBPS Y2, Y0, Y0
	VMULPS Y3, Y0, Y0
	VMULPS (DX), Y0, Y0
	VADDPS (BX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	ADDQ $32, DI
	DECQ CX
	JNZ aff_loop
	JMP aff_done
aff_noshift:
	VMOVUPS (SI), Y0
	VSUBPS Y2, Y0, Y0
	VMULPS Y3, Y0, Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ aff_noshift
aff_done:
	VZEROUPPER
	RET
