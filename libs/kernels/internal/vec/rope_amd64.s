#include "textflag.h"

// func ropeRowsAVX2(dst, src, cos, sin *float32, pos *int64, rows, n, half, heads, hstride, rstride int)
// For rows rows of heads vectors (hstride elements apart; a row rstride elements after the
// last), with c = cos + pos[r]*half and s = sin + pos[r]*half for row r, and k in [0, n), n a
// positive multiple of 8:
//   dst[k]      = src[k]*c[k] - src[k+half]*s[k]
//   dst[k+half] = src[k+half]*c[k] + src[k]*s[k]
// Each output lane is computed from loads made before its stores, so dst may be src. DI holds
// dst - src (both advance alike), so that one register addresses both.
TEXT ·ropeRowsAVX2(SB), NOSPLIT, $0-88
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	SUBQ SI, DI // dst - src
	MOVQ cos+16(FP), R8
	MOVQ sin+24(FP), R9
	MOVQ pos+32(FP), R13
	MOVQ half+56(FP), R10
	SHLQ $2, R10 // bytes from here on
	MOVQ hstride+72(FP), R12
	SHLQ $2, R12
	MOVQ n+48(FP), AX
	SHLQ $2, AX
	MOVQ AX, n+48(FP)
	MOVQ rstride+80(FP), AX
	SHLQ $2, AX
	MOVQ AX, rstride+80(FP)
rows_row:
	MOVQ (R13), AX
	IMULQ R10, AX
	LEAQ (R8)(AX*1), BX // the row's cos
	ADDQ R9, AX         // the row's sin
	XORQ DX, DX         // byte offset of the group in a head
rows_group:
	VMOVUPS (BX)(DX*1), Y0
	VMOVUPS (AX)(DX*1), Y1
	LEAQ (SI)(DX*1), R11
	MOVQ heads+64(FP), CX
rows_head:
	VMOVUPS (R11), Y2        // x0
	VMOVUPS (R11)(R10*1), Y3 // x1
	VMULPS Y0, Y2, Y4
	VFNMADD231PS Y1, Y3, Y4
	VMULPS Y0, Y3, Y5
	VFMADD231PS Y1, Y2, Y5
	LEAQ (R11)(DI*1), R14
	VMOVUPS Y4, (R14)
	VMOVUPS Y5, (R14)(R10*1)
	ADDQ R12, R11
	DECQ CX
	JNZ rows_head
	ADDQ $32, DX
	CMPQ DX, n+48(FP)
	JLT rows_group
	ADDQ $8, R13
	ADDQ rstride+80(FP), SI
	DECQ rows+40(FP)
	JNZ rows_row
	VZEROUPPER
	RET
