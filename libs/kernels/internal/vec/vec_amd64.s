//go:build amd64 && !purego

#include "textflag.h"

// Constants of exp, each replicated over 8 lanes: the clamps, log2(e), ln 2 in two parts
// (Cody-Waite), Cephes' expf polynomial, 1.0, and the float32 exponent bias.
DATA expc<>+0(SB)/4, $0x42b20000 // hi 89.0
DATA expc<>+4(SB)/4, $0x42b20000 // hi 89.0
DATA expc<>+8(SB)/4, $0x42b20000 // hi 89.0
DATA expc<>+12(SB)/4, $0x42b20000 // hi 89.0
DATA expc<>+16(SB)/4, $0x42b20000 // hi 89.0
DATA expc<>+20(SB)/4, $0x42b20000 // hi 89.0
DATA expc<>+24(SB)/4, $0x42b20000 // hi 89.0
DATA expc<>+28(SB)/4, $0x42b20000 // hi 89.0
DATA expc<>+32(SB)/4, $0xc2aeac4f // lo -87.33654
DATA expc<>+36(SB)/4, $0xc2aeac4f // lo -87.33654
DATA expc<>+40(SB)/4, $0xc2aeac4f // lo -87.33654
DATA expc<>+44(SB)/4, $0xc2aeac4f // lo -87.33654
DATA expc<>+48(SB)/4, $0xc2aeac4f // lo -87.33654
DATA expc<>+52(SB)/4, $0xc2aeac4f // lo -87.33654
DATA expc<>+56(SB)/4, $0xc2aeac4f // lo -87.33654
DATA expc<>+60(SB)/4, $0xc2aeac4f // lo -87.33654
DATA expc<>+64(SB)/4, $0x3fb8aa3b // log2e 1.4426950408889634
DATA expc<>+68(SB)/4, $0x3fb8aa3b // log2e 1.4426950408889634
DATA expc<>+72(SB)/4, $0x3fb8aa3b // log2e 1.4426950408889634
DATA expc<>+76(SB)/4, $0x3fb8aa3b // log2e 1.4426950408889634
DATA expc<>+80(SB)/4, $0x3fb8aa3b // log2e 1.4426950408889634
DATA expc<>+84(SB)/4, $0x3fb8aa3b // log2e 1.4426950408889634
DATA expc<>+88(SB)/4, $0x3fb8aa3b // log2e 1.4426950408889634
DATA expc<>+92(SB)/4, $0x3fb8aa3b // log2e 1.4426950408889634
DATA expc<>+96(SB)/4, $0x3f318000 // c1 0.693359375
DATA expc<>+100(SB)/4, $0x3f318000 // c1 0.693359375
DATA expc<>+104(SB)/4, $0x3f318000 // c1 0.693359375
DATA expc<>+108(SB)/4, $0x3f318000 // c1 0.693359375
DATA expc<>+112(SB)/4, $0x3f318000 // c1 0.693359375
DATA expc<>+116(SB)/4, $0x3f318000 // c1 0.693359375
DATA expc<>+120(SB)/4, $0x3f318000 // c1 0.693359375
DATA expc<>+124(SB)/4, $0x3f318000 // c1 0.693359375
DATA expc<>+128(SB)/4, $0xb95e8083 // c2 -0.00021219444
DATA expc<>+132(SB)/4, $0xb95e8083 // c2 -0.00021219444
DATA expc<>+136(SB)/4, $0xb95e8083 // c2 -0.00021219444
DATA expc<>+140(SB)/4, $0xb95e8083 // c2 -0.00021219444
DATA expc<>+144(SB)/4, $0xb95e8083 // c2 -0.00021219444
DATA expc<>+148(SB)/4, $0xb95e8083 // c2 -0.00021219444
DATA expc<>+152(SB)/4, $0xb95e8083 // c2 -0.00021219444
DATA expc<>+156(SB)/4, $0xb95e8083 // c2 -0.00021219444
DATA expc<>+160(SB)/4, $0x39506967 // p0 0.000198756915
DATA expc<>+164(SB)/4, $0x39506967 // p0 0.000198756915
DATA expc<>+168(SB)/4, $0x39506967 // p0 0.000198756915
DATA expc<>+172(SB)/4, $0x39506967 // p0 0.000198756915
DATA expc<>+176(SB)/4, $0x39506967 // p0 0.000198756915
DATA expc<>+180(SB)/4, $0x39506967 // p0 0.000198756915
DATA expc<>+184(SB)/4, $0x39506967 // p0 0.000198756915
DATA expc<>+188(SB)/4, $0x39506967 // p0 0.000198756915
DATA expc<>+192(SB)/4, $0x3ab743ce // p1 0.0013981999507
DATA expc<>+196(SB)/4, $0x3ab743ce // p1 0.0013981999507
DATA expc<>+200(SB)/4, $0x3ab743ce // p1 0.0013981999507
DATA expc<>+204(SB)/4, $0x3ab743ce // p1 0.0013981999507
DATA expc<>+208(SB)/4, $0x3ab743ce // p1 0.0013981999507
DATA expc<>+212(SB)/4, $0x3ab743ce // p1 0.0013981999507
DATA expc<>+216(SB)/4, $0x3ab743ce // p1 0.0013981999507
DATA expc<>+220(SB)/4, $0x3ab743ce // p1 0.0013981999507
DATA expc<>+224(SB)/4, $0x3c088908 // p2 0.0083334519073
DATA expc<>+228(SB)/4, $0x3c088908 // p2 0.0083334519073
DATA expc<>+232(SB)/4, $0x3c088908 // p2 0.0083334519073
DATA expc<>+236(SB)/4, $0x3c088908 // p2 0.0083334519073
DATA expc<>+240(SB)/4, $0x3c088908 // p2 0.0083334519073
DATA expc<>+244(SB)/4, $0x3c088908 // p2 0.0083334519073
DATA expc<>+248(SB)/4, $0x3c088908 // p2 0.0083334519073
DATA expc<>+252(SB)/4, $0x3c088908 // p2 0.0083334519073
DATA expc<>+256(SB)/4, $0x3d2aa9c1 // p3 0.041665795894
DATA expc<>+260(SB)/4, $0x3d2aa9c1 // p3 0.041665795894
DATA expc<>+264(SB)/4, $0x3d2aa9c1 // p3 0.041665795894
DATA expc<>+268(SB)/4, $0x3d2aa9c1 // p3 0.041665795894
DATA expc<>+272(SB)/4, $0x3d2aa9c1 // p3 0.041665795894
DATA expc<>+276(SB)/4, $0x3d2aa9c1 // p3 0.041665795894
DATA expc<>+280(SB)/4, $0x3d2aa9c1 // p3 0.041665795894
DATA expc<>+284(SB)/4, $0x3d2aa9c1 // p3 0.041665795894
DATA expc<>+288(SB)/4, $0x3e2aaaaa // p4 0.16666665459
DATA expc<>+292(SB)/4, $0x3e2aaaaa // p4 0.16666665459
DATA expc<>+296(SB)/4, $0x3e2aaaaa // p4 0.16666665459
DATA expc<>+300(SB)/4, $0x3e2aaaaa // p4 0.16666665459
DATA expc<>+304(SB)/4, $0x3e2aaaaa // p4 0.16666665459
DATA expc<>+308(SB)/4, $0x3e2aaaaa // p4 0.16666665459
DATA expc<>+312(SB)/4, $0x3e2aaaaa // p4 0.16666665459
DATA expc<>+316(SB)/4, $0x3e2aaaaa // p4 0.16666665459
DATA expc<>+320(SB)/4, $0x3f000000 // p5 0.50000001201
DATA expc<>+324(SB)/4, $0x3f000000 // p5 0.50000001201
DATA expc<>+328(SB)/4, $0x3f000000 // p5 0.50000001201
DATA expc<>+332(SB)/4, $0x3f000000 // p5 0.50000001201
DATA expc<>+336(SB)/4, $0x3f000000 // p5 0.50000001201
DATA expc<>+340(SB)/4, $0x3f000000 // p5 0.50000001201
DATA expc<>+344(SB)/4, $0x3f000000 // p5 0.50000001201
DATA expc<>+348(SB)/4, $0x3f000000 // p5 0.50000001201
DATA expc<>+352(SB)/4, $0x3f800000 // one 1.0
DATA expc<>+356(SB)/4, $0x3f800000 // one 1.0
DATA expc<>+360(SB)/4, $0x3f800000 // one 1.0
DATA expc<>+364(SB)/4, $0x3f800000 // one 1.0
DATA expc<>+368(SB)/4, $0x3f800000 // one 1.0
DATA expc<>+372(SB)/4, $0x3f800000 // one 1.0
DATA expc<>+376(SB)/4, $0x3f800000 // one 1.0
DATA expc<>+380(SB)/4, $0x3f800000 // one 1.0
DATA expc<>+384(SB)/4, $0x0000007f // 127
DATA expc<>+388(SB)/4, $0x0000007f // 127
DATA expc<>+392(SB)/4, $0x0000007f // 127
DATA expc<>+396(SB)/4, $0x0000007f // 127
DATA expc<>+400(SB)/4, $0x0000007f // 127
DATA expc<>+404(SB)/4, $0x0000007f // 127
DATA expc<>+408(SB)/4, $0x0000007f // 127
DATA expc<>+412(SB)/4, $0x0000007f // 127
GLOBL expc<>(SB), RODATA|NOPTR, $416

// EXP8 sets Y0 = exp(Y0) for 8 lanes, using Y1-Y5 and Y12. NaN stays NaN; values above
// ln(MaxFloat32) overflow to +Inf; values below ln(SmallestNormalFloat32) give 0 (no denormal
// arithmetic, which is slow).
#define EXP8 \
	VCMPPS $3, Y0, Y0, Y1 \
	VANDPS Y0, Y1, Y1 \
	VCMPPS $0x1d, expc<>+32(SB), Y0, Y12 \
	VMINPS expc<>+0(SB), Y0, Y0 \
	VMAXPS expc<>+32(SB), Y0, Y0 \
	VMULPS expc<>+64(SB), Y0, Y2 \
	VROUNDPS $0, Y2, Y2 \
	VFNMADD231PS expc<>+96(SB), Y2, Y0 \
	VFNMADD231PS expc<>+128(SB), Y2, Y0 \
	VMOVUPS expc<>+160(SB), Y3 \
	VFMADD213PS expc<>+192(SB), Y0, Y3 \
	VFMADD213PS expc<>+224(SB), Y0, Y3 \
	VFMADD213PS expc<>+256(SB), Y0, Y3 \
	VFMADD213PS expc<>+288(SB), Y0, Y3 \
	VFMADD213PS expc<>+320(SB), Y0, Y3 \
	VMULPS Y0, Y0, Y4 \
	VFMADD213PS Y0, Y4, Y3 \
	VADDPS expc<>+352(SB), Y3, Y3 \
	VCVTPS2DQ Y2, Y2 \
	VPSRAD $1, Y2, Y5 \
	VPSUBD Y5, Y2, Y2 \
	VPADDD expc<>+384(SB), Y5, Y5 \
	VPADDD expc<>+384(SB), Y2, Y2 \
	VPSLLD $23, Y5, Y5 \
	VPSLLD $23, Y2, Y2 \
	VMULPS Y5, Y3, Y3 \
	VMULPS Y2, Y3, Y0 \
	VANDPS Y12, Y0, Y0 \
	VORPS Y1, Y0, Y0

// func expShiftAVX2(dst, src *float32, n int, shift float32) (sum float32)
// dst[i] = exp(src[i] - shift) for n a multiple of 8; returns the sum of dst.
TEXT ·expShiftAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS shift+24(FP), Y7
	VXORPS Y6, Y6, Y6
	SHRQ $3, CX
	JEQ done
loop:
	VMOVUPS (SI), Y0
	VSUBPS Y7, Y0, Y0
	EXP8
	VMOVUPS Y0, (DI)
	VADDPS Y0, Y6, Y6
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ loop
done:
	VEXTRACTF128 $1, Y6, X1
	VADDPS X1, X6, X6
	VHADDPS X6, X6, X6
	VHADDPS X6, X6, X6
	VZEROUPPER
	MOVSS X6, sum+32(FP)
	RET

// func maxAVX2(x *float32, n int) float32
// The largest of x[0:n] for n a positive multiple of 8; NaN if any element is NaN.
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Y0
	VCMPPS $3, Y0, Y0, Y2
	ADDQ $32, SI
	SHRQ $3, CX
	DECQ CX
	JEQ mdone
mloop:
	VMOVUPS (SI), Y1
	VCMPPS $3, Y1, Y1, Y3
	VORPS Y3, Y2, Y2
	VMAXPS Y1, Y0, Y0
	ADDQ $32, SI
	DECQ CX
	JNZ mloop
mdone:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	VMOVMSKPS Y2, AX
	TESTL AX, AX
	JEQ mret
	MOVL $0x7fc00000, AX // a NaN was seen
	MOVL AX, X0
mret:
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET

// func sigmoidAVX2(dst, src *float32, n int, alpha float32, mulx bool)
// dst[i] = 1 / (1 + e^(-alpha src[i])), times src[i] when mulx, for n a multiple of 8.
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-29
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS alpha+24(FP), Y10
	VXORPS Y11, Y11, Y11
	VSUBPS Y10, Y11, Y10
	VMOVUPS expc<>+352(SB), Y11
	MOVBLZX mulx+28(FP), AX
	SHRQ $3, CX
	JEQ sdone
	TESTQ AX, AX
	JNE siluloop
sloop:
	VMOVUPS (SI), Y0
	VMULPS Y10, Y0, Y0
	EXP8
	VADDPS Y11, Y0, Y0
	VDIVPS Y0, Y11, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ sloop
	JMP sdone
siluloop:
	VMOVUPS (SI), Y6
	VMULPS Y10, Y6, Y0
	EXP8
	VADDPS Y11, Y0, Y0
	VDIVPS Y0, Y6, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ siluloop
sdone:
	VZEROUPPER
	RET

// func geluTanhAVX2(dst, src *float32, n int)
// dst[i] = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3): GELU's tanh form, since
// 1 + tanh(u) = 2 / (1 + e^(-2u)), exact in both tails. n is a multiple of 8.
TEXT ·geluTanhAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPS expc<>+352(SB), Y11
	MOVL $0xbd922279, AX // -0.044715 * 2 * sqrt(2/pi)
	MOVL AX, X8
	VBROADCASTSS X8, Y8
	MOVL $0xbfcc422a, AX // -2 * sqrt(2/pi)
	MOVL AX, X9
	VBROADCASTSS X9, Y9
	SHRQ $3, CX
	JEQ gdone
gloop:
	VMOVUPS (SI), Y6
	VMULPS Y6, Y6, Y0
	VMULPS Y8, Y0, Y0
	VADDPS Y9, Y0, Y0
	VMULPS Y6, Y0, Y0
	EXP8
	VADDPS Y11, Y0, Y0
	VDIVPS Y0, Y6, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ gloop
gdone:
	VZEROUPPER
	RET

// EXP16 sets Z0 = exp(Z0) for 16 lanes (AVX-512F), using Z1-Z3 and K1, with the constants
// loaded in Z16-Z27 by EXP16CONSTS: values below ln(SmallestNormalFloat32) give 0 (zeroing
// mask), NaN stays NaN, and VSCALEFPS makes overflow +Inf.
#define EXP16CONSTS \
	VBROADCASTSS expc<>+0(SB), Z16 \
	VBROADCASTSS expc<>+32(SB), Z17 \
	VBROADCASTSS expc<>+64(SB), Z18 \
	VBROADCASTSS expc<>+96(SB), Z19 \
	VBROADCASTSS expc<>+128(SB), Z20 \
	VBROADCASTSS expc<>+160(SB), Z21 \
	VBROADCASTSS expc<>+192(SB), Z22 \
	VBROADCASTSS expc<>+224(SB), Z23 \
	VBROADCASTSS expc<>+256(SB), Z24 \
	VBROADCASTSS expc<>+288(SB), Z25 \
	VBROADCASTSS expc<>+320(SB), Z26 \
	VBROADCASTSS expc<>+352(SB), Z27

#define EXP16 \
	VCMPPS $5, Z17, Z0, K1 \
	VMINPS Z0, Z16, Z0 \
	VMULPS Z18, Z0, Z2 \
	VRNDSCALEPS $0, Z2, Z2 \
	VFNMADD231PS Z19, Z2, Z0 \
	VFNMADD231PS Z20, Z2, Z0 \
	VMOVAPS Z21, Z3 \
	VFMADD213PS Z22, Z0, Z3 \
	VFMADD213PS Z23, Z0, Z3 \
	VFMADD213PS Z24, Z0, Z3 \
	VFMADD213PS Z25, Z0, Z3 \
	VFMADD213PS Z26, Z0, Z3 \
	VMULPS Z0, Z0, Z1 \
	VFMADD213PS Z0, Z1, Z3 \
	VADDPS Z27, Z3, Z3 \
	VSCALEFPS Z2, Z3, K1, Z0 \
	VMOVAPS.Z Z0, K1, Z0

// func expShiftAVX512(dst, src *float32, n int, shift float32) (sum float32)
// dst[i] = exp(src[i] - shift) for n a multiple of 16; returns the sum of dst.
TEXT ·expShiftAVX512(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS shift+24(FP), Z7
	VPXORD Z6, Z6, Z6
	EXP16CONSTS
	SHRQ $4, CX
	JEQ e16_done
e16_loop:
	VMOVUPS (SI), Z0
	VSUBPS Z7, Z0, Z0
	EXP16
	VMOVUPS Z0, (DI)
	VADDPS Z0, Z6, Z6
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ e16_loop
e16_done:
	VEXTRACTF64X4 $1, Z6, Y1
	VADDPS Y1, Y6, Y6
	VEXTRACTF128 $1, Y6, X1
	VADDPS X1, X6, X6
	VHADDPS X6, X6, X6
	VHADDPS X6, X6, X6
	VZEROUPPER
	MOVSS X6, sum+32(FP)
	RET
