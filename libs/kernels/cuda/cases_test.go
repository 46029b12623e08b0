package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The node cases every test of this package walks: the pure-Go tests select and plan each on an
// H200 target (and check the launches against the kernels' PTX signatures when asked); the
// cuda-tagged test runs each on the GPU and compares with the CPU kernel on the same inputs.

// genFn makes an input's values (floats, or integers as float64).
type genFn func(r *rand.Rand, n int64) []float64

// kcase is one node to test.
type kcase struct {
	name string
	node kernels.Node
	gen  map[int]genFn // input generators; the default is uniform [-1, 1) for floats, [0, 4) for ints
	// kind picks the tolerance: "" elementwise (one rounding), "reduce" (accumulations), "conv"
	// (accumulations through cuDNN's transform algorithms)
	kind string
	// cpuF32: the CPU kernel takes only float32; it runs on float32 copies of the same values
	cpuF32 bool
	// compare limits the comparison of output i to its first n elements per outer row (see
	// presentValid); nil compares everything
	valid map[int]func(out []float64) []bool
}

var h200 = kernels.KnownGPUs["h200"]

func v(dt graph.DType, shape ...int64) kernels.Value { return kernels.Value{DType: dt, Shape: shape} }

var none = kernels.Value{}

func nd(domain, op string, attrs graph.Attributes, in []kernels.Value, out ...kernels.Value) kernels.Node {
	return kernels.Node{Name: op, Op: op, Domain: domain, Attrs: attrs, Inputs: in, Outputs: out}
}

// constAxis is a scalar axis input of dtype dt whose value a kernel knows at Select (Value.Const).
func constAxis(dt graph.DType, a int64) kernels.Value {
	c := kernels.BytesOf([]int64{a})
	if dt == graph.Int32 {
		c = kernels.BytesOf([]int32{int32(a)})
	}
	return kernels.Value{DType: dt, Const: c}
}

func vals(xs ...float64) genFn { return func(*rand.Rand, int64) []float64 { return xs } }

// padding is a padding mask [2, .., t]: keys of batch 0 before left and of batch 1 from
// t - right on get pad, the others keep.
func padding(t, left, right int, keep, pad float64) genFn {
	return func(*rand.Rand, int64) []float64 {
		out := make([]float64, 2*t)
		for j := range t {
			out[j], out[t+j] = keep, keep
			if j < left {
				out[j] = pad
			}
			if j >= t-right {
				out[t+j] = pad
			}
		}
		return out
	}
}

// headBias is a per-key bias for each of h heads, [2, h, 1, t] uniform in [-3, 0), as the
// attention fusion passes Bloom's ALiBi, with padding(t, left, right) as fill added.
func headBias(h, t, left, right int, fill float64) genFn {
	return func(r *rand.Rand, _ int64) []float64 {
		pad := padding(t, left, right, 0, fill)(r, 0)
		out := make([]float64, 2*h*t)
		for i := range out {
			b, j := i/(h*t), i%t
			out[i] = -3 * r.Float64()
			if pad[b*t+j] != 0 {
				out[i] = fill
			}
		}
		return out
	}
}

func uniform(lo, hi float64) genFn {
	return func(r *rand.Rand, n int64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = lo + (hi-lo)*r.Float64()
		}
		return out
	}
}

// specials is g with NaN, +Inf and -Inf at every 7th, 11th and 13th element.
func specials(g genFn) genFn {
	return func(r *rand.Rand, n int64) []float64 {
		out := g(r, n)
		for i := range out {
			switch {
			case i%7 == 3:
				out[i] = math.NaN()
			case i%11 == 5:
				out[i] = math.Inf(1)
			case i%13 == 6:
				out[i] = math.Inf(-1)
			}
		}
		return out
	}
}

func ints(lo, hi int) genFn {
	return func(r *rand.Rand, n int64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(lo + r.IntN(hi-lo))
		}
		return out
	}
}

var floatTypes = []graph.DType{graph.Float32, graph.Float16, graph.BFloat16}

func dtTag(dt graph.DType) string { return dtName(dt) }

// elementwiseCases are the elementwise, movement, indexing and generating ops.
func elementwiseCases() []kcase {
	var cs []kcase
	add := func(c kcase) { cs = append(cs, c) }
	A := kernels.Attrs
	f, i64, i32, bl := graph.Float32, graph.Int64, graph.Int32, graph.Bool
	for _, dt := range floatTypes {
		tg := dtTag(dt)
		bin := func(op string, a, b, out []int64, gen map[int]genFn) {
			add(kcase{name: op + "/" + tg, node: nd("", op, A(), []kernels.Value{v(dt, a...), v(dt, b...)}, v(dt, out...)), gen: gen})
		}
		bin("Add", []int64{2, 3, 4}, []int64{4}, []int64{2, 3, 4}, nil)
		bin("Add", []int64{64, 1024}, []int64{1024}, []int64{64, 1024}, nil) // vector path
		bin("Sub", []int64{4, 1, 5}, []int64{1, 3, 5}, []int64{4, 3, 5}, nil)
		bin("Mul", []int64{3, 7}, []int64{}, []int64{3, 7}, nil)
		bin("Div", []int64{2, 3, 8}, []int64{2, 3, 8}, []int64{2, 3, 8}, map[int]genFn{1: uniform(0.5, 1.5)})
		bin("Pow", []int64{5, 16}, []int64{1}, []int64{5, 16}, map[int]genFn{0: uniform(0.1, 2), 1: vals(2)})
		bin("Pow", []int64{5, 16}, []int64{16}, []int64{5, 16}, map[int]genFn{0: uniform(0.1, 2), 1: uniform(0.5, 2)})
		for _, op := range []string{"Max", "Min", "Sum", "Mean"} {
			add(kcase{name: op + "/" + tg, node: nd("", op, A(), []kernels.Value{v(dt, 3, 4), v(dt, 4), v(dt, 2, 1, 4)}, v(dt, 2, 3, 4))})
		}
		for _, op := range []string{"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"} {
			add(kcase{name: op + "/" + tg, node: nd("", op, A(), []kernels.Value{v(dt, 3, 4), v(dt, 4)}, v(bl, 3, 4)),
				gen: map[int]genFn{0: ints(-2, 2), 1: ints(-2, 2)}})
		}
		add(kcase{name: "Where/" + tg, node: nd("", "Where", A(), []kernels.Value{v(bl, 2, 1, 4), v(dt, 1, 3, 4), v(dt, 4)}, v(dt, 2, 3, 4))})
		// whole 16-byte vectors along the innermost dim (carve_where_rows): the fused attention's
		// empty-row fix (a row mask, V's mean broadcast over the rows, the attention output), and
		// a condition that varies along the vectors
		add(kcase{name: "Where-rows/" + tg, node: nd("", "Where", A(), []kernels.Value{v(bl, 2, 1, 1, 16, 1), v(dt, 2, 2, 1, 1, 32), v(dt, 2, 2, 3, 16, 32)}, v(dt, 2, 2, 3, 16, 32))})
		add(kcase{name: "Where-rows-cond/" + tg, node: nd("", "Where", A(), []kernels.Value{v(bl, 5, 24), v(dt), v(dt, 5, 24)}, v(dt, 5, 24))})
		un := func(op, domain string, attrs graph.Attributes, g genFn) {
			gen := map[int]genFn{}
			if g != nil {
				gen[0] = g
			}
			add(kcase{name: op + "/" + tg + fmt.Sprint(attrs.Names()), node: nd(domain, op, attrs, []kernels.Value{v(dt, 6, 300)}, v(dt, 6, 300)), gen: gen})
		}
		for _, op := range []string{"Neg", "Abs", "Exp", "Tanh", "Erf", "Sigmoid", "Relu", "Sin", "Cos", "Softplus", "Softsign", "Floor", "Ceil", "Round", "HardSwish", "Atan", "Sign"} {
			un(op, "", A(), uniform(-3, 3))
		}
		un("Sqrt", "", A(), uniform(0, 4))
		un("Log", "", A(), uniform(0.1, 4))
		un("Reciprocal", "", A(), uniform(0.5, 2))
		un("Gelu", "", A(), uniform(-3, 3))
		un("Gelu", "", A("approximate", "tanh"), uniform(-3, 3))
		un("LeakyRelu", "", A("alpha", float32(0.2)), nil)
		un("Elu", "", A("alpha", float32(0.7)), nil)
		un("HardSigmoid", "", A("alpha", float32(0.3), "beta", float32(0.4)), uniform(-4, 4))
		un("QuickGelu", kernels.DomainMicrosoft, A("alpha", float32(1.5)), uniform(-3, 3))
		un("Gelu", kernels.DomainMicrosoft, A(), uniform(-3, 3))
		un("Swish", "", A(), uniform(-3, 3))
		un("Swish", "", A("alpha", float32(1.3)), uniform(-3, 3))
		// carve_swiglu's scalar tail (111 elements: no 16-byte vector for f32 at 111 % 4, nor
		// for halves at 111 % 8) and the decode step's MLP gate of Qwen2.5-1.5B (8960).
		add(kcase{name: "Swish-tail/" + tg, node: nd("", "Swish", A(), []kernels.Value{v(dt, 3, 37)}, v(dt, 3, 37)),
			gen: map[int]genFn{0: uniform(-20, 20)}})
		for _, sh := range [][]int64{{6, 300}, {3, 37}, {1, 1, 8960}} {
			add(kcase{name: fmt.Sprintf("SwiGLU%v/%s", sh, tg), node: nd(kernels.DomainCarve, "SwiGLU", A(), []kernels.Value{v(dt, sh...), v(dt, sh...)}, v(dt, sh...)),
				gen: map[int]genFn{0: uniform(-20, 20), 1: uniform(-3, 3)}})
		}
		add(kcase{name: "SwiGLU-alpha/" + tg, node: nd(kernels.DomainCarve, "SwiGLU", A("alpha", float32(1.702)), []kernels.Value{v(dt, 6, 300), v(dt, 6, 300)}, v(dt, 6, 300))})
		add(kcase{name: "Clip/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 6, 50), v(dt), v(dt)}, v(dt, 6, 50)),
			gen: map[int]genFn{1: vals(-0.5), 2: vals(0.25)}})
		add(kcase{name: "Clip-max-only/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 6, 50), none, v(dt)}, v(dt, 6, 50)),
			gen: map[int]genFn{2: vals(0.25)}})
		// the other forms: min only (shape [1]), neither (omitted, empty-named), min above max (the
		// max everywhere), NaN and infinite inputs (NaN stays, infinities clip), a NaN bound (clips
		// nothing), weights (Initializer and Const, as a model's constant bounds come), and 16-byte
		// vectors (6 x 300) with a tail
		add(kcase{name: "Clip-min-only/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 6, 50), v(dt, 1)}, v(dt, 6, 50)),
			gen: map[int]genFn{1: vals(-0.25)}})
		add(kcase{name: "Clip-neither/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 6, 50)}, v(dt, 6, 50))})
		add(kcase{name: "Clip-neither-empty/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 6, 50), none, none}, v(dt, 6, 50))})
		add(kcase{name: "Clip-min-above-max/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 6, 50), v(dt), v(dt)}, v(dt, 6, 50)),
			gen: map[int]genFn{1: vals(0.5), 2: vals(-0.5)}})
		add(kcase{name: "Clip-specials/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 6, 301), v(dt), v(dt)}, v(dt, 6, 301)),
			gen: map[int]genFn{0: specials(uniform(-3, 3)), 1: vals(-1), 2: vals(1)}})
		add(kcase{name: "Clip-nan-bound/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 6, 300), v(dt), v(dt)}, v(dt, 6, 300)),
			gen: map[int]genFn{0: specials(uniform(-3, 3)), 1: vals(math.NaN()), 2: vals(0.5)}})
		lo, hi := v(dt), v(dt, 1)
		lo.Initializer, lo.Const = true, encodeAny(dt, []float64{-0.5})
		hi.Initializer, hi.Const = true, encodeAny(dt, []float64{0.75})
		add(kcase{name: "Clip-weights/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 6, 300), lo, hi}, v(dt, 6, 300)),
			gen: map[int]genFn{0: uniform(-2, 2), 1: vals(-0.5), 2: vals(0.75)}})
		add(kcase{name: "IsNaN/" + tg, node: nd("", "IsNaN", A(), []kernels.Value{v(dt, 40)}, v(bl, 40))})
		add(kcase{name: "BiasGelu/" + tg, node: nd(kernels.DomainMicrosoft, "BiasGelu", A(), []kernels.Value{v(dt, 2, 3, 64), v(dt, 64)}, v(dt, 2, 3, 64))})
		add(kcase{name: "FastGelu/" + tg, node: nd(kernels.DomainMicrosoft, "FastGelu", A(), []kernels.Value{v(dt, 2, 3, 64), v(dt, 64)}, v(dt, 2, 3, 64))})
		add(kcase{name: "FastGelu-nobias/" + tg, node: nd(kernels.DomainMicrosoft, "FastGelu", A(), []kernels.Value{v(dt, 5, 40)}, v(dt, 5, 40))})
		add(kcase{name: "BiasAdd/" + tg, node: nd(kernels.DomainMicrosoft, "BiasAdd", A(), []kernels.Value{v(dt, 2, 3, 32), v(dt, 32), v(dt, 2, 3, 32)}, v(dt, 2, 3, 32))})
		// movement
		add(kcase{name: "Reshape/" + tg, node: nd("", "Reshape", A(), []kernels.Value{v(dt, 2, 3, 4), v(i64, 2)}, v(dt, 6, 4)), gen: map[int]genFn{1: vals(6, 4)}})
		add(kcase{name: "Expand/" + tg, node: nd("", "Expand", A(), []kernels.Value{v(dt, 3, 1), v(i64, 3)}, v(dt, 2, 3, 4)), gen: map[int]genFn{1: vals(2, 3, 4)}})
		add(kcase{name: "Transpose-0213/" + tg, node: nd("", "Transpose", A("perm", []int64{0, 2, 1, 3}), []kernels.Value{v(dt, 2, 3, 4, 16)}, v(dt, 2, 4, 3, 16))})
		add(kcase{name: "Transpose-3120/" + tg, node: nd("", "Transpose", A("perm", []int64{3, 1, 2, 0}), []kernels.Value{v(dt, 2, 3, 4, 5)}, v(dt, 5, 3, 4, 2))})
		add(kcase{name: "Tile/" + tg, node: nd("", "Tile", A(), []kernels.Value{v(dt, 2, 3), v(i64, 2)}, v(dt, 4, 9)), gen: map[int]genFn{1: vals(2, 3)}})
		add(kcase{name: "Concat/" + tg, node: nd("", "Concat", A("axis", 1), []kernels.Value{v(dt, 2, 3, 8), v(dt, 2, 1, 8), v(dt, 2, 4, 8)}, v(dt, 2, 8, 8))})
		add(kcase{name: "Concat-kv/" + tg, node: nd("", "Concat", A("axis", -2), []kernels.Value{v(dt, 1, 2, 7, 64), v(dt, 1, 2, 1, 64)}, v(dt, 1, 2, 8, 64))})
		add(kcase{name: "Split/" + tg, node: nd("", "Split", A("axis", 2), []kernels.Value{v(dt, 2, 3, 12), v(i64, 3)}, v(dt, 2, 3, 2), v(dt, 2, 3, 4), v(dt, 2, 3, 6)), gen: map[int]genFn{1: vals(2, 4, 6)}})
		add(kcase{name: "Slice/" + tg, node: nd("", "Slice", A(), []kernels.Value{v(dt, 4, 10, 6), v(i64, 2), v(i64, 2), v(i64, 2), v(i64, 2)}, v(dt, 4, 4, 2)),
			gen: map[int]genFn{1: vals(1, -1), 2: vals(9, 1), 3: vals(1, 2), 4: vals(2, -2)}})
		add(kcase{name: "Slice-int32/" + tg, node: nd("", "Slice", A(), []kernels.Value{v(dt, 5, 7), v(i32, 1), v(i32, 1)}, v(dt, 4, 7)),
			gen: map[int]genFn{1: vals(-4), 2: vals(100)}})
		add(kcase{name: "Dropout/" + tg, node: nd("", "Dropout", A(), []kernels.Value{v(dt, 3, 5)}, v(dt, 3, 5), v(bl, 3, 5))})
		add(kcase{name: "Gather/" + tg, node: nd("", "Gather", A(), []kernels.Value{v(dt, 50, 64), v(i64, 2, 5)}, v(dt, 2, 5, 64)), gen: map[int]genFn{1: ints(-50, 50)}})
		add(kcase{name: "Gather-axis1/" + tg, node: nd("", "Gather", A("axis", 1), []kernels.Value{v(dt, 3, 7, 3), v(i32, 4)}, v(dt, 3, 4, 3)), gen: map[int]genFn{1: ints(-7, 7)}})
		add(kcase{name: "GatherElements/" + tg, node: nd("", "GatherElements", A("axis", 1), []kernels.Value{v(dt, 3, 5, 2), v(i64, 3, 4, 2)}, v(dt, 3, 4, 2)), gen: map[int]genFn{1: ints(-5, 5)}})
		add(kcase{name: "GatherElements-expanded/" + tg, node: nd(kernels.DomainCarve, "GatherElements", A("axis", -1), []kernels.Value{v(dt, 6, 5, 3), v(i64, 1, 5, 5), v(i64, 3)}, v(dt, 6, 5, 5)),
			gen: map[int]genFn{1: ints(-3, 3), 2: vals(6, 5, 5)}})
		add(kcase{name: "GatherElements-expanded-inner/" + tg, node: nd(kernels.DomainCarve, "GatherElements", A("axis", 1), []kernels.Value{v(dt, 3, 4, 5), v(i32, 6, 1), v(i64, 3)}, v(dt, 3, 6, 5)),
			gen: map[int]genFn{1: ints(-4, 4), 2: vals(3, 6, 5)}})
		add(kcase{name: "GatherND/" + tg, node: nd("", "GatherND", A(), []kernels.Value{v(dt, 4, 5, 6), v(i64, 3, 2)}, v(dt, 3, 6)), gen: map[int]genFn{1: vals(0, 1, 3, 4, 2, 2)}})
		add(kcase{name: "GatherND-batch/" + tg, node: nd("", "GatherND", A("batch_dims", 1), []kernels.Value{v(dt, 2, 5, 6), v(i64, 2, 3, 1)}, v(dt, 2, 3, 6)), gen: map[int]genFn{1: ints(0, 5)}})
		add(kcase{name: "ScatterND/" + tg, node: nd("", "ScatterND", A(), []kernels.Value{v(dt, 5, 6), v(i64, 2, 1), v(dt, 2, 6)}, v(dt, 5, 6)), gen: map[int]genFn{1: vals(3, 0)}})
		add(kcase{name: "Trilu/" + tg, node: nd("", "Trilu", A("upper", 0), []kernels.Value{v(dt, 2, 5, 6), v(i64)}, v(dt, 2, 5, 6)), gen: map[int]genFn{1: vals(1)}})
		add(kcase{name: "CumSum/" + tg, node: nd("", "CumSum", A("exclusive", 1, "reverse", 1), []kernels.Value{v(dt, 3, 9, 2), v(i64)}, v(dt, 3, 9, 2)), gen: map[int]genFn{1: vals(1)}})
		// an axis known at Select and columns of cumsumScanMin or more: one block scans each
		// (small integers, whose sums are exact in any order: the CPU adds float32 in sequence,
		// the GPU float64 in another order)
		add(kcase{name: "CumSum-scan/" + tg, node: nd("", "CumSum", A(), []kernels.Value{v(dt, 3, 700, 2), constAxis(i64, 1)}, v(dt, 3, 700, 2)),
			gen: map[int]genFn{0: ints(-3, 3), 1: vals(1)}})
		add(kcase{name: "CumSum-scan-excl-rev/" + tg, node: nd("", "CumSum", A("exclusive", 1, "reverse", 1), []kernels.Value{v(dt, 2, 1000), constAxis(i32, -1)}, v(dt, 2, 1000)),
			gen: map[int]genFn{0: ints(-3, 3), 1: vals(-1)}})
		if dt == f { // the CPU Range takes no 16-bit floats
			add(kcase{name: "Range/" + tg, node: nd("", "Range", A(), []kernels.Value{v(dt), v(dt), v(dt)}, v(dt, 7)), gen: map[int]genFn{0: vals(1), 1: vals(4.5), 2: vals(0.5)}})
		}
	}
	for _, cast := range [][2]graph.DType{
		{f, graph.Float16}, {f, graph.BFloat16}, {graph.Float16, f}, {graph.BFloat16, f}, {graph.Float16, graph.BFloat16},
		{i64, f}, {f, i64}, {i64, i32}, {i32, i64}, {bl, f}, {f, bl}, {i64, bl}, {bl, i64}, {graph.BFloat16, i64},
	} {
		gen := map[int]genFn{0: uniform(-100, 100)}
		if cast[0] == i64 || cast[0] == i32 {
			gen[0] = ints(-1000, 1000)
		}
		add(kcase{name: fmt.Sprintf("Cast/%v-%v", cast[0], cast[1]), node: nd("", "Cast", A("to", int(cast[1])), []kernels.Value{v(cast[0], 7, 9)}, v(cast[1], 7, 9)), gen: gen})
	}
	for _, dt := range []graph.DType{i64, i32} {
		tg := dtTag(dt)
		for _, op := range []string{"Add", "Sub", "Mul", "Div", "Mod"} {
			add(kcase{name: op + "/" + tg, node: nd("", op, A(), []kernels.Value{v(dt, 3, 4), v(dt, 4)}, v(dt, 3, 4)),
				gen: map[int]genFn{0: ints(-20, 20), 1: ints(1, 6)}})
		}
		add(kcase{name: "Equal/" + tg, node: nd("", "Equal", A(), []kernels.Value{v(dt, 3, 4), v(dt, 4)}, v(bl, 3, 4))})
		add(kcase{name: "Less/" + tg, node: nd("", "Less", A(), []kernels.Value{v(dt, 3, 4), v(dt, 3, 1)}, v(bl, 3, 4))})
		add(kcase{name: "Neg/" + tg, node: nd("", "Neg", A(), []kernels.Value{v(dt, 9)}, v(dt, 9)), gen: map[int]genFn{0: ints(-9, 9)}})
		add(kcase{name: "Clip/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 3, 40), v(dt), v(dt, 1)}, v(dt, 3, 40)),
			gen: map[int]genFn{0: ints(-20, 20), 1: vals(-5), 2: vals(7)}})
		add(kcase{name: "Clip-max-only/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 3, 40), none, v(dt)}, v(dt, 3, 40)),
			gen: map[int]genFn{0: ints(-20, 20), 2: vals(3)}})
		add(kcase{name: "Clip-min-only/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 3, 40), v(dt)}, v(dt, 3, 40)),
			gen: map[int]genFn{0: ints(-20, 20), 1: vals(-3)}})
		add(kcase{name: "Clip-min-above-max/" + tg, node: nd("", "Clip", A(), []kernels.Value{v(dt, 3, 40), v(dt), v(dt)}, v(dt, 3, 40)),
			gen: map[int]genFn{0: ints(-20, 20), 1: vals(4), 2: vals(-4)}})
		// position ids from a prompt's mask: 2048 positions, scanned by one block a row
		add(kcase{name: "CumSum-scan/" + tg, node: nd("", "CumSum", A(), []kernels.Value{v(dt, 2, 2048), constAxis(i64, 1)}, v(dt, 2, 2048)),
			gen: map[int]genFn{0: ints(0, 2), 1: vals(1)}})
		add(kcase{name: "CumSum-scan-excl/" + tg, node: nd("", "CumSum", A("exclusive", 1), []kernels.Value{v(dt, 5, 129, 3), constAxis(i64, -2)}, v(dt, 5, 129, 3)),
			gen: map[int]genFn{0: ints(-1000, 1000), 1: vals(-2)}})
		add(kcase{name: "Where/" + tg, node: nd("", "Where", A(), []kernels.Value{v(bl, 4), v(dt, 3, 4), v(dt)}, v(dt, 3, 4))})
		add(kcase{name: "Range/" + tg, node: nd("", "Range", A(), []kernels.Value{v(dt), v(dt), v(dt)}, v(dt, 5)), gen: map[int]genFn{0: vals(10), 1: vals(0), 2: vals(-2)}})
		add(kcase{name: "ReduceSum/" + tg, node: nd("", "ReduceSum", A("keepdims", 0), []kernels.Value{v(dt, 3, 70), v(i64, 1)}, v(dt, 3)), gen: map[int]genFn{0: ints(-5, 5), 1: vals(1)}})
	}
	for _, op := range []string{"And", "Or", "Xor", "Equal"} {
		add(kcase{name: op + "/bool", node: nd("", op, A(), []kernels.Value{v(bl, 3, 4), v(bl, 4)}, v(bl, 3, 4))})
	}
	add(kcase{name: "Not/bool", node: nd("", "Not", A(), []kernels.Value{v(bl, 13)}, v(bl, 13))})
	add(kcase{name: "Shape", node: nd("", "Shape", A("start", 1), []kernels.Value{v(f, 2, 3, 4)}, v(i64, 2))})
	add(kcase{name: "Size", node: nd("", "Size", A(), []kernels.Value{v(f, 2, 3, 4)}, v(i64))})
	add(kcase{name: "ConstantOfShape", node: nd("", "ConstantOfShape", A("value", &graph.HostTensor{DType: i64, Shape: []int64{1}, Data: kernels.BytesOf([]int64{7})}), []kernels.Value{v(i64, 2)}, v(i64, 3, 5)), gen: map[int]genFn{0: vals(3, 5)}})
	add(kcase{name: "ConstantOfShape-f32", node: nd("", "ConstantOfShape", A(), []kernels.Value{v(i64, 1)}, v(f, 4)), gen: map[int]genFn{0: vals(4)}})
	add(kcase{name: "Range/f32-neg", node: nd("", "Range", A(), []kernels.Value{v(f), v(f), v(f)}, v(f, 4)), gen: map[int]genFn{0: vals(3), 1: vals(-1), 2: vals(-1)}})
	return cs
}

// rowCases are the reductions, softmax and the normalizations.
func rowCases() []kcase {
	var cs []kcase
	add := func(c kcase) { c.kind = "reduce"; cs = append(cs, c) }
	A := kernels.Attrs
	i64 := graph.Int64
	for _, dt := range floatTypes {
		tg := dtTag(dt)
		red := func(op string, attrs graph.Attributes, in []int64, out []int64, axes []float64, gen genFn) {
			ins := []kernels.Value{v(dt, in...)}
			g := map[int]genFn{}
			if gen != nil {
				g[0] = gen
			}
			if axes != nil {
				ins = append(ins, v(i64, int64(len(axes))))
				g[1] = vals(axes...)
			}
			outDT := dt
			if op == "ArgMax" || op == "ArgMin" {
				outDT = i64
			}
			add(kcase{name: op + "/" + tg + fmt.Sprint(in, out), node: nd("", op, attrs, ins, v(outDT, out...)), gen: g})
		}
		red("ReduceMean", A("axes", []int64{-1}), []int64{4, 256}, []int64{4, 1}, nil, nil)
		red("ReduceMean", A(), []int64{2, 3, 1536}, []int64{2, 3, 1}, []float64{-1}, nil) // axes as an input (opset 18)
		red("ReduceSum", A("keepdims", 0), []int64{2, 3, 4}, []int64{2, 4}, []float64{1}, nil)
		// the columns mode: one long strided dim (the attention fusion's mean of V over the sequence)
		red("ReduceMean", A("axes", []int64{2}), []int64{1, 2, 2048, 40}, []int64{1, 2, 1, 40}, nil, nil)
		red("ReduceSum", A("axes", []int64{1}), []int64{3, 1000, 40}, []int64{3, 1, 40}, nil, nil) // a partial last batch of loads
		red("ReduceMax", A("axes", []int64{0}, "keepdims", 0), []int64{300, 7}, []int64{7}, nil, nil)
		red("ReduceSumSquare", A("axes", []int64{1}), []int64{3, 64, 33}, []int64{3, 1, 33}, nil, nil)
		red("ReduceMax", A("axes", []int64{0, 2}), []int64{3, 4, 5}, []int64{1, 4, 1}, nil, nil)
		red("ReduceMin", A("axes", []int64{1}, "keepdims", 0), []int64{3, 100}, []int64{3}, nil, nil)
		red("ReduceSumSquare", A("axes", []int64{1}), []int64{3, 5, 2}, []int64{3, 1, 2}, nil, nil)
		red("ReduceL2", A("axes", []int64{-1}), []int64{4, 300}, []int64{4, 1}, nil, nil)
		red("ReduceL1", A(), []int64{4, 3}, []int64{1, 1}, nil, nil)
		red("ReduceLogSumExp", A("axes", []int64{1}), []int64{3, 80}, []int64{3, 1}, nil, nil)
		red("ReduceProd", A("axes", []int64{1}), []int64{3, 6}, []int64{3, 1}, nil, uniform(0.5, 1.5))
		red("ArgMax", A("axis", 1), []int64{3, 500}, []int64{3, 1}, nil, nil)
		// rows of whole 16-byte vectors (carve_argmax_rows): ties, the first and the last of equals,
		// and a decode step's greedy choice over Qwen's vocabulary
		red("ArgMax", A("axis", -1, "keepdims", 0), []int64{2, 3, 4096}, []int64{2, 3}, nil, ints(0, 50))
		red("ArgMax", A("axis", -1, "select_last_index", 1), []int64{2, 4104}, []int64{2, 1}, nil, ints(0, 50))
		red("ArgMin", A("axis", 1, "keepdims", 0), []int64{5, 64}, []int64{5}, nil, ints(0, 9))
		red("ArgMax", A("axis", 2, "keepdims", 0), []int64{1, 1, 151936}, []int64{1, 1}, nil, nil)
		// a few long rows (carve_argmax_split, a cluster of blocks a row): ties across the blocks'
		// runs, the first and the last of equals
		red("ArgMax", A("axis", -1, "keepdims", 0), []int64{2, 20000}, []int64{2}, nil, ints(0, 50))
		red("ArgMin", A("axis", 1, "select_last_index", 1), []int64{3, 16392}, []int64{3, 1}, nil, ints(0, 50))
		red("ArgMin", A("axis", 0, "keepdims", 0, "select_last_index", 1), []int64{4, 3}, []int64{3}, nil, ints(0, 3))
		add(kcase{name: "Softmax/" + tg, node: nd("", "Softmax", A(), []kernels.Value{v(dt, 4, 3, 100)}, v(dt, 4, 3, 100)), gen: map[int]genFn{0: uniform(-4, 4)}})
		add(kcase{name: "Softmax-axis1/" + tg, node: nd("", "Softmax", A("axis", 1), []kernels.Value{v(dt, 2, 5, 7)}, v(dt, 2, 5, 7))})
		add(kcase{name: "LogSoftmax/" + tg, node: nd("", "LogSoftmax", A(), []kernels.Value{v(dt, 3, 2000)}, v(dt, 3, 2000))})
		legacy := nd("", "Softmax", A(), []kernels.Value{v(dt, 2, 3, 4)}, v(dt, 2, 3, 4))
		legacy.Opset = 11
		add(kcase{name: "Softmax-opset11/" + tg, node: legacy})
		add(kcase{name: "LayerNormalization/" + tg, node: nd("", "LayerNormalization", A("epsilon", float32(1e-5)),
			[]kernels.Value{v(dt, 4, 8, 256), v(dt, 256), v(dt, 256)}, v(dt, 4, 8, 256), v(graph.Float32, 4, 8, 1), v(graph.Float32, 4, 8, 1))})
		add(kcase{name: "LayerNormalization-odd/" + tg, node: nd("", "LayerNormalization", A("axis", 1),
			[]kernels.Value{v(dt, 3, 5, 7), v(dt, 5, 7)}, v(dt, 3, 5, 7))})
		add(kcase{name: "RMSNorm/" + tg, node: nd("", "SimplifiedLayerNormalization", A("epsilon", float32(1e-6)),
			[]kernels.Value{v(dt, 6, 1536), v(dt, 1536)}, v(dt, 6, 1536))})
		add(kcase{name: "RMSNormalization/" + tg, node: nd("", "RMSNormalization", A("epsilon", float32(1e-6)),
			[]kernels.Value{v(dt, 2, 3, 1536), v(dt, 1536)}, v(dt, 2, 3, 1536))})
		add(kcase{name: "RMSNormalization-axis1/" + tg, node: nd("", "RMSNormalization", A("axis", 1, "stash_type", 1),
			[]kernels.Value{v(dt, 3, 4, 8), v(dt, 4, 8)}, v(dt, 3, 4, 8))})
		add(kcase{name: "SkipLayerNorm/" + tg, node: nd(kernels.DomainMicrosoft, "SkipLayerNormalization", A("epsilon", float32(1e-5)),
			[]kernels.Value{v(dt, 2, 5, 128), v(dt, 2, 5, 128), v(dt, 128), v(dt, 128), v(dt, 128)}, v(dt, 2, 5, 128), none, none, v(dt, 2, 5, 128))})
		add(kcase{name: "SkipSimplifiedLayerNorm/" + tg, node: nd(kernels.DomainMicrosoft, "SkipSimplifiedLayerNormalization", A(),
			[]kernels.Value{v(dt, 3, 96), v(dt, 1, 96), v(dt, 96)}, v(dt, 3, 96))})
		// carve_norm_rows: the decode row (skip sum and inverse deviation out), a row of 2 and of 4
		// vectors a thread, an odd row (element by element); carve_layer_norm: many rows, and a
		// row longer than carve_norm_rows takes
		add(kcase{name: "SkipSimplifiedLayerNorm-decode/" + tg, node: nd(kernels.DomainMicrosoft, "SkipSimplifiedLayerNormalization", A("epsilon", float32(1e-6)),
			[]kernels.Value{v(dt, 1, 1, 1536), v(dt, 1, 1, 1536), v(dt, 1536)}, v(dt, 1, 1, 1536), none, v(graph.Float32, 1, 1, 1), v(dt, 1, 1, 1536))})
		add(kcase{name: "LayerNormalization-rows2/" + tg, node: nd("", "LayerNormalization", A(),
			[]kernels.Value{v(dt, 3, 8000), v(dt, 8000), v(dt, 8000)}, v(dt, 3, 8000), v(graph.Float32, 3, 1), v(graph.Float32, 3, 1))})
		add(kcase{name: "RMSNorm-rows4/" + tg, node: nd("", "SimplifiedLayerNormalization", A(),
			[]kernels.Value{v(dt, 2, 15000), v(dt, 15000)}, v(dt, 2, 15000))})
		add(kcase{name: "RMSNorm-many-rows/" + tg, node: nd("", "SimplifiedLayerNormalization", A(),
			[]kernels.Value{v(dt, 9000, 24), v(dt, 24)}, v(dt, 9000, 24))})
		add(kcase{name: "SkipLayerNorm-odd/" + tg, node: nd(kernels.DomainMicrosoft, "SkipLayerNormalization", A(),
			[]kernels.Value{v(dt, 2, 3, 1001), v(dt, 2, 3, 1001), v(dt, 1001), v(dt, 1001), v(dt, 1001)}, v(dt, 2, 3, 1001))})
		add(kcase{name: "RMSNorm-long/" + tg, node: nd("", "SimplifiedLayerNormalization", A(),
			[]kernels.Value{v(dt, 1, 40000), v(dt, 40000)}, v(dt, 1, 40000))})
	}
	return cs
}

// rotaryCases are RotaryEmbedding in its layouts.
func rotaryCases() []kcase {
	var cs []kcase
	A := kernels.Attrs
	i64 := graph.Int64
	for _, dt := range floatTypes {
		tg := dtTag(dt)
		pos := func(n int) genFn { return ints(0, n) }
		cs = append(cs,
			kcase{name: "Rotary-bsnh/" + tg, node: nd(kernels.DomainMicrosoft, "RotaryEmbedding", A("num_heads", 4),
				[]kernels.Value{v(dt, 2, 5, 4*64), v(i64, 2, 5), v(dt, 16, 32), v(dt, 16, 32)}, v(dt, 2, 5, 4*64)), gen: map[int]genFn{1: pos(16)}},
			kcase{name: "Rotary-interleaved/" + tg, node: nd(kernels.DomainMicrosoft, "RotaryEmbedding", A("interleaved", 1),
				[]kernels.Value{v(dt, 2, 3, 5, 16), v(i64, 1), v(dt, 20, 8), v(dt, 20, 8)}, v(dt, 2, 3, 5, 16)), gen: map[int]genFn{1: vals(4)}},
			kcase{name: "Rotary-partial/" + tg, node: nd(kernels.DomainMicrosoft, "RotaryEmbedding", A("num_heads", 2, "rotary_embedding_dim", 32),
				[]kernels.Value{v(dt, 1, 4, 2*64), v(i64, 1, 4), v(dt, 8, 16), v(dt, 8, 16)}, v(dt, 1, 4, 2*64)), gen: map[int]genFn{1: pos(8)}},
			kcase{name: "Rotary-onnx/" + tg, node: nd("", "RotaryEmbedding", A(),
				[]kernels.Value{v(dt, 2, 2, 3, 8), v(dt, 2, 3, 4), v(dt, 2, 3, 4)}, v(dt, 2, 2, 3, 8))},
		)
	}
	return cs
}

// gqaCase builds a GroupQueryAttention node: b batches of s new tokens over a past of p (0 for
// none) and a present capacity tcap, seqlens_k per batch.
type gqaSpec struct {
	name            string
	dt              graph.DType
	b, s, p, tcap   int64
	nq, nkv, d      int64
	seqlens         []int
	rotary, inter   bool
	packed, present bool
	window          int
	softcap         float32
}

func gqaCase(g gqaSpec) kcase {
	A := kernels.Attrs
	dt := g.dt
	total := int64(0)
	for _, sl := range g.seqlens {
		total = max(total, int64(sl)+1)
	}
	attrs := []any{"num_heads", int(g.nq), "kv_num_heads", int(g.nkv)}
	if g.rotary {
		attrs = append(attrs, "do_rotary", 1)
		if g.inter {
			attrs = append(attrs, "rotary_interleaved", 1)
		}
	}
	if g.window > 0 {
		attrs = append(attrs, "local_window_size", g.window)
	}
	if g.softcap > 0 {
		attrs = append(attrs, "softcap", g.softcap)
	}
	in := make([]kernels.Value, 9)
	if g.packed {
		in[0] = v(dt, g.b, g.s, (g.nq+2*g.nkv)*g.d)
	} else {
		in[0], in[1], in[2] = v(dt, g.b, g.s, g.nq*g.d), v(dt, g.b, g.s, g.nkv*g.d), v(dt, g.b, g.s, g.nkv*g.d)
	}
	if g.p > 0 {
		in[3], in[4] = v(dt, g.b, g.nkv, g.p, g.d), v(dt, g.b, g.nkv, g.p, g.d)
	}
	in[5], in[6] = v(graph.Int32, g.b), v(graph.Int32)
	maxPos := g.tcap + 4
	if g.rotary {
		in[7], in[8] = v(dt, maxPos, g.d/2), v(dt, maxPos, g.d/2)
	}
	sl := make([]float64, len(g.seqlens))
	for i, x := range g.seqlens {
		sl[i] = float64(x)
	}
	totalT := total
	if g.s > 1 && g.p == 0 {
		totalT = g.s // first prompt
	}
	gen := map[int]genFn{5: vals(sl...), 6: vals(float64(totalT))}
	if g.rotary {
		gen[7] = uniform(-1, 1)
		gen[8] = uniform(-1, 1)
	}
	outs := []kernels.Value{v(dt, g.b, g.s, g.nq*g.d)}
	if g.present {
		outs = append(outs, v(dt, g.b, g.nkv, g.tcap, g.d), v(dt, g.b, g.nkv, g.tcap, g.d))
	}
	c := kcase{name: "GQA-" + g.name + "/" + dtTag(dt), node: nd(kernels.DomainMicrosoft, "GroupQueryAttention", A(attrs...), in, outs...),
		gen: gen, kind: "reduce", cpuF32: dt != graph.Float32}
	if g.present {
		// positions past each batch's total hold whatever the output buffer held
		valid := func(out []float64) []bool {
			ok := make([]bool, len(out))
			for i := range ok {
				pos := (int64(i) / g.d) % g.tcap
				bi := int64(i) / (g.nkv * g.tcap * g.d)
				ok[i] = pos < int64(g.seqlens[bi])+1
			}
			return ok
		}
		c.valid = map[int]func([]float64) []bool{1: valid, 2: valid}
	}
	return c
}

// attentionCases are GroupQueryAttention and MultiHeadAttention.
func attentionCases() []kcase {
	var cs []kcase
	A := kernels.Attrs
	for _, dt := range floatTypes {
		for _, g := range []gqaSpec{
			{name: "prompt", b: 2, s: 5, tcap: 5, seqlens: []int{4, 4}, rotary: true, present: true},
			{name: "prompt-padded-packed", b: 2, s: 6, tcap: 6, seqlens: []int{5, 3}, packed: true, present: true},
			{name: "decode", b: 2, s: 1, p: 7, tcap: 8, seqlens: []int{7, 4}, rotary: true, inter: true, present: true},
			{name: "decode-window-softcap", b: 1, s: 1, p: 9, tcap: 10, seqlens: []int{9}, window: 4, softcap: 3, present: true},
			{name: "no-present", b: 1, s: 3, p: 2, tcap: 5, seqlens: []int{4}, rotary: true},
			{name: "split-kv", b: 1, s: 1, p: 1000, tcap: 1001, seqlens: []int{1000}, rotary: true, present: true},
			{name: "split-kv-b2", b: 2, s: 1, p: 700, tcap: 701, seqlens: []int{700, 300}, present: true},
			{name: "head128", b: 1, s: 4, p: 0, tcap: 4, seqlens: []int{3}, nq: 12, nkv: 2, d: 128, present: true},
			// prefills of the flash-mma tactic (16-bit types; float32 takes the fused core): a
			// chunk over a past (the server's prefill row), batches of their own pasts copied from
			// a shorter past (packed, interleaved rotary), a right-padded first prompt, the local
			// window without rotary, no present outputs (the caches in workspace)
			{name: "prefill-chunk", b: 1, s: 100, p: 150, tcap: 300, seqlens: []int{249}, nq: 12, nkv: 2, d: 128, rotary: true, present: true},
			{name: "prefill-b2-packed", b: 2, s: 70, p: 60, tcap: 160, seqlens: []int{129, 100}, nq: 8, nkv: 2, d: 64,
				rotary: true, inter: true, packed: true, present: true},
			{name: "prefill-first-padded", b: 2, s: 80, tcap: 80, seqlens: []int{79, 50}, nq: 4, nkv: 4, d: 64, rotary: true, present: true},
			{name: "prefill-window", b: 1, s: 90, p: 40, tcap: 200, seqlens: []int{129}, nq: 4, nkv: 1, d: 128, window: 50, present: true},
			{name: "prefill-no-present", b: 1, s: 65, p: 30, tcap: 95, seqlens: []int{94}, nq: 4, nkv: 2, d: 64, rotary: true},
			// the decode tactic: Qwen2.5-1.5B's heads at a few lengths (slices shorter than a
			// tile per warp: row groups), a long past (slices of several stages), the first token,
			// packed input without present outputs, a head size off the 16-byte vectors, 8 heads
			// of 256 per key/value head; one chunk (no combine) where the capacity is small
			{name: "decode-qwen", b: 1, s: 1, p: 1100, tcap: 2048, seqlens: []int{1100}, nq: 12, nkv: 2, d: 128, rotary: true, present: true},
			{name: "decode-qwen-b3", b: 3, s: 1, p: 1100, tcap: 1100, seqlens: []int{300, 17, 1030}, nq: 12, nkv: 2, d: 128, rotary: true, present: true},
			{name: "decode-long", b: 1, s: 1, p: 10000, tcap: 10001, seqlens: []int{10000}, rotary: true, present: true},
			{name: "decode-first", b: 2, s: 1, p: 0, tcap: 4, seqlens: []int{0, 0}, rotary: true, present: true},
			{name: "decode-packed-no-present", b: 2, s: 1, p: 40, tcap: 41, seqlens: []int{40, 17}, packed: true, rotary: true},
			{name: "decode-d12", b: 2, s: 1, p: 50, tcap: 51, seqlens: []int{50, 20}, nq: 4, nkv: 2, d: 12, rotary: true, present: true},
			{name: "decode-d256-g8", b: 1, s: 1, p: 300, tcap: 301, seqlens: []int{300}, nq: 8, nkv: 1, d: 256, present: true},
			// carve_gqa_dec's edges: one query head per key/value head at 64 dims (2 a lane), a
			// window over 32 dims (1 a lane), 7 heads with softcap and interleaved rotary, 80 dims
			// (lanes past the head size), 8 dims (4 keys a warp), a length shorter than a chunk
			{name: "decode-g1-d64", b: 2, s: 1, p: 200, tcap: 256, seqlens: []int{200, 3}, nq: 2, nkv: 2, d: 64, rotary: true, present: true},
			{name: "decode-g3-d32-window", b: 1, s: 1, p: 500, tcap: 600, seqlens: []int{500}, nq: 6, nkv: 2, d: 32, window: 100, present: true},
			{name: "decode-g7-softcap", b: 2, s: 1, p: 100, tcap: 128, seqlens: []int{100, 60}, nq: 7, nkv: 1, d: 128, softcap: 30,
				rotary: true, inter: true, present: true},
			{name: "decode-g5-d80", b: 1, s: 1, p: 90, tcap: 96, seqlens: []int{90}, nq: 5, nkv: 1, d: 80, present: true},
			{name: "decode-g4-d8", b: 1, s: 1, p: 77, tcap: 80, seqlens: []int{77}, nq: 8, nkv: 2, d: 8, rotary: true, present: true},
			{name: "decode-short", b: 2, s: 1, p: 40, tcap: 4096, seqlens: []int{2, 40}, nq: 12, nkv: 2, d: 128, rotary: true, present: true},
			// more grouped heads than the decode tactic takes: split-kv
			{name: "split-kv-g9", b: 1, s: 1, p: 1000, tcap: 1001, seqlens: []int{1000}, nq: 18, nkv: 2, d: 16, rotary: true, present: true},
		} {
			g.dt = dt
			if g.nq == 0 {
				g.nq, g.nkv, g.d = 4, 2, 16
			}
			cs = append(cs, gqaCase(g))
		}
		tg := dtTag(dt)
		mha := func(name string, attrs graph.Attributes, in []kernels.Value, gen map[int]genFn, outs ...kernels.Value) {
			cs = append(cs, kcase{name: "MHA-" + name + "/" + tg, node: nd(kernels.DomainMicrosoft, "MultiHeadAttention", attrs, in, outs...),
				gen: gen, kind: "reduce", cpuF32: dt != graph.Float32})
		}
		const b, s, l, n, d = 2, 4, 6, 2, 16
		mha("separate-bias-mask", A("num_heads", n, "unidirectional", 1),
			[]kernels.Value{v(dt, b, s, n*d), v(dt, b, l, n*d), v(dt, b, l, n*d), v(dt, 3*n*d), v(graph.Int32, b, l)},
			map[int]genFn{4: ints(0, 2)}, v(dt, b, s, n*d))
		mha("packed-qkv", A("num_heads", n), []kernels.Value{v(dt, b, s, n, 3, d)}, nil, v(dt, b, s, n*d))
		mha("packed-kv-lengths", A("num_heads", n), []kernels.Value{v(dt, b, s, n*d), v(dt, b, l, n, 2, d), none, none, v(graph.Int32, b)},
			map[int]genFn{4: vals(4, 6)}, v(dt, b, s, n*d))
		mha("bnsh", A("num_heads", n), []kernels.Value{v(dt, b, s, n*d), v(dt, b, n, l, d), v(dt, b, n, l, d)}, nil, v(dt, b, s, n*d))
		mha("past-present-bias", A("num_heads", n, "scale", float32(0.3)),
			[]kernels.Value{v(dt, b, 1, n*d), v(dt, b, 1, n*d), v(dt, b, 1, n*d), none, none, v(dt, b, 1, 1, 6), v(dt, b, n, 5, d), v(dt, b, n, 5, d)},
			nil, v(dt, b, 1, n*d), v(dt, b, n, 6, d), v(dt, b, n, 6, d))
		att := func(name string, attrs graph.Attributes, in []kernels.Value, gen map[int]genFn, outs ...kernels.Value) {
			cs = append(cs, kcase{name: "Attention-" + name + "/" + tg, node: nd(kernels.DomainMicrosoft, "Attention", attrs, in, outs...),
				gen: gen, kind: "reduce", cpuF32: dt != graph.Float32})
		}
		att("bias-mask", A("num_heads", n), []kernels.Value{v(dt, b, s, 32), v(dt, 32, 3*n*d), v(dt, 3*n*d), v(graph.Int32, b, s)},
			map[int]genFn{1: uniform(-0.3, 0.3), 3: ints(0, 2)}, v(dt, b, s, n*d))
		att("past-present", A("num_heads", n, "unidirectional", 1), []kernels.Value{v(dt, b, 1, 32), v(dt, 32, 3*n*d), none, none, v(dt, 2, b, n, 5, d)},
			map[int]genFn{1: uniform(-0.3, 0.3)}, v(dt, b, 1, n*d), v(dt, 2, b, n, 6, d))
		att("qkv-sizes", A("num_heads", n, "qkv_hidden_sizes", []int64{n * d, n * d, n * 8}), []kernels.Value{v(dt, b, s, 24), v(dt, 24, 2*n*d+n*8)},
			map[int]genFn{1: uniform(-0.3, 0.3)}, v(dt, b, s, n*8))
		mha("past-no-present", A("num_heads", n),
			[]kernels.Value{v(dt, b, 2, n*d), v(dt, b, 2, n*d), v(dt, b, 2, n*d), none, none, none, v(dt, b, n, 5, d), v(dt, b, n, 5, d)},
			nil, v(dt, b, 2, n*d))
	}
	return cs
}

// onnxAttentionCases are ONNX Attention (opset 23) in the shapes the fusion pass emits (4-D,
// grouped heads, causal, masks broadcast to [B, Hq, S, T]) and the rest the CPU kernel takes
// (3-D, past and present, scale, softcap, a mask shorter than T). Head sizes 64 and 128 in
// float16 and bfloat16 take the tensor-core tactic, with row counts that leave partial tiles.
func onnxAttentionCases() []kcase {
	var cs []kcase
	A := kernels.Attrs
	bl := graph.Bool
	for _, dt := range floatTypes {
		tg := dtTag(dt)
		att := func(name string, attrs graph.Attributes, in []kernels.Value, gen map[int]genFn, outs ...kernels.Value) {
			cs = append(cs, kcase{name: "ONNXAttention-" + name + "/" + tg, node: nd("", "Attention", attrs, in, outs...),
				gen: gen, kind: "reduce"})
		}
		bhsd := func(b, h, s, d int64) kernels.Value { return v(dt, b, h, s, d) }
		att("gqa-causal-d64", A("is_causal", 1), []kernels.Value{bhsd(2, 6, 70, 64), bhsd(2, 2, 70, 64), bhsd(2, 2, 70, 64)}, nil,
			bhsd(2, 6, 70, 64))
		att("gqa-causal-d128-present", A("is_causal", 1), []kernels.Value{bhsd(1, 4, 130, 128), bhsd(1, 2, 130, 128), bhsd(1, 2, 130, 128)}, nil,
			bhsd(1, 4, 130, 128), bhsd(1, 2, 130, 128), bhsd(1, 2, 130, 128))
		att("float-mask-causal-d64", A("is_causal", 1), []kernels.Value{bhsd(1, 4, 33, 64), bhsd(1, 4, 33, 64), bhsd(1, 4, 33, 64), v(dt, 1, 4, 33, 33)},
			map[int]genFn{3: uniform(-2, 0)}, bhsd(1, 4, 33, 64))
		att("bool-mask-gqa-d64", A(), []kernels.Value{bhsd(2, 4, 65, 64), bhsd(2, 1, 80, 64), bhsd(2, 1, 80, 64), v(bl, 2, 1, 65, 80)},
			map[int]genFn{3: ints(0, 2)}, bhsd(2, 4, 65, 64))
		att("key-padding-mask", A("scale", float32(0.2)), []kernels.Value{bhsd(2, 2, 5, 16), bhsd(2, 2, 7, 16), bhsd(2, 2, 7, 24), v(bl, 2, 1, 1, 7)},
			map[int]genFn{3: vals(1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0)}, bhsd(2, 2, 5, 24))
		att("short-float-mask-softcap", A("softcap", float32(2)), []kernels.Value{bhsd(1, 2, 4, 32), bhsd(1, 2, 6, 32), bhsd(1, 2, 6, 32), v(dt, 1, 3)},
			map[int]genFn{3: uniform(-1, 1)}, bhsd(1, 2, 4, 32))
		att("3d-past-present-causal", A("q_num_heads", 4, "kv_num_heads", 2, "is_causal", 1, "scale", float32(0.3), "softcap", float32(2)),
			[]kernels.Value{v(dt, 2, 3, 64), v(dt, 2, 3, 32), v(dt, 2, 3, 32), none, bhsd(2, 2, 5, 16), bhsd(2, 2, 5, 16)}, nil,
			v(dt, 2, 3, 64), bhsd(2, 2, 8, 16), bhsd(2, 2, 8, 16))
		att("past-no-present-d64", A("is_causal", 1), []kernels.Value{bhsd(1, 2, 4, 64), bhsd(1, 1, 4, 64), bhsd(1, 1, 4, 64), none, bhsd(1, 1, 60, 64), bhsd(1, 1, 60, 64)},
			nil, bhsd(1, 2, 4, 64))
		// several warps and tiles before the causal diagonal, six query heads per kv head; the
		// diagonal shifted by a past
		att("gqa6-causal-d128-long", A("is_causal", 1), []kernels.Value{bhsd(1, 6, 300, 128), bhsd(1, 1, 300, 128), bhsd(1, 1, 300, 128)}, nil,
			bhsd(1, 6, 300, 128))
		att("causal-past-d128", A("is_causal", 1), []kernels.Value{bhsd(1, 2, 150, 128), bhsd(1, 1, 150, 128), bhsd(1, 1, 150, 128), none, bhsd(1, 1, 37, 128), bhsd(1, 1, 37, 128)},
			nil, bhsd(1, 2, 150, 128))
		// padding masks [B, 1, 1, T] as the attention fusion leaves them beside is_causal: batch 0
		// padded on the left (its first rows keep no key: zeros for a bool mask, the mean of V
		// for the float minimum as fill), batch 1 on the right
		fill := map[graph.DType]float64{graph.Float32: -3.4e38, graph.Float16: -65504, graph.BFloat16: -3.38e38}[dt]
		att("causal-float-padding-d128", A("is_causal", 1), []kernels.Value{bhsd(2, 4, 70, 128), bhsd(2, 2, 70, 128), bhsd(2, 2, 70, 128), v(dt, 2, 1, 1, 70)},
			map[int]genFn{3: padding(70, 5, 3, 0, fill)}, bhsd(2, 4, 70, 128))
		// a per-key bias for each head [B, Hq, 1, T] (Bloom's ALiBi) with the padding added to it
		att("causal-head-bias-padding-d64", A("is_causal", 1), []kernels.Value{bhsd(2, 4, 70, 64), bhsd(2, 2, 70, 64), bhsd(2, 2, 70, 64), v(dt, 2, 4, 1, 70)},
			map[int]genFn{3: headBias(4, 70, 5, 3, fill)}, bhsd(2, 4, 70, 64))
		att("causal-bool-padding-d128", A("is_causal", 1), []kernels.Value{bhsd(2, 4, 70, 128), bhsd(2, 2, 70, 128), bhsd(2, 2, 70, 128), v(bl, 2, 1, 1, 70)},
			map[int]genFn{3: padding(70, 5, 3, 1, 0)}, bhsd(2, 4, 70, 128))
		// a scale that is not positive takes the general tensor-core kernel
		att("negative-scale-d64", A("scale", float32(-0.3)), []kernels.Value{bhsd(1, 2, 40, 64), bhsd(1, 2, 40, 64), bhsd(1, 2, 40, 64)}, nil,
			bhsd(1, 2, 40, 64))
		att("3d-d128", A("q_num_heads", 2, "kv_num_heads", 2), []kernels.Value{v(dt, 1, 100, 256), v(dt, 1, 90, 256), v(dt, 1, 90, 256)}, nil,
			v(dt, 1, 100, 256))
		// windows (graph.AttentionBand): a causal sliding window shorter than a key tile and one
		// spanning tiles, after a past, with padding; a band both ways as ModernBERT's
		W := graph.AttrWindowLeft
		att("sliding-window-d64", A("is_causal", 1, W, 4), []kernels.Value{bhsd(2, 4, 70, 64), bhsd(2, 2, 70, 64), bhsd(2, 2, 70, 64)}, nil,
			bhsd(2, 4, 70, 64))
		att("sliding-window-past-padding-d128", A("is_causal", 1, W, 100), []kernels.Value{bhsd(2, 2, 150, 128), bhsd(2, 1, 150, 128), bhsd(2, 1, 150, 128), v(bl, 2, 1, 1, 187), bhsd(2, 1, 37, 128), bhsd(2, 1, 37, 128)},
			map[int]genFn{3: padding(187, 5, 3, 1, 0)}, bhsd(2, 2, 150, 128))
		att("band-float-padding-d64", A(W, 30, graph.AttrWindowRight, 30), []kernels.Value{bhsd(2, 2, 130, 64), bhsd(2, 2, 130, 64), bhsd(2, 2, 130, 64), v(dt, 2, 1, 1, 130)},
			map[int]genFn{3: padding(130, 5, 3, 0, fill)}, bhsd(2, 2, 130, 64))
		att("band-d32", A(W, 2, graph.AttrWindowRight, 1), []kernels.Value{bhsd(1, 2, 40, 32), bhsd(1, 2, 40, 32), bhsd(1, 2, 40, 32)}, nil,
			bhsd(1, 2, 40, 32))
		// carve's layouts (graph.AttrQLayout): nn.MultiheadAttention's packed projection
		// [S, B, 3, H, D] read in place with Y written [S, B, H, D], at head sizes of each
		// tactic; separate tensors in layouts of their own, grouped, with a mask and a past
		L := func(q, k, v, y string) graph.Attributes {
			return A(graph.AttrQLayout, q, graph.AttrKLayout, k, graph.AttrVLayout, v, graph.AttrYLayout, y)
		}
		for _, hd := range []int64{32, 64, 128} {
			p := v(dt, 70, 2, 3, 4, hd)
			att(fmt.Sprintf("packed-sequence-first-d%d", hd), L("sb0hd", "sb1hd", "sb2hd", "sbhd"), []kernels.Value{p, p, p}, nil, v(dt, 70, 2, 4, hd))
		}
		att("layouts-apart-gqa-mask-past-d64", A(graph.AttrQLayout, "shbd", graph.AttrKLayout, "1sbhd", graph.AttrVLayout, "bshd", graph.AttrYLayout, "hsbd", "is_causal", 1),
			[]kernels.Value{v(dt, 40, 4, 2, 64), v(dt, 2, 40, 2, 2, 64), v(dt, 2, 40, 2, 64), v(bl, 2, 1, 1, 45), bhsd(2, 2, 5, 64), bhsd(2, 2, 5, 64)},
			map[int]genFn{3: padding(45, 3, 2, 1, 0)}, v(dt, 4, 40, 2, 64))
		// carve's relative bias (graph.AttnRelC2P, DeBERTa's disentangled attention): both
		// tables with padding, indices with negative entries; c2p alone over one batch and head,
		// more keys than queries, with a band
		i32 := graph.Int32
		att("relative-bias-padding-d64", A("scale", float32(0.1)), []kernels.Value{bhsd(2, 4, 70, 64), bhsd(2, 4, 70, 64), bhsd(2, 4, 70, 64), v(dt, 2, 1, 1, 70),
			none, none, none, bhsd(2, 4, 70, 16), v(i32, 139), bhsd(2, 4, 70, 16), v(i32, 139)},
			map[int]genFn{3: padding(70, 5, 3, 0, fill), 8: ints(-16, 16), 10: ints(0, 16)}, bhsd(2, 4, 70, 64))
		att("relative-c2p-broadcast-band-d32", A(W, 6, graph.AttrWindowRight, 9), []kernels.Value{bhsd(1, 2, 5, 32), bhsd(1, 2, 40, 32), bhsd(1, 2, 40, 8),
			none, none, none, none, bhsd(1, 1, 5, 7), v(i32, 44)},
			map[int]genFn{8: ints(-7, 7)}, bhsd(1, 2, 5, 8))
	}
	return cs
}

// nbitsCase builds a MatMulNBits node with random quantized weights.
func nbitsCase(dt graph.DType, m, k, n, bits, bs int64, zp string, bias bool) kcase {
	kb := (k + bs - 1) / bs
	blob := bs * bits / 8
	in := []kernels.Value{v(dt, m, k), v(graph.Uint8, n, kb, blob), v(dt, n*kb)}
	gen := map[int]genFn{1: ints(0, 256), 2: uniform(0.01, 0.1)}
	switch zp {
	case "packed":
		in = append(in, v(graph.Uint8, n*((kb*bits+7)/8)))
		gen[3] = ints(0, 256)
	case "float":
		in = append(in, v(dt, n*kb))
		gen[3] = uniform(0, float64(int64(1)<<bits))
	default:
		in = append(in, none)
	}
	if bias {
		in = append(in, none, v(dt, n))
	}
	attrs := kernels.Attrs("K", int(k), "N", int(n), "bits", int(bits), "block_size", int(bs))
	return kcase{name: fmt.Sprintf("MatMulNBits-m%d-k%d-n%d-b%d-bs%d-%s-%v/%s", m, k, n, bits, bs, zp, bias, dtTag(dt)),
		node: nd(kernels.DomainMicrosoft, "MatMulNBits", attrs, in, v(dt, m, n)), gen: gen, kind: "reduce", cpuF32: dt != graph.Float32}
}

func nbitsCases() []kcase {
	var cs []kcase
	for _, dt := range floatTypes {
		cs = append(cs,
			nbitsCase(dt, 1, 256, 40, 4, 32, "packed", false),
			nbitsCase(dt, 3, 70, 9, 4, 16, "packed", true),
			nbitsCase(dt, 2, 64, 6, 8, 32, "float", false),
			nbitsCase(dt, 1, 48, 5, 2, 16, "", true),
			nbitsCase(dt, 20, 128, 33, 4, 32, "packed", true), // dequant-gemm
		)
	}
	return cs
}

func allCases() []kcase {
	var cs []kcase
	for _, f := range []func() []kcase{elementwiseCases, rowCases, rotaryCases, attentionCases, onnxAttentionCases, nbitsCases, moeCases, visionCases, convCases} {
		cs = append(cs, f()...)
	}
	return cs
}

// tolerance is the allowed |gpu - cpu| <= rtol*|cpu| + atol for a case's dtype and kind.
func tolerance(dt graph.DType, kind string, cpuF32 bool) (rtol, atol float64) {
	switch dt {
	case graph.Float16:
		rtol, atol = 1e-3, 1e-3
	case graph.BFloat16:
		rtol, atol = 8e-3, 8e-3
	default:
		rtol, atol = 1e-5, 1e-6
		switch kind {
		case "reduce":
			rtol, atol = 1e-4, 1e-5
		case "conv":
			// cuDNN's FFT and Winograd algorithms (float32 FMA math) round relative to the
			// output's scale rather than each element's
			rtol, atol = 1e-4, 1e-4
		}
	}
	if cpuF32 && dt != graph.Float32 {
		// the CPU reference keeps float32 intermediates the GPU rounds to dt (rotated keys in
		// the cache, dequantized weights), a few units in the last place
		rtol, atol = 4*rtol, 4*atol
	}
	return rtol, atol
}

var _ = math.Inf
