package cpu

import (
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/vec"
)

type unOp uint8

const (
	uAbs unOp = iota
	uNeg
	uSign
	uRelu
	// float only from here
	uSqrt
	uReciprocal
	uExp
	uLog
	uTanh
	uSigmoid
	uSin
	uCos
	uErf
	uFloor
	uCeil
	uRound
	uSoftplus
	uGelu     // erf form
	uGeluTanh // tanh approximation
	uLeakyRelu
	uElu
	uHardSigmoid
	uQuickGelu
	uSilu
	uTan
	uAtan
	uSoftsign
	uIdentity
	uHardSwish
)

// unaryF applies op to one value in float64.
func unaryF(op unOp, x, a, b float64) float64 {
	switch op {
	case uAbs:
		return math.Abs(x)
	case uNeg:
		return -x
	case uSign:
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x // 0 and NaN
	case uRelu:
		if x > 0 {
			return x
		}
		return 0 * x // keeps NaN
	case uSqrt:
		return math.Sqrt(x)
	case uReciprocal:
		return 1 / x
	case uExp:
		return math.Exp(x)
	case uLog:
		return math.Log(x)
	case uTanh:
		return math.Tanh(x)
	case uSigmoid:
		if x >= 0 {
			return 1 / (1 + math.Exp(-x))
		}
		e := math.Exp(x)
		return e / (1 + e)
	case uSin:
		return math.Sin(x)
	case uCos:
		return math.Cos(x)
	case uTan:
		return math.Tan(x)
	case uAtan:
		return math.Atan(x)
	case uErf:
		return math.Erf(x)
	case uFloor:
		return math.Floor(x)
	case uCeil:
		return math.Ceil(x)
	case uRound:
		return math.RoundToEven(x)
	case uSoftplus:
		if x > 30 {
			return x
		}
		return math.Log1p(math.Exp(x))
	case uSoftsign:
		return x / (1 + math.Abs(x))
	case uGelu:
		return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
	case uGeluTanh:
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	case uLeakyRelu:
		if x >= 0 {
			return x
		}
		return a * x
	case uElu:
		if x >= 0 {
			return x
		}
		return a * (math.Exp(x) - 1)
	case uHardSigmoid:
		return math.Max(0, math.Min(1, a*x+b))
	case uQuickGelu:
		return x * unaryF(uSigmoid, a*x, 0, 0)
	case uSilu:
		return x * unaryF(uSigmoid, x, 0, 0)
	case uIdentity:
		return x
	case uHardSwish:
		return x * math.Max(0, math.Min(1, x/6+0.5))
	}
	return math.NaN()
}

// unary is an elementwise op of one operand; floats compute in float64 and round once.
type unary struct {
	op      unOp
	dt      graph.DType
	a, b    float64
	workers int
}

func selectUnary(o unOp) func(n *kernels.Node, d kernels.Target) (plan, error) {
	return func(n *kernels.Node, d kernels.Target) (plan, error) {
		a, err := kernels.CheckUnary(n)
		if err != nil {
			return plan{}, err
		}
		u := &unary{op: o, dt: n.Inputs[0].DType, a: float64(a.Alpha), b: float64(a.Beta), workers: d.Workers}
		if a.Tanh {
			u.op = uGeluTanh
		}
		// In place: each element is read, then written (unaryF32's loops and vec's allow exact
		// aliasing).
		return plan{tactic: "direct", r: u, inPlace: kernels.ElementwiseInPlace(n, 0)}, nil
	}
}

func (u *unary) run(in, out []kernels.Tensor, _ wsParts) error {
	a, b := u.a, u.b
	x, z := in[0], out[0]
	switch u.dt {
	case graph.Float32:
		xs, zs := x.Float32s(), z.Float32s()
		zs = zs[:len(xs)]
		if hasF32(u.op) { // in parallel when large
			runRanges(u, in, out, (len(xs)+parGrainElems-1)/parGrainElems, parGrainElems, weightPlain, u.workers)
			return nil
		}
		if !unaryF32(u.op, zs, xs, float32(a)) {
			for i, v := range xs {
				zs[i] = float32(unaryF(u.op, float64(v), a, b))
			}
		}
	case graph.Float64:
		xs, zs := x.Float64s(), z.Float64s()
		for i, v := range xs {
			zs[i] = unaryF(u.op, v, a, b)
		}
	case graph.Float16, graph.BFloat16:
		load, store := f16, tof16
		if u.dt == graph.BFloat16 {
			load, store = bf16, tobf16
		}
		xs, zs := x.Uint16s(), z.Uint16s()
		for i, v := range xs {
			zs[i] = store(float32(unaryF(u.op, float64(load(v)), a, b)))
		}
	default: // integers: Abs, Neg, Sign, Relu
		n := numel(x.Shape)
		for i := 0; i < n; i++ {
			v := loadI64(x, i)
			switch u.op {
			case uAbs:
				v = max(v, -v)
			case uNeg:
				v = -v
			case uSign:
				switch {
				case v > 0:
					v = 1
				case v < 0:
					v = -1
				}
			case uRelu:
				v = max(v, 0)
			}
			storeI64(z, i, v)
		}
	}
	return nil
}

// runRange computes chunks [lo, hi) of parGrainElems elements of a float32 op unaryF32 has.
func (u *unary) runRange(in, out []kernels.Tensor, lo, hi int) {
	xs := in[0].Float32s()
	xs = xs[lo*parGrainElems : min(hi*parGrainElems, len(xs))]
	unaryF32(u.op, out[0].Float32s()[lo*parGrainElems:][:len(xs)], xs, float32(u.a))
}

// hasF32 reports whether unaryF32 computes op.
func hasF32(op unOp) bool {
	switch op {
	case uNeg, uAbs, uRelu, uSqrt, uReciprocal, uIdentity, uExp, uSigmoid, uTanh, uErf, uGelu, uGeluTanh, uSilu, uQuickGelu:
		return true
	}
	return false
}

// unaryF32 computes the common float32 ops in float32 (package vec for the transcendental
// ones) and reports whether op was one of them; a is the op's alpha.
func unaryF32(op unOp, z, x []float32, a float32) bool {
	switch op {
	case uNeg:
		for i, v := range x {
			z[i] = -v
		}
	case uAbs:
		for i, v := range x {
			z[i] = float32(math.Abs(float64(v)))
		}
	case uRelu:
		// vec.Relu keeps NaN and has no branch: with a branch on the sign, which random-signed
		// activations mispredict half the time, Relu took 5-6 ns an element (a CNN's Relus were
		// a seventh of its run on one core)
		vec.Relu(z, x)
	case uSqrt:
		for i, v := range x {
			z[i] = float32(math.Sqrt(float64(v)))
		}
	case uReciprocal:
		for i, v := range x {
			z[i] = 1 / v
		}
	case uIdentity:
		copy(z, x)
	case uExp:
		vec.Exp(z, x)
	case uSigmoid:
		vec.Sigmoid(z, x)
	case uTanh:
		vec.Tanh(z, x)
	case uErf:
		vec.Erf(z, x)
	case uGelu:
		vec.Gelu(z, x)
	case uGeluTanh:
		vec.GeluTanh(z, x)
	case uSilu:
		vec.SiLU(z, x, 1)
	case uQuickGelu:
		vec.SiLU(z, x, a)
	default:
		return false
	}
	return true
}

// predicate is Not, IsNaN and IsInf: bool output.
type predicate struct {
	op       string
	neg, pos bool // IsInf detect_negative / detect_positive
}

func selectPredicate(name string) func(n *kernels.Node, d kernels.Target) (plan, error) {
	return func(n *kernels.Node, d kernels.Target) (plan, error) {
		if err := kernels.CheckPredicate(n); err != nil {
			return plan{}, err
		}
		p := &predicate{op: name, neg: n.Attrs.Int("detect_negative", 1) != 0, pos: n.Attrs.Int("detect_positive", 1) != 0}
		return plan{tactic: "direct", r: p}, nil
	}
}

func (p *predicate) run(in, out []kernels.Tensor, _ wsParts) error {
	x, z := in[0], out[0].Data
	n := numel(x.Shape)
	if x.DType == graph.Float32 && p.op == "IsNaN" {
		vec.IsNaN(z[:n], x.Float32s())
		return nil
	}
	if x.DType == graph.Float32 && p.op == "IsInf" {
		for i, v := range x.Float32s()[:n] {
			r := p.pos && v > math.MaxFloat32 || p.neg && v < -math.MaxFloat32
			z[i] = 0
			if r {
				z[i] = 1
			}
		}
		return nil
	}
	for i := 0; i < n; i++ {
		var r bool
		if p.op == "Not" {
			r = x.Data[i] == 0
		} else {
			v := loadF64(x, i)
			if p.op == "IsNaN" {
				r = v != v
			} else {
				r = p.pos && math.IsInf(v, 1) || p.neg && math.IsInf(v, -1)
			}
		}
		z[i] = 0
		if r {
			z[i] = 1
		}
	}
	return nil
}

// cast is Cast (and CastLike): C conversion semantics, float to bool is x != 0.
type cast struct{ from, to graph.DType }

func selectCast(n *kernels.Node, d kernels.Target) (plan, error) {
	to, err := kernels.CheckCast(n)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: "direct", r: &cast{from: n.Inputs[0].DType, to: to}}, nil
}

func (c *cast) run(in, out []kernels.Tensor, _ wsParts) error {
	x, z := in[0], out[0]
	if c.from == c.to {
		copy(z.Data, x.Data)
		return nil
	}
	switch c.from {
	case graph.Float32:
		castFrom(x.Float32s(), z)
	case graph.Float64:
		castFrom(x.Float64s(), z)
	case graph.Int64:
		castFrom(x.Int64s(), z)
	case graph.Int32:
		castFrom(x.Int32s(), z)
	case graph.Int16:
		castFrom(kernels.ViewAs[int16](x.Data), z)
	case graph.Int8:
		castFrom(kernels.ViewAs[int8](x.Data), z)
	case graph.Uint8, graph.Bool:
		castFrom(x.Data[:numel(x.Shape)], z)
	case graph.Uint16:
		castFrom(x.Uint16s(), z)
	case graph.Uint32:
		castFrom(kernels.ViewAs[uint32](x.Data), z)
	case graph.Uint64:
		castFrom(kernels.ViewAs[uint64](x.Data), z)
	case graph.Float16, graph.BFloat16:
		load := f16
		if c.from == graph.BFloat16 {
			load = bf16
		}
		u := x.Uint16s()
		for i, v := range u {
			f := load(v)
			if z.DType == graph.Bool {
				storeI64(z, i, b2i(f != 0))
			} else {
				storeF64(z, i, float64(f))
			}
		}
	}
	return nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func castFrom[S number](src []S, z kernels.Tensor) {
	switch z.DType {
	case graph.Float32:
		castSlice(src, z.Float32s())
	case graph.Float64:
		castSlice(src, z.Float64s())
	case graph.Int64:
		castSlice(src, z.Int64s())
	case graph.Int32:
		castSlice(src, z.Int32s())
	case graph.Int16:
		castSlice(src, kernels.ViewAs[int16](z.Data))
	case graph.Int8:
		castSlice(src, kernels.ViewAs[int8](z.Data))
	case graph.Uint8:
		castSlice(src, z.Data)
	case graph.Uint16:
		castSlice(src, z.Uint16s())
	case graph.Uint32:
		castSlice(src, kernels.ViewAs[uint32](z.Data))
	case graph.Uint64:
		castSlice(src, kernels.ViewAs[uint64](z.Data))
	case graph.Bool:
		for i, v := range src {
			z.Data[i] = byte(b2i(v != 0))
		}
	case graph.Float16:
		u := z.Uint16s()
		for i, v := range src {
			u[i] = tof16(float32(v))
		}
	case graph.BFloat16:
		u := z.Uint16s()
		for i, v := range src {
			u[i] = tobf16(float32(v))
		}
	}
}

func castSlice[S, D number](src []S, dst []D) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = D(v)
	}
}

func unaryOps() []*op {
	mk := func(name string, o unOp) *op {
		return &op{key: kernels.Key("", name), tactics: direct, sel: selectUnary(o)}
	}
	ms := func(name string, o unOp) *op {
		return &op{key: kernels.Key(kernels.DomainMicrosoft, name), tactics: direct, sel: selectUnary(o)}
	}
	pr := func(name string) *op {
		return &op{key: kernels.Key("", name), tactics: direct, sel: selectPredicate(name)}
	}
	return []*op{
		mk("Abs", uAbs), mk("Neg", uNeg), mk("Sign", uSign), mk("Relu", uRelu), mk("Sqrt", uSqrt),
		mk("Reciprocal", uReciprocal), mk("Exp", uExp), mk("Log", uLog), mk("Tanh", uTanh),
		mk("Sigmoid", uSigmoid), mk("Sin", uSin), mk("Cos", uCos), mk("Tan", uTan), mk("Atan", uAtan),
		mk("Erf", uErf), mk("Floor", uFloor), mk("Ceil", uCeil), mk("Round", uRound),
		mk("Softplus", uSoftplus), mk("Softsign", uSoftsign), mk("Gelu", uGelu), mk("LeakyRelu", uLeakyRelu),
		mk("Elu", uElu), mk("HardSigmoid", uHardSigmoid), mk("HardSwish", uHardSwish),
		ms("Gelu", uGelu), ms("QuickGelu", uQuickGelu),
		pr("Not"), pr("IsNaN"), pr("IsInf"),
		{key: kernels.Key("", "Cast"), tactics: direct, sel: selectCast},
		{key: kernels.Key("", "CastLike"), tactics: direct, sel: selectCast},
	}
}
