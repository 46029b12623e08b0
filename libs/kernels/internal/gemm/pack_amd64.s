//go:build amd64 && !purego

#include "textflag.h"

// func pack8AVX2(dst *float32, dstStride int, src *float32, srcStride int, k int)
// Transposes 8 rows of k floats (row r at src + r*srcStride) into 8 columns of a panel: float
// p of row r goes to dst + p*dstStride + 4r. k is a multiple of 8; strides are in bytes.
TEXT ·pack8AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ dstStride+8(FP), R9
	MOVQ src+16(FP), SI
	MOVQ srcStride+24(FP), R8
	MOVQ k+32(FP), CX
	LEAQ (R8)(R8*2), R11       // 3 src rows
	LEAQ (SI)(R8*4), R10       // src row 4
	LEAQ (R9)(R9*2), R12       // 3 dst rows
	LEAQ (DI)(R9*4), DX        // dst row 4
	MOVQ R9, R13
	SHLQ $3, R13               // 8 dst rows
	SHRQ $3, CX
	JEQ pack_done
pack_loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R8*1), Y1
	VMOVUPS (SI)(R8*2), Y2
	VMOVUPS (SI)(R11*1), Y3
	VMOVUPS (R10), Y4
	VMOVUPS (R10)(R8*1), Y5
	VMOVUPS (R10)(R8*2), Y6
	VMOVUPS (R10)(R11*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R9*1)
	VMOVUPS Y10, (DI)(R9*2)
	VMOVUPS Y11, (DI)(R12*1)
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, (DX)(R9*1)
	VMOVUPS Y14, (DX)(R9*2)
	VMOVUPS Y15, (DX)(R12*1)
	ADDQ $32, SI
	ADDQ $32, R10
	ADDQ R13, DI
	ADDQ R13, DX
	DECQ CX
	JNZ pack_loop
pack_done:
	VZEROUPPER
	RET
