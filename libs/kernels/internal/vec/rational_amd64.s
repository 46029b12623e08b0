//go:build amd64 && !purego

#include "textflag.h"

// Rational approximations (Eigen's float tanh and erf): tanh(x) = x P(x^2) / Q(x^2) with x
// clamped to +-7.905 (within 3e-7), erf(x) the same form clamped to +-4 (within 7e-8); then
// constants of the functions built on them. Each is replicated over 8 lanes.
DATA ratc<>+0(SB)/4, $0x40fcf84f // thi
DATA ratc<>+4(SB)/4, $0x40fcf84f // thi
DATA ratc<>+8(SB)/4, $0x40fcf84f // thi
DATA ratc<>+12(SB)/4, $0x40fcf84f // thi
DATA ratc<>+16(SB)/4, $0x40fcf84f // thi
DATA ratc<>+20(SB)/4, $0x40fcf84f // thi
DATA ratc<>+24(SB)/4, $0x40fcf84f // thi
DATA ratc<>+28(SB)/4, $0x40fcf84f // thi
DATA ratc<>+32(SB)/4, $0xc0fcf84f // tlo
DATA ratc<>+36(SB)/4, $0xc0fcf84f // tlo
DATA ratc<>+40(SB)/4, $0xc0fcf84f // tlo
DATA ratc<>+44(SB)/4, $0xc0fcf84f // tlo
DATA ratc<>+48(SB)/4, $0xc0fcf84f // tlo
DATA ratc<>+52(SB)/4, $0xc0fcf84f // tlo
DATA ratc<>+56(SB)/4, $0xc0fcf84f // tlo
DATA ratc<>+60(SB)/4, $0xc0fcf84f // tlo
DATA ratc<>+64(SB)/4, $0xa59f25c0 // ta13
DATA ratc<>+68(SB)/4, $0xa59f25c0 // ta13
DATA ratc<>+72(SB)/4, $0xa59f25c0 // ta13
DATA ratc<>+76(SB)/4, $0xa59f25c0 // ta13
DATA ratc<>+80(SB)/4, $0xa59f25c0 // ta13
DATA ratc<>+84(SB)/4, $0xa59f25c0 // ta13
DATA ratc<>+88(SB)/4, $0xa59f25c0 // ta13
DATA ratc<>+92(SB)/4, $0xa59f25c0 // ta13
DATA ratc<>+96(SB)/4, $0x2a61337e // ta11
DATA ratc<>+100(SB)/4, $0x2a61337e // ta11
DATA ratc<>+104(SB)/4, $0x2a61337e // ta11
DATA ratc<>+108(SB)/4, $0x2a61337e // ta11
DATA ratc<>+112(SB)/4, $0x2a61337e // ta11
DATA ratc<>+116(SB)/4, $0x2a61337e // ta11
DATA ratc<>+120(SB)/4, $0x2a61337e // ta11
DATA ratc<>+124(SB)/4, $0x2a61337e // ta11
DATA ratc<>+128(SB)/4, $0xaebd37ff // ta9
DATA ratc<>+132(SB)/4, $0xaebd37ff // ta9
DATA ratc<>+136(SB)/4, $0xaebd37ff // ta9
DATA ratc<>+140(SB)/4, $0xaebd37ff // ta9
DATA ratc<>+144(SB)/4, $0xaebd37ff // ta9
DATA ratc<>+148(SB)/4, $0xaebd37ff // ta9
DATA ratc<>+152(SB)/4, $0xaebd37ff // ta9
DATA ratc<>+156(SB)/4, $0xaebd37ff // ta9
DATA ratc<>+160(SB)/4, $0x335c0041 // ta7
DATA ratc<>+164(SB)/4, $0x335c0041 // ta7
DATA ratc<>+168(SB)/4, $0x335c0041 // ta7
DATA ratc<>+172(SB)/4, $0x335c0041 // ta7
DATA ratc<>+176(SB)/4, $0x335c0041 // ta7
DATA ratc<>+180(SB)/4, $0x335c0041 // ta7
DATA ratc<>+184(SB)/4, $0x335c0041 // ta7
DATA ratc<>+188(SB)/4, $0x335c0041 // ta7
DATA ratc<>+192(SB)/4, $0x3779434a // ta5
DATA ratc<>+196(SB)/4, $0x3779434a // ta5
DATA ratc<>+200(SB)/4, $0x3779434a // ta5
DATA ratc<>+204(SB)/4, $0x3779434a // ta5
DATA ratc<>+208(SB)/4, $0x3779434a // ta5
DATA ratc<>+212(SB)/4, $0x3779434a // ta5
DATA ratc<>+216(SB)/4, $0x3779434a // ta5
DATA ratc<>+220(SB)/4, $0x3779434a // ta5
DATA ratc<>+224(SB)/4, $0x3a270ded // ta3
DATA ratc<>+228(SB)/4, $0x3a270ded // ta3
DATA ratc<>+232(SB)/4, $0x3a270ded // ta3
DATA ratc<>+236(SB)/4, $0x3a270ded // ta3
DATA ratc<>+240(SB)/4, $0x3a270ded // ta3
DATA ratc<>+244(SB)/4, $0x3a270ded // ta3
DATA ratc<>+248(SB)/4, $0x3a270ded // ta3
DATA ratc<>+252(SB)/4, $0x3a270ded // ta3
DATA ratc<>+256(SB)/4, $0x3ba059dc // ta1
DATA ratc<>+260(SB)/4, $0x3ba059dc // ta1
DATA ratc<>+264(SB)/4, $0x3ba059dc // ta1
DATA ratc<>+268(SB)/4, $0x3ba059dc // ta1
DATA ratc<>+272(SB)/4, $0x3ba059dc // ta1
DATA ratc<>+276(SB)/4, $0x3ba059dc // ta1
DATA ratc<>+280(SB)/4, $0x3ba059dc // ta1
DATA ratc<>+284(SB)/4, $0x3ba059dc // ta1
DATA ratc<>+288(SB)/4, $0x35a0d3d8 // tb6
DATA ratc<>+292(SB)/4, $0x35a0d3d8 // tb6
DATA ratc<>+296(SB)/4, $0x35a0d3d8 // tb6
DATA ratc<>+300(SB)/4, $0x35a0d3d8 // tb6
DATA ratc<>+304(SB)/4, $0x35a0d3d8 // tb6
DATA ratc<>+308(SB)/4, $0x35a0d3d8 // tb6
DATA ratc<>+312(SB)/4, $0x35a0d3d8 // tb6
DATA ratc<>+316(SB)/4, $0x35a0d3d8 // tb6
DATA ratc<>+320(SB)/4, $0x38f895d6 // tb4
DATA ratc<>+324(SB)/4, $0x38f895d6 // tb4
DATA ratc<>+328(SB)/4, $0x38f895d6 // tb4
DATA ratc<>+332(SB)/4, $0x38f895d6 // tb4
DATA ratc<>+336(SB)/4, $0x38f895d6 // tb4
DATA ratc<>+340(SB)/4, $0x38f895d6 // tb4
DATA ratc<>+344(SB)/4, $0x38f895d6 // tb4
DATA ratc<>+348(SB)/4, $0x38f895d6 // tb4
DATA ratc<>+352(SB)/4, $0x3b14aa05 // tb2
DATA ratc<>+356(SB)/4, $0x3b14aa05 // tb2
DATA ratc<>+360(SB)/4, $0x3b14aa05 // tb2
DATA ratc<>+364(SB)/4, $0x3b14aa05 // tb2
DATA ratc<>+368(SB)/4, $0x3b14aa05 // tb2
DATA ratc<>+372(SB)/4, $0x3b14aa05 // tb2
DATA ratc<>+376(SB)/4, $0x3b14aa05 // tb2
DATA ratc<>+380(SB)/4, $0x3b14aa05 // tb2
DATA ratc<>+384(SB)/4, $0x3ba059dd // tb0
DATA ratc<>+388(SB)/4, $0x3ba059dd // tb0
DATA ratc<>+392(SB)/4, $0x3ba059dd // tb0
DATA ratc<>+396(SB)/4, $0x3ba059dd // tb0
DATA ratc<>+400(SB)/4, $0x3ba059dd // tb0
DATA ratc<>+404(SB)/4, $0x3ba059dd // tb0
DATA ratc<>+408(SB)/4, $0x3ba059dd // tb0
DATA ratc<>+412(SB)/4, $0x3ba059dd // tb0
DATA ratc<>+416(SB)/4, $0x40800000 // ehi
DATA ratc<>+420(SB)/4, $0x40800000 // ehi
DATA ratc<>+424(SB)/4, $0x40800000 // ehi
DATA ratc<>+428(SB)/4, $0x40800000 // ehi
DATA ratc<>+432(SB)/4, $0x40800000 // ehi
DATA ratc<>+436(SB)/4, $0x40800000 // ehi
DATA ratc<>+440(SB)/4, $0x40800000 // ehi
DATA ratc<>+444(SB)/4, $0x40800000 // ehi
DATA ratc<>+448(SB)/4, $0xc0800000 // elo
DATA ratc<>+452(SB)/4, $0xc0800000 // elo
DATA ratc<>+456(SB)/4, $0xc0800000 // elo
DATA ratc<>+460(SB)/4, $0xc0800000 // elo
DATA ratc<>+464(SB)/4, $0xc0800000 // elo
DATA ratc<>+468(SB)/4, $0xc0800000 // elo
DATA ratc<>+472(SB)/4, $0xc0800000 // elo
DATA ratc<>+476(SB)/4, $0xc0800000 // elo
DATA ratc<>+480(SB)/4, $0xaf95df0b // ea13
DATA ratc<>+484(SB)/4, $0xaf95df0b // ea13
DATA ratc<>+488(SB)/4, $0xaf95df0b // ea13
DATA ratc<>+492(SB)/4, $0xaf95df0b // ea13
DATA ratc<>+496(SB)/4, $0xaf95df0b // ea13
DATA ratc<>+500(SB)/4, $0xaf95df0b // ea13
DATA ratc<>+504(SB)/4, $0xaf95df0b // ea13
DATA ratc<>+508(SB)/4, $0xaf95df0b // ea13
DATA ratc<>+512(SB)/4, $0x32edffee // ea11
DATA ratc<>+516(SB)/4, $0x32edffee // ea11
DATA ratc<>+520(SB)/4, $0x32edffee // ea11
DATA ratc<>+524(SB)/4, $0x32edffee // ea11
DATA ratc<>+528(SB)/4, $0x32edffee // ea11
DATA ratc<>+532(SB)/4, $0x32edffee // ea11
DATA ratc<>+536(SB)/4, $0x32edffee // ea11
DATA ratc<>+540(SB)/4, $0x32edffee // ea11
DATA ratc<>+544(SB)/4, $0xb60cff51 // ea9
DATA ratc<>+548(SB)/4, $0xb60cff51 // ea9
DATA ratc<>+552(SB)/4, $0xb60cff51 // ea9
DATA ratc<>+556(SB)/4, $0xb60cff51 // ea9
DATA ratc<>+560(SB)/4, $0xb60cff51 // ea9
DATA ratc<>+564(SB)/4, $0xb60cff51 // ea9
DATA ratc<>+568(SB)/4, $0xb60cff51 // ea9
DATA ratc<>+572(SB)/4, $0xb60cff51 // ea9
DATA ratc<>+576(SB)/4, $0xb86ec2d2 // ea7
DATA ratc<>+580(SB)/4, $0xb86ec2d2 // ea7
DATA ratc<>+584(SB)/4, $0xb86ec2d2 // ea7
DATA ratc<>+588(SB)/4, $0xb86ec2d2 // ea7
DATA ratc<>+592(SB)/4, $0xb86ec2d2 // ea7
DATA ratc<>+596(SB)/4, $0xb86ec2d2 // ea7
DATA ratc<>+600(SB)/4, $0xb86ec2d2 // ea7
DATA ratc<>+604(SB)/4, $0xb86ec2d2 // ea7
DATA ratc<>+608(SB)/4, $0xba40ac63 // ea5
DATA ratc<>+612(SB)/4, $0xba40ac63 // ea5
DATA ratc<>+616(SB)/4, $0xba40ac63 // ea5
DATA ratc<>+620(SB)/4, $0xba40ac63 // ea5
DATA ratc<>+624(SB)/4, $0xba40ac63 // ea5
DATA ratc<>+628(SB)/4, $0xba40ac63 // ea5
DATA ratc<>+632(SB)/4, $0xba40ac63 // ea5
DATA ratc<>+636(SB)/4, $0xba40ac63 // ea5
DATA ratc<>+640(SB)/4, $0xbb41a1f6 // ea3
DATA ratc<>+644(SB)/4, $0xbb41a1f6 // ea3
DATA ratc<>+648(SB)/4, $0xbb41a1f6 // ea3
DATA ratc<>+652(SB)/4, $0xbb41a1f6 // ea3
DATA ratc<>+656(SB)/4, $0xbb41a1f6 // ea3
DATA ratc<>+660(SB)/4, $0xbb41a1f6 // ea3
DATA ratc<>+664(SB)/4, $0xbb41a1f6 // ea3
DATA ratc<>+668(SB)/4, $0xbb41a1f6 // ea3
DATA ratc<>+672(SB)/4, $0xbc83dbd4 // ea1
DATA ratc<>+676(SB)/4, $0xbc83dbd4 // ea1
DATA ratc<>+680(SB)/4, $0xbc83dbd4 // ea1
DATA ratc<>+684(SB)/4, $0xbc83dbd4 // ea1
DATA ratc<>+688(SB)/4, $0xbc83dbd4 // ea1
DATA ratc<>+692(SB)/4, $0xbc83dbd4 // ea1
DATA ratc<>+696(SB)/4, $0xbc83dbd4 // ea1
DATA ratc<>+700(SB)/4, $0xbc83dbd4 // ea1
DATA ratc<>+704(SB)/4, $0xb77460cd // eb8
DATA ratc<>+708(SB)/4, $0xb77460cd // eb8
DATA ratc<>+712(SB)/4, $0xb77460cd // eb8
DATA ratc<>+716(SB)/4, $0xb77460cd // eb8
DATA ratc<>+720(SB)/4, $0xb77460cd // eb8
DATA ratc<>+724(SB)/4, $0xb77460cd // eb8
DATA ratc<>+728(SB)/4, $0xb77460cd // eb8
DATA ratc<>+732(SB)/4, $0xb77460cd // eb8
DATA ratc<>+736(SB)/4, $0xb95fbd29 // eb6
DATA ratc<>+740(SB)/4, $0xb95fbd29 // eb6
DATA ratc<>+744(SB)/4, $0xb95fbd29 // eb6
DATA ratc<>+748(SB)/4, $0xb95fbd29 // eb6
DATA ratc<>+752(SB)/4, $0xb95fbd29 // eb6
DATA ratc<>+756(SB)/4, $0xb95fbd29 // eb6
DATA ratc<>+760(SB)/4, $0xb95fbd29 // eb6
DATA ratc<>+764(SB)/4, $0xb95fbd29 // eb6
DATA ratc<>+768(SB)/4, $0xbadc924e // eb4
DATA ratc<>+772(SB)/4, $0xbadc924e // eb4
DATA ratc<>+776(SB)/4, $0xbadc924e // eb4
DATA ratc<>+780(SB)/4, $0xbadc924e // eb4
DATA ratc<>+784(SB)/4, $0xbadc924e // eb4
DATA ratc<>+788(SB)/4, $0xbadc924e // eb4
DATA ratc<>+792(SB)/4, $0xbadc924e // eb4
DATA ratc<>+796(SB)/4, $0xbadc924e // eb4
DATA ratc<>+800(SB)/4, $0xbbf19bf8 // eb2
DATA ratc<>+804(SB)/4, $0xbbf19bf8 // eb2
DATA ratc<>+808(SB)/4, $0xbbf19bf8 // eb2
DATA ratc<>+812(SB)/4, $0xbbf19bf8 // eb2
DATA ratc<>+816(SB)/4, $0xbbf19bf8 // eb2
DATA ratc<>+820(SB)/4, $0xbbf19bf8 // eb2
DATA ratc<>+824(SB)/4, $0xbbf19bf8 // eb2
DATA ratc<>+828(SB)/4, $0xbbf19bf8 // eb2
DATA ratc<>+832(SB)/4, $0xbc69b6a7 // eb0
DATA ratc<>+836(SB)/4, $0xbc69b6a7 // eb0
DATA ratc<>+840(SB)/4, $0xbc69b6a7 // eb0
DATA ratc<>+844(SB)/4, $0xbc69b6a7 // eb0
DATA ratc<>+848(SB)/4, $0xbc69b6a7 // eb0
DATA ratc<>+852(SB)/4, $0xbc69b6a7 // eb0
DATA ratc<>+856(SB)/4, $0xbc69b6a7 // eb0
DATA ratc<>+860(SB)/4, $0xbc69b6a7 // eb0
DATA ratc<>+864(SB)/4, $0x3f000000 // half
DATA ratc<>+868(SB)/4, $0x3f000000 // half
DATA ratc<>+872(SB)/4, $0x3f000000 // half
DATA ratc<>+876(SB)/4, $0x3f000000 // half
DATA ratc<>+880(SB)/4, $0x3f000000 // half
DATA ratc<>+884(SB)/4, $0x3f000000 // half
DATA ratc<>+888(SB)/4, $0x3f000000 // half
DATA ratc<>+892(SB)/4, $0x3f000000 // half
DATA ratc<>+896(SB)/4, $0x3f800000 // one
DATA ratc<>+900(SB)/4, $0x3f800000 // one
DATA ratc<>+904(SB)/4, $0x3f800000 // one
DATA ratc<>+908(SB)/4, $0x3f800000 // one
DATA ratc<>+912(SB)/4, $0x3f800000 // one
DATA ratc<>+916(SB)/4, $0x3f800000 // one
DATA ratc<>+920(SB)/4, $0x3f800000 // one
DATA ratc<>+924(SB)/4, $0x3f800000 // one
DATA ratc<>+928(SB)/4, $0x3f4c422a // gc
DATA ratc<>+932(SB)/4, $0x3f4c422a // gc
DATA ratc<>+936(SB)/4, $0x3f4c422a // gc
DATA ratc<>+940(SB)/4, $0x3f4c422a // gc
DATA ratc<>+944(SB)/4, $0x3f4c422a // gc
DATA ratc<>+948(SB)/4, $0x3f4c422a // gc
DATA ratc<>+952(SB)/4, $0x3f4c422a // gc
DATA ratc<>+956(SB)/4, $0x3f4c422a // gc
DATA ratc<>+960(SB)/4, $0x3d372713 // gk
DATA ratc<>+964(SB)/4, $0x3d372713 // gk
DATA ratc<>+968(SB)/4, $0x3d372713 // gk
DATA ratc<>+972(SB)/4, $0x3d372713 // gk
DATA ratc<>+976(SB)/4, $0x3d372713 // gk
DATA ratc<>+980(SB)/4, $0x3d372713 // gk
DATA ratc<>+984(SB)/4, $0x3d372713 // gk
DATA ratc<>+988(SB)/4, $0x3d372713 // gk
DATA ratc<>+992(SB)/4, $0x3f3504f3 // rsqrt2
DATA ratc<>+996(SB)/4, $0x3f3504f3 // rsqrt2
DATA ratc<>+1000(SB)/4, $0x3f3504f3 // rsqrt2
DATA ratc<>+1004(SB)/4, $0x3f3504f3 // rsqrt2
DATA ratc<>+1008(SB)/4, $0x3f3504f3 // rsqrt2
DATA ratc<>+1012(SB)/4, $0x3f3504f3 // rsqrt2
DATA ratc<>+1016(SB)/4, $0x3f3504f3 // rsqrt2
DATA ratc<>+1020(SB)/4, $0x3f3504f3 // rsqrt2
GLOBL ratc<>(SB), RODATA|NOPTR, $1024

// TANH8 sets Y0 = tanh(Y0), using Y1-Y3 and the clamps in Y14, Y15; NaN stays NaN.
#define TANH8 \
	VMINPS Y0, Y14, Y0 \
	VMAXPS Y0, Y15, Y0 \
	VMULPS Y0, Y0, Y1 \
	VMOVUPS ratc<>+64(SB), Y2 \
	VFMADD213PS ratc<>+96(SB), Y1, Y2 \
	VFMADD213PS ratc<>+128(SB), Y1, Y2 \
	VFMADD213PS ratc<>+160(SB), Y1, Y2 \
	VFMADD213PS ratc<>+192(SB), Y1, Y2 \
	VFMADD213PS ratc<>+224(SB), Y1, Y2 \
	VFMADD213PS ratc<>+256(SB), Y1, Y2 \
	VMULPS Y0, Y2, Y2 \
	VMOVUPS ratc<>+288(SB), Y3 \
	VFMADD213PS ratc<>+320(SB), Y1, Y3 \
	VFMADD213PS ratc<>+352(SB), Y1, Y3 \
	VFMADD213PS ratc<>+384(SB), Y1, Y3 \
	VDIVPS Y3, Y2, Y0

// ERF8 sets Y0 = erf(Y0), using Y1-Y3 and the clamps in Y12, Y13; NaN stays NaN.
#define ERF8 \
	VMINPS Y0, Y12, Y0 \
	VMAXPS Y0, Y13, Y0 \
	VMULPS Y0, Y0, Y1 \
	VMOVUPS ratc<>+480(SB), Y2 \
	VFMADD213PS ratc<>+512(SB), Y1, Y2 \
	VFMADD213PS ratc<>+544(SB), Y1, Y2 \
	VFMADD213PS ratc<>+576(SB), Y1, Y2 \
	VFMADD213PS ratc<>+608(SB), Y1, Y2 \
	VFMADD213PS ratc<>+640(SB), Y1, Y2 \
	VFMADD213PS ratc<>+672(SB), Y1, Y2 \
	VMULPS Y0, Y2, Y2 \
	VMOVUPS ratc<>+704(SB), Y3 \
	VFMADD213PS ratc<>+736(SB), Y1, Y3 \
	VFMADD213PS ratc<>+768(SB), Y1, Y3 \
	VFMADD213PS ratc<>+800(SB), Y1, Y3 \
	VFMADD213PS ratc<>+832(SB), Y1, Y3 \
	VDIVPS Y3, Y2, Y0

// func tanhAVX2(dst, src *float32, n int)
// dst[i] = tanh(src[i]) for n a multiple of 8.
TEXT ·tanhAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPS ratc<>+0(SB), Y14
	VMOVUPS ratc<>+32(SB), Y15
	SHRQ $3, CX
	JEQ tanhAVX2_done
tanhAVX2_loop:
	VMOVUPS (SI), Y0
	TANH8
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ tanhAVX2_loop
tanhAVX2_done:
	VZEROUPPER
	RET

// func erfAVX2(dst, src *float32, n int)
// dst[i] = erf(src[i]) for n a multiple of 8.
TEXT ·erfAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPS ratc<>+416(SB), Y12
	VMOVUPS ratc<>+448(SB), Y13
	SHRQ $3, CX
	JEQ erfAVX2_done
erfAVX2_loop:
	VMOVUPS (SI), Y0
	ERF8
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ erfAVX2_loop
erfAVX2_done:
	VZEROUPPER
	RET

// func geluAVX2(dst, src *float32, n int)
// dst[i] = 0.5 x (1 + erf(x / sqrt 2)) for n a multiple of 8.
TEXT ·geluAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPS ratc<>+416(SB), Y12
	VMOVUPS ratc<>+448(SB), Y13
	SHRQ $3, CX
	JEQ geluAVX2_done
geluAVX2_loop:
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y9
	VMULPS ratc<>+992(SB), Y0, Y0
	ERF8
	VMULPS ratc<>+864(SB), Y9, Y9
	VFMADD213PS Y9, Y9, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ geluAVX2_loop
geluAVX2_done:
	VZEROUPPER
	RET
