package engine

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// moeModel is a Mixtral-shaped mixture-of-experts block in onnxruntime GenAI's form: router
// logits MatMul(x, gate^T) [tokens, experts], then com.microsoft.MoE (swiglu interleaved, k 2,
// normalized, no biases; fc1 [E, 2*inter, hidden], fc2 [E, hidden, inter]) over x [tokens,
// hidden].
func moeModel(t *testing.T, r *rand.Rand, hidden, inter, experts int) (*graph.Model, map[string][]float32) {
	t.Helper()
	w := map[string][]float32{}
	init := func(name string, shape ...int64) *graph.Tensor {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() / math.Sqrt(float64(shape[len(shape)-1])))
		}
		w[name] = v
		tn, err := graph.NewTensor(name, graph.Float32, shape, kernels.BytesOf(v))
		require.NoError(t, err)
		return tn
	}
	e, h, i := int64(experts), int64(hidden), int64(inter)
	attrs := graph.NewAttributes(
		graph.Attribute{Name: "k", Kind: graph.AttrInt, Int: 2},
		graph.Attribute{Name: "activation_type", Kind: graph.AttrString, String: "swiglu"},
		graph.Attribute{Name: "swiglu_fusion", Kind: graph.AttrInt, Int: 1},
		graph.Attribute{Name: "normalize_routing_weights", Kind: graph.AttrInt, Int: 1})
	m, err := graph.Build(graph.Spec{
		Inputs:       []graph.ValueSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{graph.Sym("tokens"), graph.Const(h)}}},
		Initializers: []*graph.Tensor{init("gate_t", h, e), init("fc1", e, 2*i, h), init("fc2", e, h, i)},
		Nodes: []graph.NodeSpec{
			{Name: "router", OpType: "MatMul", Inputs: []string{"x", "gate_t"}, Outputs: []string{"logits"}},
			{Name: "moe", OpType: "MoE", Domain: kernels.DomainMicrosoft, Inputs: []string{"x", "logits", "fc1", "", "fc2"}, Outputs: []string{"y"}, Attrs: attrs},
		},
		Outputs: []string{"y"},
		Opsets:  map[string]int64{"": 18, kernels.DomainMicrosoft: 1},
	})
	require.NoError(t, err)
	return m, w
}

// moeBlockRef is moeModel's output in float64: softmax over the logits, the two most probable
// experts (weights normalized to sum 1), each x W1^T, swiglu of the interleaved (gate, linear)
// pairs, times W2^T.
func moeBlockRef(x []float32, w map[string][]float32, tokens, h, inter, e int) []float64 {
	out := make([]float64, tokens*h)
	for t := range tokens {
		xt := x[t*h : (t+1)*h]
		l := make([]float64, e)
		for j := range l {
			for d := range h {
				l[j] += float64(xt[d]) * float64(w["gate_t"][d*e+j])
			}
		}
		ids := []int{}
		for j := range e {
			ids = append(ids, j)
		}
		slices.SortFunc(ids, func(a, b int) int {
			if l[a] != l[b] {
				if l[a] > l[b] {
					return -1
				}
				return 1
			}
			return b - a
		})
		p0, p1 := math.Exp(l[ids[0]]), math.Exp(l[ids[1]])
		for r, ex := range ids[:2] {
			wt := []float64{p0, p1}[r] / (p0 + p1)
			a := make([]float64, inter)
			for o := range inter {
				var g, lin float64
				for d := range h {
					g += float64(xt[d]) * float64(w["fc1"][(ex*2*inter+2*o)*h+d])
					lin += float64(xt[d]) * float64(w["fc1"][(ex*2*inter+2*o+1)*h+d])
				}
				a[o] = g / (1 + math.Exp(-g)) * lin
			}
			for o := range h {
				var y float64
				for j := range inter {
					y += a[j] * float64(w["fc2"][(ex*h+o)*inter+j])
				}
				out[t*h+o] += wt * y
			}
		}
	}
	return out
}

// TestMoEModel plans and runs moeModel over an envelope of token counts on the CPU and on the
// simulated device: the reference's output, and the same bytes on both.
func TestMoEModel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const hidden, inter, experts = 32, 48, 4
	m, w := moeModel(t, r, hidden, inter, experts)
	for _, tokens := range []int{1, 7, 40} {
		x := kernels.MustTensor(graph.Float32, int64(tokens), hidden)
		for i := range x.Float32s() {
			x.Float32s()[i] = float32(r.NormFloat64())
		}
		want := moeBlockRef(x.Float32s(), w, tokens, hidden, inter, experts)
		var cpuOut []byte
		for _, kind := range []string{kernels.BackendCPU, kernels.BackendSim} {
			be, al := newHostBackend(t, kind, 1<<24)
			_, s := newSession(t, m, be, al, RuntimeOptions{Envelope: Envelope{"tokens": {Lo: 1, Hi: 64}}})
			out, err := s.Run(context.Background(), map[string]kernels.Tensor{"x": x})
			require.NoError(t, err, kind)
			got := out[0].Float32s()
			require.Len(t, got, len(want))
			for i := range want {
				require.InDelta(t, want[i], float64(got[i]), 1e-4*math.Max(1, math.Abs(want[i])), "%s tokens %d element %d", kind, tokens, i)
			}
			if kind == kernels.BackendCPU {
				cpuOut = out[0].Data
				continue
			}
			require.True(t, bytes.Equal(cpuOut, out[0].Data), "tokens %d: sim differs from cpu", tokens)
		}
	}
}
