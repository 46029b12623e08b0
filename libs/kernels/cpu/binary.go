package cpu

import (
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/vec"
)

type binOp uint8

const (
	opAdd binOp = iota
	opSub
	opMul
	opDiv
	opMod
	opMax
	opMin
	// comparisons: bool output
	opEq
	opLt
	opLe
	opGt
	opGe
	// logical: bool inputs and output
	opAnd
	opOr
	opXor
)

func (o binOp) compare() bool { return o >= opEq && o <= opGe }
func (o binOp) logical() bool { return o >= opAnd }

// binary is a broadcast elementwise op of two operands.
type binary struct {
	op      binOp
	dt      graph.DType // operand dtype
	fmod    bool        // Mod: C fmod semantics (sign of the dividend) instead of Python's
	p       bplan
	workers int
}

func selectBinary(op binOp) func(n *kernels.Node, d kernels.Target) (plan, error) {
	kind := kernels.BinaryArith
	switch {
	case op.logical():
		kind = kernels.BinaryLogical
	case op.compare():
		kind = kernels.BinaryCompare
	}
	return func(n *kernels.Node, d kernels.Target) (plan, error) {
		shape, fmod, err := kernels.CheckBinary(n, kind)
		if err != nil {
			return plan{}, err
		}
		a, b := n.Inputs[0], n.Inputs[1]
		bin := &binary{op: op, dt: a.DType, fmod: fmod, workers: d.Workers}
		if bin.p, err = newBPlan(shape, a.Shape, b.Shape); err != nil {
			return plan{}, err
		}
		bin.p.splitRuns(bin.workers)
		// In place: each run of Z reads its own elements of an operand of Z's shape (vec's
		// loops allow exact aliasing) before writing them; a broadcast operand is not offered.
		return plan{tactic: "direct", r: bin, inPlace: kernels.ElementwiseInPlace(n)}, nil
	}
}

func (b *binary) run(in, out []kernels.Tensor, _ wsParts) error {
	p := &b.p
	if p.total > 0 {
		runRanges(b, in, out, p.total/p.inner(), p.inner(), weightPlain, b.workers)
	}
	return nil
}

// runRange computes runs [lo, hi) of the broadcast plan.
func (b *binary) runRange(in, out []kernels.Tensor, lo, hi int) {
	x, y, z := in[0].Data, in[1].Data, out[0].Data
	switch {
	case b.op.logical():
		binLoop(b, lo, hi, x, y, z, logicRun)
		return
	case b.op.compare():
		zb := kernels.ViewAs[bool](z)
		switch b.dt {
		case graph.Float32:
			cmpLoop(b, lo, hi, kernels.ViewAs[float32](x), kernels.ViewAs[float32](y), zb)
		case graph.Float64:
			cmpLoop(b, lo, hi, kernels.ViewAs[float64](x), kernels.ViewAs[float64](y), zb)
		case graph.Int64:
			cmpLoop(b, lo, hi, kernels.ViewAs[int64](x), kernels.ViewAs[int64](y), zb)
		case graph.Int32:
			cmpLoop(b, lo, hi, kernels.ViewAs[int32](x), kernels.ViewAs[int32](y), zb)
		case graph.Int16:
			cmpLoop(b, lo, hi, kernels.ViewAs[int16](x), kernels.ViewAs[int16](y), zb)
		case graph.Int8:
			cmpLoop(b, lo, hi, kernels.ViewAs[int8](x), kernels.ViewAs[int8](y), zb)
		case graph.Uint8, graph.Bool:
			cmpLoop(b, lo, hi, x, y, zb)
		case graph.Uint16:
			cmpLoop(b, lo, hi, kernels.ViewAs[uint16](x), kernels.ViewAs[uint16](y), zb)
		case graph.Uint32:
			cmpLoop(b, lo, hi, kernels.ViewAs[uint32](x), kernels.ViewAs[uint32](y), zb)
		case graph.Uint64:
			cmpLoop(b, lo, hi, kernels.ViewAs[uint64](x), kernels.ViewAs[uint64](y), zb)
		case graph.Float16, graph.BFloat16:
			cmpLoop16(b, lo, hi, kernels.ViewAs[uint16](x), kernels.ViewAs[uint16](y), zb)
		}
		return
	}
	switch b.dt {
	case graph.Float32:
		binLoop(b, lo, hi, kernels.ViewAs[float32](x), kernels.ViewAs[float32](y), kernels.ViewAs[float32](z), arithF32)
	case graph.Float64:
		binLoop(b, lo, hi, kernels.ViewAs[float64](x), kernels.ViewAs[float64](y), kernels.ViewAs[float64](z), arithF[float64])
	case graph.Int64:
		binLoop(b, lo, hi, kernels.ViewAs[int64](x), kernels.ViewAs[int64](y), kernels.ViewAs[int64](z), arithI[int64])
	case graph.Int32:
		binLoop(b, lo, hi, kernels.ViewAs[int32](x), kernels.ViewAs[int32](y), kernels.ViewAs[int32](z), arithI[int32])
	case graph.Int16:
		binLoop(b, lo, hi, kernels.ViewAs[int16](x), kernels.ViewAs[int16](y), kernels.ViewAs[int16](z), arithI[int16])
	case graph.Int8:
		binLoop(b, lo, hi, kernels.ViewAs[int8](x), kernels.ViewAs[int8](y), kernels.ViewAs[int8](z), arithI[int8])
	case graph.Uint8:
		binLoop(b, lo, hi, x, y, z, arithI[uint8])
	case graph.Uint16:
		binLoop(b, lo, hi, kernels.ViewAs[uint16](x), kernels.ViewAs[uint16](y), kernels.ViewAs[uint16](z), arithI[uint16])
	case graph.Uint32:
		binLoop(b, lo, hi, kernels.ViewAs[uint32](x), kernels.ViewAs[uint32](y), kernels.ViewAs[uint32](z), arithI[uint32])
	case graph.Uint64:
		binLoop(b, lo, hi, kernels.ViewAs[uint64](x), kernels.ViewAs[uint64](y), kernels.ViewAs[uint64](z), arithI[uint64])
	case graph.Float16:
		binLoop(b, lo, hi, kernels.ViewAs[uint16](x), kernels.ViewAs[uint16](y), kernels.ViewAs[uint16](z), arith16(f16, tof16))
	case graph.BFloat16:
		binLoop(b, lo, hi, kernels.ViewAs[uint16](x), kernels.ViewAs[uint16](y), kernels.ViewAs[uint16](z), arith16(bf16, tobf16))
	}
}

// binLoop walks runs [lo, hi) of the plan and applies f to each: z[i] = x[i*sx] op y[i*sy].
func binLoop[T, U any](b *binary, lo, hi int, x, y []T, z []U, f func(b *binary, z []U, x, y []T, sx, sy int)) {
	p := &b.p
	if p.total == 0 {
		return
	}
	n := p.inner()
	sx, sy := p.st[0][p.rank-1], p.st[1][p.rank-1]
	c := cursorAt(p, lo)
	for o := lo * n; o < hi*n; o += n {
		f(b, z[o:o+n], x[c.off[0]:], y[c.off[1]:], sx, sy)
		c.next()
	}
}

// vecOps maps the four basic ops to package vec's vectorized ones.
var vecOps = [...]vec.Op{opAdd: vec.Add, opSub: vec.Sub, opMul: vec.Mul, opDiv: vec.Div}

// arithF32 is float32 arithmetic on one run: the four basic ops on contiguous or scalar
// operands are vectorized, the rest is arithF.
func arithF32(b *binary, z, x, y []float32, sx, sy int) {
	if b.op <= opDiv {
		switch {
		case sx == 1 && sy == 1:
			vec.VV(vecOps[b.op], z, x, y)
			return
		case sx == 1 && sy == 0:
			vec.VS(vecOps[b.op], z, x, y[0])
			return
		case sx == 0 && sy == 1:
			vec.SV(vecOps[b.op], z, x[0], y)
			return
		}
	}
	arithF(b, z, x, y, sx, sy)
}

// arithF is float arithmetic on one run. The contiguous cases of the four common ops get their
// own loops so the compiler can keep them tight.
func arithF[T float](b *binary, z, x, y []T, sx, sy int) {
	switch {
	case sx == 1 && sy == 1:
		x, y = x[:len(z)], y[:len(z)]
		switch b.op {
		case opAdd:
			for i := range z {
				z[i] = x[i] + y[i]
			}
			return
		case opSub:
			for i := range z {
				z[i] = x[i] - y[i]
			}
			return
		case opMul:
			for i := range z {
				z[i] = x[i] * y[i]
			}
			return
		case opDiv:
			for i := range z {
				z[i] = x[i] / y[i]
			}
			return
		}
	case sx == 1 && sy == 0:
		x = x[:len(z)]
		v := y[0]
		switch b.op {
		case opAdd:
			for i := range z {
				z[i] = x[i] + v
			}
			return
		case opSub:
			for i := range z {
				z[i] = x[i] - v
			}
			return
		case opMul:
			for i := range z {
				z[i] = x[i] * v
			}
			return
		case opDiv:
			for i := range z {
				z[i] = x[i] / v
			}
			return
		}
	}
	for i := range z {
		z[i] = arithF1(b, x[i*sx], y[i*sy])
	}
}

func arithF1[T float](b *binary, a, c T) T {
	switch b.op {
	case opAdd:
		return a + c
	case opSub:
		return a - c
	case opMul:
		return a * c
	case opDiv:
		return a / c
	case opMod:
		return T(math.Mod(float64(a), float64(c)))
	case opMax:
		if a != a || a > c {
			return a
		}
		return c
	case opMin:
		if a != a || a < c {
			return a
		}
		return c
	}
	return 0
}

// arithI is integer arithmetic on one run. Division by zero yields 0 instead of a panic
// (ONNX leaves it undefined).
func arithI[T integer](b *binary, z, x, y []T, sx, sy int) {
	if sx == 1 && sy == 1 && b.op == opAdd {
		x, y = x[:len(z)], y[:len(z)]
		for i := range z {
			z[i] = x[i] + y[i]
		}
		return
	}
	for i := range z {
		a, c := x[i*sx], y[i*sy]
		var r T
		switch b.op {
		case opAdd:
			r = a + c
		case opSub:
			r = a - c
		case opMul:
			r = a * c
		case opDiv:
			if c != 0 {
				r = a / c
			}
		case opMod:
			if c != 0 {
				r = a % c
				if !b.fmod && r != 0 && (r < 0) != (c < 0) {
					r += c
				}
			}
		case opMax:
			r = max(a, c)
		case opMin:
			r = min(a, c)
		}
		z[i] = r
	}
}

// arith16 computes 16-bit float arithmetic in float32.
func arith16(load func(uint16) float32, store func(float32) uint16) func(b *binary, z, x, y []uint16, sx, sy int) {
	return func(b *binary, z, x, y []uint16, sx, sy int) {
		for i := range z {
			z[i] = store(arithF1(b, load(x[i*sx]), load(y[i*sy])))
		}
	}
}

func cmpLoop[T number](b *binary, lo, hi int, x, y []T, z []bool) {
	binLoop(b, lo, hi, x, y, z, func(b *binary, z []bool, x, y []T, sx, sy int) {
		for i := range z {
			z[i] = cmp1(b.op, x[i*sx], y[i*sy])
		}
	})
}

func cmpLoop16(b *binary, lo, hi int, x, y []uint16, z []bool) {
	load := f16
	if b.dt == graph.BFloat16 {
		load = bf16
	}
	binLoop(b, lo, hi, x, y, z, func(b *binary, z []bool, x, y []uint16, sx, sy int) {
		for i := range z {
			z[i] = cmp1(b.op, load(x[i*sx]), load(y[i*sy]))
		}
	})
}

func cmp1[T number](op binOp, a, c T) bool {
	switch op {
	case opEq:
		return a == c
	case opLt:
		return a < c
	case opLe:
		return a <= c
	case opGt:
		return a > c
	case opGe:
		return a >= c
	}
	return false
}

// logicRun is And, Or and Xor of bool bytes, without branches: a byte b is true when
// (b | -b) >> 7 is 1.
func logicRun(b *binary, z, x, y []byte, sx, sy int) {
	for i := range z {
		a, c := x[i*sx], y[i*sy]
		a, c = (a|-a)>>7, (c|-c)>>7
		switch b.op {
		case opAnd:
			z[i] = a & c
		case opOr:
			z[i] = a | c
		case opXor:
			z[i] = a ^ c
		}
	}
}

func binaryOps() []*op {
	mk := func(name string, o binOp) *op {
		return &op{key: kernels.Key("", name), tactics: direct, sel: selectBinary(o)}
	}
	return []*op{
		mk("Add", opAdd), mk("Sub", opSub), mk("Mul", opMul), mk("Div", opDiv), mk("Mod", opMod),
		mk("Equal", opEq), mk("Less", opLt), mk("LessOrEqual", opLe), mk("Greater", opGt),
		mk("GreaterOrEqual", opGe), mk("And", opAnd), mk("Or", opOr), mk("Xor", opXor),
	}
}
