package cpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/rewrite/rewritetest"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
)

// The fused graphs of carve.dev/libs/graph/rewrite must compute what the exported ones do:
// these tests run both through the CPU kernels.

// fusedTol is the agreement asked of fused and exported float32 graphs: relative, absolute
// below 1.
const fusedTol = 1e-5

// runGraph runs m at dims on inputs and returns every graph output by name.
func runGraph(t testing.TB, m *graph.Model, dims map[string]int64, inputs map[string]kernels.Tensor) map[string]kernels.Tensor {
	t.Helper()
	b, err := graph.Bind(m, dims)
	require.NoError(t, err)
	e := &refExec{t: t, m: m, b: b, values: map[int]kernels.Tensor{}}
	for _, v := range m.Initializers {
		h, err := v.Init.Host()
		require.NoError(t, err)
		e.values[v.ID] = kernels.Tensor{DType: h.DType, Shape: h.Shape, Data: h.Data}
	}
	for _, v := range m.Inputs {
		in, ok := inputs[v.Name]
		require.True(t, ok, "no input %s", v.Name)
		e.values[v.ID] = in
	}
	require.NoError(t, e.run(registry))
	out := map[string]kernels.Tensor{}
	for _, v := range m.Outputs {
		out[v.Name] = e.values[v.ID]
	}
	return out
}

// maxRelDiff is the largest |a-b| / max(1, |a|) over float32 tensors.
func maxRelDiff(t testing.TB, a, b kernels.Tensor) float64 {
	t.Helper()
	require.Equal(t, a.Shape, b.Shape)
	require.Equal(t, graph.Float32, a.DType)
	worst := 0.0
	for i, x := range a.Float32s() {
		y := b.Float32s()[i]
		if math.IsNaN(float64(x)) != math.IsNaN(float64(y)) {
			return math.Inf(1)
		}
		worst = math.Max(worst, math.Abs(float64(x-y))/math.Max(1, math.Abs(float64(x))))
	}
	return worst
}

// pytorchFixtures are the fixtures exported from PyTorch models: each has its attention fused.
var pytorchFixtures = map[string]int{ // name -> attention layers
	"gpt2": 2, "gpt2_fused": 2, "qwen2": 2, "qwen2_q4": 2, "llama": 2, "bert": 2, "bert_fused": 2, "bert_ts_fused": 2, "qwen2_1p5b_graph": 28,
}

// notOnCPU are the fusion kinds whose fused op has no CPU kernel (as engine.FuseOptions skips
// them for the CPU): GatedMatMul, which only the CUDA backend implements.
func notOnCPU(t *testing.T) []rewrite.Kind {
	t.Helper()
	reg, err := kernels.RegistryFor(kernels.BackendCPU)
	require.NoError(t, err)
	var skip []rewrite.Kind
	for _, k := range rewrite.Kinds() {
		if _, err := reg.Lookup(kernels.BackendCPU, kernels.Key(k.Op())); err != nil {
			skip = append(skip, k)
		}
	}
	require.Equal(t, []rewrite.Kind{rewrite.GatedMatMul}, skip)
	return skip
}

// TestFusedFixtures runs every fixture fused and as exported at onnxruntime's bindings: the
// outputs agree with each other within fusedTol and with onnxruntime's within 1e-4.
func TestFusedFixtures(t *testing.T) {
	for _, fm := range testmodels.Models() {
		t.Run(fm.Name, func(t *testing.T) {
			m, err := graph.Load(fm.WriteTemp(t))
			require.NoError(t, err)
			defer m.Close()
			f, rep, err := rewrite.Fuse(m, rewrite.Options{Skip: notOnCPU(t)})
			require.NoError(t, err)
			if want, ok := pytorchFixtures[fm.Name]; ok {
				require.Equal(t, want, rep.Count(rewrite.Attention), "attention layers fused; unfused: %+v", rep.Unfused)
			}
			if len(fm.Bindings) == 0 || fm.MissingExternalData != "" {
				return
			}
			for _, bd := range fm.Bindings {
				if bd.Error != "" {
					continue
				}
				inputs := map[string]kernels.Tensor{}
				for _, v := range m.Inputs {
					a, err := testmodels.ReadArray(bd.Inputs[v.Name])
					require.NoError(t, err)
					if v.DType == graph.Float32 {
						inputs[v.Name] = f32(a.Shape, a.Float32)
					} else {
						inputs[v.Name] = i64(a.Shape, a.Int64)
					}
				}
				exported := runGraph(t, m, bd.Dims, inputs)
				fused := runGraph(t, f, bd.Dims, inputs)
				for name, want := range exported {
					got := fused[name]
					if want.DType != graph.Float32 {
						require.Equal(t, want.Data, got.Data, "output %s", name)
						continue
					}
					d := maxRelDiff(t, want, got)
					require.LessOrEqual(t, d, fusedTol, "output %s at %v: fused against exported", name, bd.Dims)
					ref, err := testmodels.ReadArray(bd.Outputs[name])
					require.NoError(t, err)
					dr := maxRelDiff(t, f32(ref.Shape, ref.Float32), got)
					require.LessOrEqual(t, dr, 1e-4, "output %s at %v: fused against onnxruntime", name, bd.Dims)
					t.Logf("%v %s: fused vs exported %.2g, vs onnxruntime %.2g", bd.Dims, name, d, dr)
				}
				// left padding: the first rows of batch 0 keep no key, which the masks' fixes handle
				am, ok := inputs["attention_mask"]
				if !ok || bd.Dims["seq"] < 3 {
					continue
				}
				padded := i64(am.Shape, append([]int64(nil), am.Int64s()...))
				padded.Int64s()[0], padded.Int64s()[1] = 0, 0
				inputs["attention_mask"] = padded
				exported, fused = runGraph(t, m, bd.Dims, inputs), runGraph(t, f, bd.Dims, inputs)
				for name, want := range exported {
					if want.DType == graph.Float32 {
						require.LessOrEqual(t, maxRelDiff(t, want, fused[name]), fusedTol, "output %s at %v, left padded", name, bd.Dims)
					}
				}
			}
		})
	}
}

// randomInputs makes inputs for m: attention_mask from a, every float input random.
func randomInputs(r *rand.Rand, m *graph.Model, a rewritetest.Attention) map[string]kernels.Tensor {
	in := map[string]kernels.Tensor{}
	for _, v := range m.Inputs {
		shape, err := v.Shape.Eval(nil)
		if err != nil {
			panic(err)
		}
		switch {
		case v.Name == "attention_mask":
			in[v.Name] = i64(shape, a.AttentionMask(r))
		case v.DType == graph.BFloat16 || v.DType == graph.Float16:
			in[v.Name] = tensorOf(v.DType, shape, float64sOf(randF32(r, shape...)))
		default:
			in[v.Name] = randF32(r, shape...)
		}
	}
	return in
}

// checkFusedAttention builds case a as exported, fuses it and runs both on random inputs.
func checkFusedAttention(t *testing.T, r *rand.Rand, a rewritetest.Attention) {
	t.Helper()
	m, err := a.Model()
	require.NoError(t, err, "%s", a)
	f, rep, err := rewrite.Fuse(m, rewrite.Options{Skip: notOnCPU(t)})
	require.NoError(t, err, "%s", a)
	require.Equal(t, 1, rep.Count(rewrite.Attention), "%s: %+v", a, rep.Unfused)
	if a.Mask >= rewritetest.InfMask && a.S == a.T && a.Heads != rewritetest.HeadsAll {
		// a prompt's padding, causal and window masks are all canonical: none is left a tensor
		// (but one expanded over the heads is read whole)
		for _, f := range rep.Fused {
			require.NotContains(t, f.Detail, "float mask", "%s", a)
			require.NotContains(t, f.Detail, "not recognised", "%s", a)
		}
	}
	in := randomInputs(r, m, a)
	want := runGraph(t, m, nil, in)[rewritetest.Output]
	got := runGraph(t, f, nil, in)[rewritetest.Output]
	d := maxRelDiff(t, want, got)
	require.LessOrEqual(t, d, attentionTol(a), "%s", a)
}

// attentionTol is fusedTol for scores of magnitude up to 8, and grows with the scores' bound
// beyond: fused and exported graphs round the scale differently (a Div by 1/s in the exported
// graph, a product by s in the kernel), and the softmax turns a score's rounding, relative to
// its magnitude, into the same relative change of its weight. The inputs are standard normal,
// so |q.k| <= |q||k| is about D, and Scale * D is the scores' scale.
func attentionTol(a rewritetest.Attention) float64 {
	return fusedTol * max(1, float64(a.Scale)*float64(a.D)/8)
}

// TestFusedAttentionRandom: random attention subgraphs in the exporters' forms (masks or none,
// causal or not, grouped heads, scales, K layouts, the NaN guard, rows with every key masked
// out) compute the same fused as exported.
func TestFusedAttentionRandom(t *testing.T) {
	r := rng(t, 151)
	for range 200 {
		checkFusedAttention(t, r, rewritetest.Random(r))
	}
	// windowed prompts whose rows may keep no key (finite fill), the window longer than the
	// prompt or not: the rows with none kept in their band take the mean of V
	for range 60 {
		a := rewritetest.Random(r)
		a.Mask, a.EmptyRows, a.Window, a.T = rewritetest.MinMask, true, 1+r.IntN(8), a.S
		checkFusedAttention(t, r, a.Normalize())
	}
	// soft-capped scores (Gemma2's eager attention) fuse to Attention's softcap
	for range 40 {
		a := rewritetest.Random(r)
		a.Softcap = float32(1 + r.IntN(50))
		checkFusedAttention(t, r, a)
	}
}

// FuzzFuse checks fused == exported on attention subgraphs chosen by the fuzzer.
func FuzzFuse(f *testing.F) {
	f.Add(uint8(1), uint8(2), uint8(1), uint8(4), uint8(4), uint8(8), uint8(8), uint8(0), uint8(0), uint8(0), false, false, false, float32(0.35), uint64(1))
	f.Add(uint8(2), uint8(4), uint8(2), uint8(7), uint8(7), uint8(16), uint8(4), uint8(2), uint8(2), uint8(2), true, true, true, float32(0.25), uint64(2))
	f.Add(uint8(3), uint8(2), uint8(2), uint8(3), uint8(9), uint8(5), uint8(6), uint8(1), uint8(1), uint8(3), true, false, true, float32(1.5), uint64(3))
	f.Add(uint8(1), uint8(3), uint8(1), uint8(1), uint8(12), uint8(4), uint8(4), uint8(0), uint8(3), uint8(1), false, true, false, float32(0.1), uint64(4))
	f.Fuzz(func(t *testing.T, b, hq, hkv, s, tt, d, dv, kform, scaleForm, mask uint8, causal, guard, empty bool, scale float32, seed uint64) {
		a := rewritetest.Attention{B: int(b), Hq: int(hq), Hkv: int(hkv), S: int(s), T: int(tt), D: int(d), Dv: int(dv),
			KForm: int(kform), ScaleForm: int(scaleForm), Mask: int(mask), Causal: causal, Guard: guard, EmptyRows: empty,
			Scale: float32(math.Mod(math.Abs(float64(scale)), 4))}.Normalize()
		checkFusedAttention(t, rand.New(rand.NewPCG(seed, seed)), a)
	})
}

// TestFusedNormsAndSiLU: norms written out, x*sigmoid(x), the gate silu(x)*up, a linear
// layer's MatMul and bias Add, and GELU written out compute the same fused.
func TestFusedNormsAndSiLU(t *testing.T) {
	r := rng(t, 31)
	for _, tc := range []struct {
		name  string
		spec  graph.Spec
		tol   float64
		skip  []rewrite.Kind
		fused int // fusions expected
	}{
		{"rms", rewritetest.Norm{Rows: 5, H: 24, Weight: true, Eps: 1e-6}.Spec(), fusedTol, nil, 1},
		{"rms division no weight", rewritetest.Norm{Rows: 5, H: 24, Div: true, Eps: 1e-6}.Spec(), fusedTol, nil, 1},
		{"rms bfloat16", rewritetest.Norm{Rows: 5, H: 24, Weight: true, DType: graph.BFloat16, Eps: 1e-6}.Spec(), 1e-2, nil, 1},
		{"layer norm", rewritetest.Norm{Rows: 5, H: 24, Layer: true, Weight: true, Bias: true, Eps: 1e-5}.Spec(), fusedTol, nil, 1},
		{"layer norm x*x no weight", rewritetest.Norm{Rows: 5, H: 24, Layer: true, Square: true, Eps: 1e-5}.Spec(), fusedTol, nil, 1},
		{"silu gate", rewritetest.SiLU(5, 24), fusedTol, nil, 2}, // Swish, then SwiGLU
		{"silu alone", rewritetest.SiLU(5, 24), fusedTol, []rewrite.Kind{rewrite.SwiGLU}, 1},
		{"swiglu of x*sigmoid(x)", rewritetest.SiLU(5, 24), fusedTol, []rewrite.Kind{rewrite.SiLU}, 1},
		{"linear with bias", rewritetest.Linear(graph.Float32, 3, 40, 7), fusedTol, nil, 1},
		{"gelu tanh", rewritetest.Gelu{Rows: 5, H: 24}.Spec(), fusedTol, nil, 1},
		{"gelu tanh x*x*x", rewritetest.Gelu{Rows: 5, H: 24, Order: 2, Cube: true}.Spec(), fusedTol, nil, 1},
		{"gelu erf", rewritetest.Gelu{Rows: 5, H: 24, Erf: true, Order: 2}.Spec(), fusedTol, nil, 1},
		{"linear with bias bfloat16", rewritetest.Linear(graph.BFloat16, 3, 40, 7), 1e-2, nil, 1},
		{"linear with bias float16", rewritetest.Linear(graph.Float16, 3, 40, 7), 1e-2, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(tc.spec)
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{Skip: append(notOnCPU(t), tc.skip...)})
			require.NoError(t, err)
			require.Len(t, rep.Fused, tc.fused, "%+v", rep.Unfused)
			in := randomInputs(r, m, rewritetest.Attention{})
			want, got := runGraph(t, m, nil, in)["y"], runGraph(t, f, nil, in)["y"]
			if want.DType == graph.BFloat16 || want.DType == graph.Float16 {
				closeTo64(t, float64sOf(want), float64sOf(got), tc.tol, "y")
				return
			}
			require.LessOrEqual(t, maxRelDiff(t, want, got), tc.tol)
		})
	}
}

// TestFusedDisentangled: DeBERTa's disentangled attention (rewritetest.Disentangled) computes the
// same fused, its gathered terms read as the Attention's relative bias, at sequences shorter
// and longer than the log buckets' linear part, right- and left-padded (a padded query's row is
// the mean of V in both graphs), and with an index that is not a function of i - j (then read
// whole).
func TestFusedDisentangled(t *testing.T) {
	r := rng(t, 29)
	base := rewritetest.Disentangled{B: 2, H: 2, D: 8, Span: 8, MaxPos: 64, C2P: true, P2C: true, Mask: true}
	for _, tc := range []struct {
		name string
		edit func(d *rewritetest.Disentangled)
		rel  bool
	}{
		{"log buckets", func(d *rewritetest.Disentangled) {}, true},
		{"i - j without a mask", func(d *rewritetest.Disentangled) { d.Rel, d.Mask = rewritetest.Plain, false }, true},
		{"content-to-position", func(d *rewritetest.Disentangled) { d.P2C = false }, true},
		{"position-to-content, short span", func(d *rewritetest.Disentangled) { d.C2P, d.Span = false, 2 }, true},
		{"i + j", func(d *rewritetest.Disentangled) { d.Rel = rewritetest.NotToeplitzSum }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := base
			tc.edit(&d)
			m, err := d.Model()
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{Skip: notOnCPU(t)})
			require.NoError(t, err)
			require.Equal(t, 1, rep.Count(rewrite.Attention), "%+v", rep.Unfused)
			for _, x := range rep.Fused {
				if x.Kind == rewrite.Attention {
					require.Equal(t, tc.rel, strings.Contains(x.Detail, "gathered from"), x.Detail)
				}
			}
			for _, seq := range []int64{1, 5, 13} {
				dims := map[string]int64{"seq": seq}
				in := map[string]kernels.Tensor{}
				for _, v := range m.Inputs {
					shape, err := v.Shape.Eval(dims)
					require.NoError(t, err)
					if v.Name != "attention_mask" {
						in[v.Name] = randF32(r, shape...)
						continue
					}
					am := make([]int64, 2*seq)
					for j := range seq {
						am[j] = b2i(j < seq-seq/3)              // right padding
						am[seq+j] = b2i(j >= seq/2 || seq == 1) // left padding
					}
					in[v.Name] = i64(shape, am)
				}
				want := runGraph(t, m, dims, in)[rewritetest.Output]
				got := runGraph(t, f, dims, in)[rewritetest.Output]
				require.LessOrEqual(t, maxRelDiff(t, want, got), fusedTol, "seq %d", seq)
			}
		})
	}
}
