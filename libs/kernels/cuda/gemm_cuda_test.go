//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// gemmTolerance is the error allowed per output element, relative to sum_k |a_ik * b_kj|:
// fp32 operands with fp32 accumulation; fp16 and bf16 outputs are rounded to 11 and 8
// significant bits (relative steps 4.9e-4 and 3.9e-3).
func gemmTolerance(dt graph.DType) float64 {
	switch dt {
	case graph.Float16:
		return 1e-3
	case graph.BFloat16:
		return 8e-3
	}
	return 1e-5
}

// refMatMul is numpy's matmul in float64, and the magnitude sum of each element's products.
func refMatMul(as, bs []int64, a, b []float64) (out []int64, y, mag []float64) {
	a2, b2 := as, bs
	if len(as) == 1 {
		a2 = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		b2 = []int64{bs[0], 1}
	}
	m, k, n := a2[len(a2)-2], a2[len(a2)-1], b2[len(b2)-1]
	batch, err := kernels.BroadcastShapes(a2[:len(a2)-2], b2[:len(b2)-2])
	if err != nil {
		panic(err)
	}
	sa := gemmBatchStrides(a2[:len(a2)-2], batch, m*k)
	sb := gemmBatchStrides(b2[:len(b2)-2], batch, k*n)
	nb := gemmNumel(batch)
	y, mag = make([]float64, nb*m*n), make([]float64, nb*m*n)
	for bi := int64(0); bi < nb; bi++ {
		ao, bo := int64(0), int64(0)
		for j, x := len(batch)-1, bi; j >= 0; j-- {
			ao += (x % batch[j]) * sa[j]
			bo += (x % batch[j]) * sb[j]
			x /= batch[j]
		}
		for i := int64(0); i < m; i++ {
			for j := int64(0); j < n; j++ {
				var s, g float64
				for l := int64(0); l < k; l++ {
					p := a[ao+i*k+l] * b[bo+l*n+j]
					s += p
					g += math.Abs(p)
				}
				y[bi*m*n+i*n+j], mag[bi*m*n+i*n+j] = s, g
			}
		}
	}
	out = append([]int64(nil), batch...)
	if len(as) > 1 {
		out = append(out, m)
	}
	if len(bs) > 1 {
		out = append(out, n)
	}
	return out, y, mag
}

func requireClose(t *testing.T, dt graph.DType, got, want, mag []float64) {
	t.Helper()
	require.Len(t, got, len(want))
	tol := gemmTolerance(dt)
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*(mag[i]+1e-30)+1e-30) {
			t.Fatalf("element %d: got %g, want %g (|diff| %g > %g x %g)", i, got[i], want[i], d, tol, mag[i])
		}
	}
}

func TestMatMul(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		a, b []int64
		mode gemmMode
	}{
		{[]int64{7, 33}, []int64{33, 5}, gemmSingle},
		{[]int64{1, 1536}, []int64{1536, 256}, gemmSingle},
		{[]int64{64}, []int64{64, 9}, gemmSingle},            // 1-D A
		{[]int64{4, 64}, []int64{64}, gemmSingle},            // 1-D B
		{[]int64{3, 2, 17, 40}, []int64{40, 24}, gemmSingle}, // A's batches fold into rows
		{[]int64{3, 17, 40}, []int64{3, 40, 24}, gemmStrided},
		{[]int64{17, 40}, []int64{5, 40, 24}, gemmStrided}, // A broadcast: stride 0
		{[]int64{2, 1, 9, 16}, []int64{1, 3, 16, 8}, gemmLoop},
		{[]int64{2, 0, 16}, []int64{16, 8}, gemmSingle}, // empty
		{[]int64{2, 5, 0}, []int64{0, 8}, gemmSingle},   // K = 0: zeros
		// decode steps' shapes: a few rows, long K
		{[]int64{8, 8960}, []int64{8960, 1536}, gemmSingle},
		{[]int64{1, 1, 1536}, []int64{1536, 8960}, gemmSingle},
		{[]int64{2, 1, 4, 64}, []int64{64, 40}, gemmSingle},
		{[]int64{3, 100}, []int64{100, 13}, gemmSingle},
	} {
		for _, dt := range []graph.DType{graph.Float32, graph.Float16, graph.BFloat16} {
			t.Run(fmt.Sprintf("%v x %v %v", c.a, c.b, dt), func(t *testing.T) {
				av := randomValues(r, dt, gemmNumel(c.a))
				bv := randomValues(r, dt, gemmNumel(c.b))
				out, want, mag := refMatMul(c.a, c.b, av, bv)
				node := &kernels.Node{Name: "mm", Op: "MatMul",
					Inputs:  []kernels.Value{{DType: dt, Shape: c.a}, {DType: dt, Shape: c.b}},
					Outputs: []kernels.Value{{DType: dt, Shape: out}}}
				inst, err := b.Registry().Select(node, b.Target())
				require.NoError(t, err)
				require.Equal(t, c.mode, inst.(*gemmInstance).mode)
				t.Logf("tactic %s", inst.Tactic())
				y := outputTensor(t, b, s, dt, out)
				in := []kernels.Tensor{upload(t, b, s, dt, c.a, av), upload(t, b, s, dt, c.b, bv)}
				require.NoError(t, inst.Run(in, []kernels.Tensor{y}, workspace(t, b, inst), s))
				requireClose(t, dt, download(t, b, s, y), want, mag)
			})
		}
	}
}

func TestGemm(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	r := rand.New(rand.NewPCG(5, 6))
	const m, k, n = 19, 70, 23
	for _, c := range []struct {
		transA, transB bool
		alpha, beta    float32
		c              []int64 // nil: no C
		mode           cMode
	}{
		{false, false, 1, 1, nil, cNone},
		{true, false, 0.5, 1, []int64{m, n}, cFull},
		{false, true, 1, 2, []int64{n}, cBroadcast},
		{true, true, -1, 0.25, []int64{m, 1}, cBroadcast},
		{false, false, 2, 3, []int64{}, cBroadcast},
		{false, true, 1, 0, []int64{m, n}, cNone}, // beta 0 ignores C
		{false, false, 1.5, 1, []int64{n}, cBias}, // a bias row: cuBLASLt's epilogue (alpha scales the product only)
		{true, true, 1, 1, []int64{n}, cBias},
	} {
		for _, dt := range []graph.DType{graph.Float32, graph.Float16, graph.BFloat16} {
			t.Run(fmt.Sprintf("tA=%v tB=%v a=%v b=%v C=%v %v", c.transA, c.transB, c.alpha, c.beta, c.c, dt), func(t *testing.T) {
				as, bs := []int64{m, k}, []int64{k, n}
				if c.transA {
					as = []int64{k, m}
				}
				if c.transB {
					bs = []int64{n, k}
				}
				av, bv := randomValues(r, dt, m*k), randomValues(r, dt, k*n)
				// The reference takes op(A) and op(B) row-major.
				opA, opB := make([]float64, m*k), make([]float64, k*n)
				for i := int64(0); i < m; i++ {
					for l := int64(0); l < k; l++ {
						if c.transA {
							opA[i*k+l] = av[l*m+i]
						} else {
							opA[i*k+l] = av[i*k+l]
						}
					}
				}
				for l := int64(0); l < k; l++ {
					for j := int64(0); j < n; j++ {
						if c.transB {
							opB[l*n+j] = bv[j*k+l]
						} else {
							opB[l*n+j] = bv[l*n+j]
						}
					}
				}
				_, want, mag := refMatMul([]int64{m, k}, []int64{k, n}, opA, opB)
				node := &kernels.Node{Name: "gemm", Op: "Gemm", Attrs: graph.NewAttributes(
					graph.Attribute{Name: "transA", Kind: graph.AttrInt, Int: b2i(c.transA)},
					graph.Attribute{Name: "transB", Kind: graph.AttrInt, Int: b2i(c.transB)},
					graph.Attribute{Name: "alpha", Kind: graph.AttrFloat, Float: c.alpha},
					graph.Attribute{Name: "beta", Kind: graph.AttrFloat, Float: c.beta}),
					Inputs:  []kernels.Value{{DType: dt, Shape: as}, {DType: dt, Shape: bs}},
					Outputs: []kernels.Value{{DType: dt, Shape: []int64{m, n}}}}
				in := []kernels.Tensor{upload(t, b, s, dt, as, av), upload(t, b, s, dt, bs, bv)}
				for i := range want {
					want[i] *= float64(c.alpha)
					mag[i] *= math.Abs(float64(c.alpha))
				}
				if c.c != nil {
					cv := randomValues(r, dt, gemmNumel(c.c))
					node.Inputs = append(node.Inputs, kernels.Value{DType: dt, Shape: c.c})
					in = append(in, upload(t, b, s, dt, c.c, cv))
					for i := int64(0); i < m; i++ {
						for j := int64(0); j < n; j++ {
							var x float64
							switch len(c.c) {
							case 0:
								x = cv[0]
							case 1:
								x = cv[j]
							default:
								x = cv[i*c.c[1]+j%c.c[1]]
							}
							want[i*n+j] += float64(c.beta) * x
							mag[i*n+j] += math.Abs(float64(c.beta) * x)
						}
					}
				}
				inst, err := b.Registry().Select(node, b.Target())
				require.NoError(t, err)
				require.Equal(t, c.mode, inst.(*gemmInstance).c)
				y := outputTensor(t, b, s, dt, []int64{m, n})
				require.NoError(t, inst.Run(in, []kernels.Tensor{y}, workspace(t, b, inst), s))
				requireClose(t, dt, download(t, b, s, y), want, mag)
			})
		}
	}
}

func b2i(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// The Recipe is the cap offline and on the device; the algorithm's real need is within it.
func TestGemmWorkspace(t *testing.T) {
	b := testBackend(t)
	for _, c := range []struct{ m, k, n int64 }{{1, 1536, 8960}, {2048, 1536, 2048}, {64, 16384, 64}} {
		node := &kernels.Node{Name: "mm", Op: "MatMul",
			Inputs:  []kernels.Value{{DType: graph.Float32, Shape: []int64{c.m, c.k}}, {DType: graph.Float32, Shape: []int64{c.k, c.n}}},
			Outputs: []kernels.Value{{DType: graph.Float32, Shape: []int64{c.m, c.n}}}}
		inst, err := b.Registry().Select(node, b.Target())
		require.NoError(t, err)
		offline, err := b.Registry().Select(node, kernels.KnownGPUs["h200"])
		require.NoError(t, err)
		r, err := inst.Recipe().Size()
		require.NoError(t, err)
		ro, _ := offline.Recipe().Size()
		require.Equal(t, ro, r)
		need, err := inst.(WorkspaceMeasurer).MeasureWorkspace(b)
		require.NoError(t, err)
		require.LessOrEqual(t, need, r)
		t.Logf("MatMul %dx%dx%d fp32: W = R = %d, C (algorithm's need) = %d", c.m, c.k, c.n, r, need)
	}
}

// A run only enqueues, and allocates nothing on the Go heap: a program of our kernels (Add,
// Softmax), gemv and cuBLASLt. (Eager decoding made one heap allocation per node and run.)
func TestRunsAllocateNothing(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	r := rand.New(rand.NewPCG(7, 8))
	bf := graph.BFloat16
	for _, c := range []struct {
		name string
		node *kernels.Node
	}{
		{"Add", &kernels.Node{Name: "add", Op: "Add", Inputs: []kernels.Value{{DType: bf, Shape: []int64{4, 64}}, {DType: bf, Shape: []int64{64}}},
			Outputs: []kernels.Value{{DType: bf, Shape: []int64{4, 64}}}}},
		{"Softmax", &kernels.Node{Name: "sm", Op: "Softmax", Inputs: []kernels.Value{{DType: bf, Shape: []int64{4, 64}}},
			Outputs: []kernels.Value{{DType: bf, Shape: []int64{4, 64}}}}},
		{"gemv-2", matmulNode(bf, []int64{2, 1536}, []int64{1536, 256}, []int64{2, 256})},
		{"cublaslt-2", matmulNode(graph.Float32, []int64{2, 64}, []int64{64, 32}, []int64{2, 32})},
		{"cublaslt-16", matmulNode(bf, []int64{16, 64}, []int64{64, 32}, []int64{16, 32})},
	} {
		t.Run(c.name, func(t *testing.T) {
			inst, err := b.Registry().Select(c.node, b.Target())
			require.NoError(t, err)
			if c.node.Op == "MatMul" {
				require.True(t, strings.HasPrefix(c.name, inst.Tactic()), "%s runs as %s", c.name, inst.Tactic())
			}
			var in []kernels.Tensor
			for _, v := range c.node.Inputs {
				in = append(in, upload(t, b, s, v.DType, v.Shape, randomValues(r, v.DType, gemmNumel(v.Shape))))
			}
			out := []kernels.Tensor{outputTensor(t, b, s, c.node.Outputs[0].DType, c.node.Outputs[0].Shape)}
			ws := workspace(t, b, inst)
			require.NoError(t, inst.Run(in, out, ws, s)) // first use: function lookups, plans
			allocs := testing.AllocsPerRun(20, func() {
				if err := inst.Run(in, out, ws, s); err != nil {
					t.Fatal(err)
				}
			})
			require.NoError(t, b.dev.SynchronizeStream(s))
			require.Zero(t, allocs, "Go heap allocations per run of %s (%s)", c.name, inst.Tactic())
		})
	}
}
