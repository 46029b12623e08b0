package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// recipeSize selects n on t and returns R.
func recipeSize(t testing.TB, reg *kernels.Registry, n *kernels.Node, tg kernels.Target) (int64, string) {
	t.Helper()
	inst, err := reg.Select(n, tg)
	require.NoError(t, err, n.Name)
	size, err := inst.Recipe().Size()
	require.NoError(t, err)
	return size, inst.Tactic()
}

// Every case's R is within its Bound at its own shapes.
func TestCasesBound(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	for _, c := range allCases() {
		r, _ := recipeSize(t, reg, &c.node, h200)
		w, err := reg.Bound(kernels.RangeOf(&c.node), h200)
		require.NoError(t, err, c.name)
		require.LessOrEqual(t, r, w.Bytes, c.name)
	}
}

// family is a node template over dims: make builds the node at concrete dims (rangeFrom gives
// its node range over the dims' ranges).
type family struct {
	name string
	dims []kernels.DimRange
	make func(d []int64) kernels.Node
}

// rangeFrom turns a node template into its range by evaluating it at both ends of every dim
// (the templates are monotone in each dim).
func rangeFrom(f family) kernels.NodeRange {
	lo, hi := make([]int64, len(f.dims)), make([]int64, len(f.dims))
	for i, d := range f.dims {
		lo[i], hi[i] = d.Lo, d.Hi
	}
	nl, nh := f.make(lo), f.make(hi)
	r := kernels.NodeRange{Name: nl.Name, Op: nl.Op, Domain: nl.Domain, Attrs: nl.Attrs}
	conv := func(a, b []kernels.Value) []kernels.ValueRange {
		out := make([]kernels.ValueRange, len(a))
		for i := range a {
			out[i].DType = a[i].DType
			for j := range a[i].Shape {
				out[i].Dims = append(out[i].Dims, kernels.DimRange{Lo: a[i].Shape[j], Hi: b[i].Shape[j]})
			}
		}
		return out
	}
	r.Inputs, r.Outputs = conv(nl.Inputs, nh.Inputs), conv(nl.Outputs, nh.Outputs)
	return r
}

func families() []family {
	A := kernels.Attrs
	bf, i32 := graph.BFloat16, graph.Int32
	gqa := func(present bool) func(d []int64) kernels.Node {
		return func(d []int64) kernels.Node {
			b, s, p := d[0], d[1], d[2]
			const nq, nkv, hd = 12, 2, 128
			in := []kernels.Value{v(bf, b, s, nq*hd), v(bf, b, s, nkv*hd), v(bf, b, s, nkv*hd), v(bf, b, nkv, p, hd), v(bf, b, nkv, p, hd), v(i32, b), v(i32)}
			outs := []kernels.Value{v(bf, b, s, nq*hd)}
			if present {
				outs = append(outs, v(bf, b, nkv, p+s, hd), v(bf, b, nkv, p+s, hd))
			}
			return nd(kernels.DomainMicrosoft, "GroupQueryAttention", A("num_heads", nq, "kv_num_heads", nkv), in, outs...)
		}
	}
	mha := func(d []int64) kernels.Node {
		b, s, p := d[0], d[1], d[2]
		const n, hd = 8, 64
		in := []kernels.Value{v(bf, b, s, n*hd), v(bf, b, s, n*hd), v(bf, b, s, n*hd), v(bf, 3*n*hd), none, none, v(bf, b, n, p, hd), v(bf, b, n, p, hd)}
		return nd(kernels.DomainMicrosoft, "MultiHeadAttention", A("num_heads", n), in, v(bf, b, s, n*hd))
	}
	nbits := func(d []int64) kernels.Node {
		m := d[0]
		const k, n = 1536, 8960
		return nd(kernels.DomainMicrosoft, "MatMulNBits", A("K", k, "N", n, "bits", 4, "block_size", 32),
			[]kernels.Value{v(bf, m, k), v(graph.Uint8, n, k/32, 16), v(bf, n*k/32)}, v(bf, m, n))
	}
	onnxAttn := func(present bool) func(d []int64) kernels.Node {
		return func(d []int64) kernels.Node {
			b, s, p := d[0], d[1], d[2]
			const nq, nkv, hd = 12, 2, 128
			in := []kernels.Value{v(bf, b, nq, s, hd), v(bf, b, nkv, s, hd), v(bf, b, nkv, s, hd), v(bf, b, 1, s, p+s), v(bf, b, nkv, p, hd), v(bf, b, nkv, p, hd)}
			outs := []kernels.Value{v(bf, b, nq, s, hd)}
			if present {
				outs = append(outs, v(bf, b, nkv, p+s, hd), v(bf, b, nkv, p+s, hd))
			}
			return nd("", "Attention", A("is_causal", 1), in, outs...)
		}
	}
	dr := func(lo, hi int64) kernels.DimRange { return kernels.DimRange{Lo: lo, Hi: hi} }
	return []family{
		{name: "gqa-present", dims: []kernels.DimRange{dr(1, 64), dr(1, 64), dr(0, 16384)}, make: gqa(true)},
		{name: "gqa-no-present", dims: []kernels.DimRange{dr(1, 16), dr(1, 8), dr(0, 4096)}, make: gqa(false)},
		{name: "gqa-decode", dims: []kernels.DimRange{dr(1, 256), dr(1, 1), dr(0, 131072)}, make: gqa(true)},
		{name: "mha-past", dims: []kernels.DimRange{dr(1, 16), dr(1, 32), dr(1, 4096)}, make: mha},
		{name: "onnx-attention-present", dims: []kernels.DimRange{dr(1, 64), dr(1, 4096), dr(0, 16384)}, make: onnxAttn(true)},
		{name: "onnx-attention-no-present", dims: []kernels.DimRange{dr(1, 16), dr(1, 2048), dr(0, 4096)}, make: onnxAttn(false)},
		{name: "nbits", dims: []kernels.DimRange{dr(1, 4096)}, make: nbits},
	}
}

// R <= W over shape families: at random points of each family's ranges, and at the corners,
// the selected recipe fits the bound of the whole range, on an H200 and on a small GPU.
func TestRecipeWithinBound(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(7, 8))
	small := kernels.Target{Backend: kernels.BackendCUDA, Arch: "sm_80", SMs: 16, SharedMemPerBlock: 100 << 10}
	for _, tg := range []kernels.Target{h200, small} {
		for _, f := range families() {
			t.Run(fmt.Sprintf("%s/%d-SMs", f.name, tg.SMs), func(t *testing.T) {
				nr := rangeFrom(f)
				w, err := reg.Bound(&nr, tg)
				require.NoError(t, err)
				tactics := map[string]int{}
				for i := 0; i < 300; i++ {
					d := make([]int64, len(f.dims))
					for j, x := range f.dims {
						switch {
						case i < 1<<len(f.dims):
							d[j] = x.Lo
							if i&(1<<j) != 0 {
								d[j] = x.Hi
							}
						case r.IntN(2) == 0: // small values are the interesting ones for decode
							d[j] = x.Lo + r.Int64N(min(x.Hi-x.Lo+1, 64))
						default:
							d[j] = x.Lo + r.Int64N(x.Hi-x.Lo+1)
						}
					}
					n := f.make(d)
					size, tactic := recipeSize(t, reg, &n, tg)
					tactics[tactic]++
					require.LessOrEqual(t, size, w.Bytes, "%s at %v: R %d > W %d", f.name, d, size, w.Bytes)
				}
				t.Logf("W %d bytes (%s); tactics %v", w.Bytes, w.Tactic, tactics)
			})
		}
	}
}

// The decode step's workspace stays small: GQA with present outputs needs only the partials
// of the decode tactic, a few MiB at any context length and batch, on an H200 and on a GPU of
// fewer multiprocessors and less shared memory.
func TestDecodeWorkspaceIsSmall(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	small := kernels.Target{Backend: kernels.BackendCUDA, Arch: "sm_80", SMs: 16, SharedMemPerBlock: 100 << 10}
	for _, tg := range []kernels.Target{h200, small} {
		for _, b := range []int64{1, 2, 8, 32, 128} {
			for _, p := range []int64{511, 1024, 8192, 131071} {
				f := families()[0]
				n := f.make([]int64{b, 1, p})
				size, tactic := recipeSize(t, reg, &n, tg)
				require.LessOrEqual(t, size, int64(4<<20), "b %d past %d: %s needs %d bytes", b, p, tactic, size)
				require.Equal(t, "decode", tactic)
			}
		}
	}
}

// ONNX Attention stores no scores: the bfloat16 prefill at any sequence length needs no
// workspace and takes the tensor-core tactic; a past without present outputs needs only the
// gathered keys and values, linear in T.
func TestONNXAttentionWorkspaceIsLinear(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	var present, noPresent func([]int64) kernels.Node
	for _, f := range families() {
		switch f.name {
		case "onnx-attention-present":
			present = f.make
		case "onnx-attention-no-present":
			noPresent = f.make
		}
	}
	for _, bs := range [][2]int64{{1, 2048}, {8, 1024}, {1, 32768}} {
		n := present([]int64{bs[0], bs[1], 0})
		size, tactic := recipeSize(t, reg, &n, h200)
		require.Zero(t, size, "b %d s %d", bs[0], bs[1])
		require.Equal(t, "flash-mma", tactic)
	}
	const b, s, p = 2, 16, 4096
	n := noPresent([]int64{b, s, p})
	size, _ := recipeSize(t, reg, &n, h200)
	require.Positive(t, size)
	require.LessOrEqual(t, size, int64(2*b*2*(p+s)*128*2+1024), "keys and values of T = %d", p+s)
}
