package cuda

import (
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The elementwise kernels' op codes and launches (ewSteps), which the binary (binary.go),
// variadic (variadic.go), unary (unary.go), contrib activation (gelu.go) and Swish (swish24.go)
// ops share, in files named as the CPU backend's.

// ewOp is an op code of the elementwise kernels, the numbers of csrc/ops.cuh.
type ewOp int

const (
	ewAbs          ewOp = 0
	ewNeg          ewOp = 1
	ewSign         ewOp = 2
	ewRelu         ewOp = 3
	ewSqrt         ewOp = 4
	ewRecip        ewOp = 5
	ewExp          ewOp = 6
	ewLog          ewOp = 7
	ewTanh         ewOp = 8
	ewSigmoid      ewOp = 9
	ewSin          ewOp = 10
	ewCos          ewOp = 11
	ewTan          ewOp = 12
	ewAtan         ewOp = 13
	ewErf          ewOp = 14
	ewFloor        ewOp = 15
	ewCeil         ewOp = 16
	ewRound        ewOp = 17
	ewSoftplus     ewOp = 18
	ewSoftsign     ewOp = 19
	ewGelu         ewOp = 20
	ewGeluTanh     ewOp = 21
	ewLeakyRelu    ewOp = 22
	ewElu          ewOp = 23
	ewHardSigmoid  ewOp = 24
	ewQuickGelu    ewOp = 25
	ewSilu         ewOp = 26
	ewHardSwish    ewOp = 27
	ewIdentity     ewOp = 28
	ewScale        ewOp = 29
	ewAdd          ewOp = 64
	ewSub          ewOp = 65
	ewMul          ewOp = 66
	ewDiv          ewOp = 67
	ewMod          ewOp = 68
	ewFmod         ewOp = 69
	ewMax          ewOp = 70
	ewMin          ewOp = 71
	ewPow          ewOp = 72
	ewBiasGelu     ewOp = 73
	ewBiasGeluTanh ewOp = 74
	ewAdd3         ewOp = 96
	ewClip         ewOp = 97
	ewEq           ewOp = 128
	ewLt           ewOp = 129
	ewLe           ewOp = 130
	ewGt           ewOp = 131
	ewGe           ewOp = 132
	ewIsNaN        ewOp = 133
	ewIsInf        ewOp = 134
	ewAnd          ewOp = 160
	ewOr           ewOp = 161
	ewXor          ewOp = 162
	ewNot          ewOp = 163
)

// ewOpNames maps the csrc/ops.cuh names to the codes, for the test that keeps them in step.
var ewOpNames = map[string]ewOp{
	"EW_ABS": ewAbs, "EW_NEG": ewNeg, "EW_SIGN": ewSign, "EW_RELU": ewRelu, "EW_SQRT": ewSqrt,
	"EW_RECIP": ewRecip, "EW_EXP": ewExp, "EW_LOG": ewLog, "EW_TANH": ewTanh, "EW_SIGMOID": ewSigmoid,
	"EW_SIN": ewSin, "EW_COS": ewCos, "EW_TAN": ewTan, "EW_ATAN": ewAtan, "EW_ERF": ewErf,
	"EW_FLOOR": ewFloor, "EW_CEIL": ewCeil, "EW_ROUND": ewRound, "EW_SOFTPLUS": ewSoftplus,
	"EW_SOFTSIGN": ewSoftsign, "EW_GELU": ewGelu, "EW_GELU_TANH": ewGeluTanh,
	"EW_LEAKY_RELU": ewLeakyRelu, "EW_ELU": ewElu, "EW_HARD_SIGMOID": ewHardSigmoid,
	"EW_QUICK_GELU": ewQuickGelu, "EW_SILU": ewSilu, "EW_HARD_SWISH": ewHardSwish,
	"EW_IDENTITY": ewIdentity, "EW_SCALE": ewScale, "EW_ADD": ewAdd, "EW_SUB": ewSub, "EW_MUL": ewMul,
	"EW_DIV": ewDiv, "EW_MOD": ewMod, "EW_FMOD": ewFmod, "EW_MAX": ewMax, "EW_MIN": ewMin,
	"EW_POW": ewPow, "EW_BIAS_GELU": ewBiasGelu, "EW_BIAS_GELU_TANH": ewBiasGeluTanh,
	"EW_ADD3": ewAdd3, "EW_CLIP": ewClip, "EW_EQ": ewEq, "EW_LT": ewLt, "EW_LE": ewLe, "EW_GT": ewGt,
	"EW_GE": ewGe, "EW_ISNAN": ewIsNaN, "EW_ISINF": ewIsInf, "EW_AND": ewAnd, "EW_OR": ewOr,
	"EW_XOR": ewXor, "EW_NOT": ewNot,
}

func (o ewOp) compare() bool { return o >= ewEq && o <= ewGe }

func (o ewOp) logical() bool { return o >= ewAnd }

// operand is an input of an elementwise launch: where it is and its shape, broadcast to the
// output's. An absent operand (absent()) reads as a null pointer.
type operand struct {
	ref   param
	shape []int64
}

func absent() operand { return operand{ref: nullp(), shape: []int64{}} }

// ewSteps is one launch of an elementwise kernel over an output of dtype-class dt and the given
// shape: out = op(a, b, c). bdt, when not Undefined, is b's dtype where it differs from a's
// (Pow's exponent).
func ewSteps(dt graph.DType, op ewOp, bdt graph.DType, shape []int64, out param, a, b, c operand, alpha, beta float32, t kernels.Target) ([]step, error) {
	l, err := broadcastLayout(shape, a.shape, b.shape, c.shape)
	if err != nil {
		return nil, err
	}
	n := numel(shape)
	if n == 0 {
		return nil, nil
	}
	kernel := "carve_ew_bool"
	if dt != graph.Bool {
		if dtName(dt) == "" {
			return nil, errDType("the operand type", dt, "float32, float16, bfloat16, int64, int32 or bool")
		}
		kernel = "carve_ew_" + dtName(dt)
	}
	opx := int(op)
	if bdt != graph.Undefined {
		opx |= int(bdt) << 16
	}
	per := int64(1)
	if l.rank == 1 && dt != graph.Bool {
		per = 16 / dt.Size()
	}
	ps := append([]param{out, a.ref, b.ref, c.ref, i64p(n), i32p(opx), f32p(alpha), f32p(beta)}, l.params()...)
	return []step{{kernel: kernel, grid: grid1(n, per, t), block: block1, params: ps}}, nil
}

// directOp is an op of one tactic, "direct", selected by sel.
func directOp(domain, name string, sel func(*kernels.Node, kernels.Target) (plan, error)) *op {
	return &op{key: kernels.Key(domain, name), tactics: direct, sel: sel}
}
