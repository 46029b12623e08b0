//go:build amd64 && !purego

#include "textflag.h"

// Dword indices that put IsNaN's packed bytes back in order, and 32 bytes of 1.
DATA nanperm<>+0(SB)/4, $0
DATA nanperm<>+4(SB)/4, $4
DATA nanperm<>+8(SB)/4, $1
DATA nanperm<>+12(SB)/4, $5
DATA nanperm<>+16(SB)/4, $2
DATA nanperm<>+20(SB)/4, $6
DATA nanperm<>+24(SB)/4, $3
DATA nanperm<>+28(SB)/4, $7
DATA nanperm<>+32(SB)/8, $0x0101010101010101
DATA nanperm<>+40(SB)/8, $0x0101010101010101
DATA nanperm<>+48(SB)/8, $0x0101010101010101
DATA nanperm<>+56(SB)/8, $0x0101010101010101
GLOBL nanperm<>(SB), RODATA|NOPTR, $64

// func select32AVX2(z *uint32, c *byte, x *uint32, xstep int, y *uint32, ystep int, n int)
// z[i] = c[i] != 0 ? x[i] : y[i], 8 at a time (n a multiple of 8); x and y advance by xstep and
// ystep bytes per 8 elements (32, or 0 for 8 copies of a scalar).
TEXT ·select32AVX2(SB), NOSPLIT, $0-56
	MOVQ z+0(FP), DI
	MOVQ c+8(FP), CX
	MOVQ x+16(FP), SI
	MOVQ xstep+24(FP), R8
	MOVQ y+32(FP), DX
	MOVQ ystep+40(FP), R9
	MOVQ n+48(FP), BX
	VPXOR Y15, Y15, Y15
	SHRQ $3, BX
	JEQ sel_done
sel_loop:
	VPMOVZXBD (CX), Y0
	VPCMPEQD Y15, Y0, Y0
	VMOVDQU (SI), Y1
	VMOVDQU (DX), Y2
	VPBLENDVB Y0, Y2, Y1, Y3
	VMOVDQU Y3, (DI)
	ADDQ $8, CX
	ADDQ R8, SI
	ADDQ R9, DX
	ADDQ $32, DI
	DECQ BX
	JNZ sel_loop
sel_done:
	VZEROUPPER
	RET

// func isNaNAVX2(z *byte, x *float32, n int)
// z[i] = 1 if x[i] is NaN else 0, 32 at a time (n a multiple of 32).
TEXT ·isNaNAVX2(SB), NOSPLIT, $0-24
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVDQU nanperm<>+0(SB), Y14
	VMOVDQU nanperm<>+32(SB), Y15
	SHRQ $5, CX
	JEQ nan_done
nan_loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VCMPPS $3, Y0, Y0, Y0
	VCMPPS $3, Y1, Y1, Y1
	VCMPPS $3, Y2, Y2, Y2
	VCMPPS $3, Y3, Y3, Y3
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD Y0, Y14, Y0
	VPAND Y15, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $128, SI
	ADDQ $32, DI
	DECQ CX
	JNZ nan_loop
nan_done:
	VZEROUPPER
	RET
