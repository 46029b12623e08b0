#include "textflag.h"

// func ropeHalvesAVX2(dst, src, cos, sin *float32, n, half, heads, stride int)
// For each of heads vectors (stride elements apart) and k in [0, n), n a positive multiple of 8:
//   dst[k]      = src[k]*cos[k] - src[k+half]*sin[k]
//   dst[k+half] = src[k+half]*cos[k] + src[k]*sin[k]
// Each output lane is computed from loads made before its stores, so dst may be src.
TEXT ·ropeHalvesAVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ cos+16(FP), R8
	MOVQ sin+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ half+40(FP), R10
	MOVQ heads+48(FP), R11
	MOVQ stride+56(FP), R12
	SHLQ $2, R10 // half and stride in bytes
	SHLQ $2, R12
	SHRQ $3, CX // 8-lane groups per head
rope_head:
	XORQ AX, AX // byte offset of the group in the head
	MOVQ CX, DX
rope_group:
	VMOVUPS (R8)(AX*1), Y0      // cos
	VMOVUPS (R9)(AX*1), Y1      // sin
	LEAQ (SI)(AX*1), BX
	VMOVUPS (BX), Y2            // x0
	VMOVUPS (BX)(R10*1), Y3     // x1
	VMULPS Y0, Y2, Y4           // x0*cos
	VFNMADD231PS Y1, Y3, Y4     // - x1*sin
	VMULPS Y0, Y3, Y5           // x1*cos
	VFMADD231PS Y1, Y2, Y5      // + x0*sin
	LEAQ (DI)(AX*1), BX
	VMOVUPS Y4, (BX)
	VMOVUPS Y5, (BX)(R10*1)
	ADDQ $32, AX
	DECQ DX
	JNZ rope_group
	ADDQ R12, SI
	ADDQ R12, DI
	DECQ R11
	JNZ rope_head
	VZEROUPPER
	RET
