//go:build amd64 && !purego

#include "textflag.h"

// Elementwise float32 arithmetic, 8 lanes at a time (n a multiple of 8; the Go side does
// tails): z = x op y (VV), z = x op s (VS) and z = s op y (SV).

// func addVV(z, x, y *float32, n int)
TEXT ·addVV(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ addVV_done
addVV_loop:
	VMOVUPS (SI), Y0
	VADDPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ addVV_loop
addVV_done:
	VZEROUPPER
	RET

// func subVV(z, x, y *float32, n int)
TEXT ·subVV(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ subVV_done
subVV_loop:
	VMOVUPS (SI), Y0
	VSUBPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ subVV_loop
subVV_done:
	VZEROUPPER
	RET

// func mulVV(z, x, y *float32, n int)
TEXT ·mulVV(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ mulVV_done
mulVV_loop:
	VMOVUPS (SI), Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ mulVV_loop
mulVV_done:
	VZEROUPPER
	RET

// func divVV(z, x, y *float32, n int)
TEXT ·divVV(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ divVV_done
divVV_loop:
	VMOVUPS (SI), Y0
	VDIVPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ divVV_loop
divVV_done:
	VZEROUPPER
	RET

// func addVS(z, x *float32, s float32, n int)
TEXT ·addVS(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	VBROADCASTSS s+16(FP), Y1
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ addVS_done
addVS_loop:
	VMOVUPS (SI), Y0
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ addVS_loop
addVS_done:
	VZEROUPPER
	RET

// func subVS(z, x *float32, s float32, n int)
TEXT ·subVS(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	VBROADCASTSS s+16(FP), Y1
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ subVS_done
subVS_loop:
	VMOVUPS (SI), Y0
	VSUBPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ subVS_loop
subVS_done:
	VZEROUPPER
	RET

// func mulVS(z, x *float32, s float32, n int)
TEXT ·mulVS(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	VBROADCASTSS s+16(FP), Y1
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ mulVS_done
mulVS_loop:
	VMOVUPS (SI), Y0
	VMULPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ mulVS_loop
mulVS_done:
	VZEROUPPER
	RET

// func divVS(z, x *float32, s float32, n int)
TEXT ·divVS(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	VBROADCASTSS s+16(FP), Y1
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ divVS_done
divVS_loop:
	VMOVUPS (SI), Y0
	VDIVPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ divVS_loop
divVS_done:
	VZEROUPPER
	RET

// func subSV(z *float32, s float32, y *float32, n int)
TEXT ·subSV(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	VBROADCASTSS s+8(FP), Y1
	MOVQ y+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ subSV_done
subSV_loop:
	VSUBPS (SI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ subSV_loop
subSV_done:
	VZEROUPPER
	RET

// func divSV(z *float32, s float32, y *float32, n int)
TEXT ·divSV(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	VBROADCASTSS s+8(FP), Y1
	MOVQ y+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ divSV_done
divSV_loop:
	VDIVPS (SI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ divSV_loop
divSV_done:
	VZEROUPPER
	RET

// func axpyVS(y, x *float32, a float32, n int): y += a * x, multiplied then added (two
// roundings, as Go's y[i] += a*x[i] is), 8 lanes at a time.
TEXT ·axpyVS(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	VBROADCASTSS a+16(FP), Y1
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ axpyVS_done
axpyVS_loop:
	VMULPS (SI), Y1, Y0
	VADDPS (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ axpyVS_loop
axpyVS_done:
	VZEROUPPER
	RET

// func reluV(z, x *float32, n int): z = x < 0 ? 0 : x (VMAXPS with 0 first: NaN and -0 are
// kept), 8 lanes at a time.
TEXT ·reluV(SB), NOSPLIT, $0-24
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	SHRQ $3, CX
	JEQ reluV_done
reluV_loop:
	VMAXPS (SI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ reluV_loop
reluV_done:
	VZEROUPPER
	RET
