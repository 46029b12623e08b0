package cpu

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// matmulRef is numpy matmul in float64.
func matmulRef(a, b kernels.Tensor) []float32 {
	m, k, n, aB, bB, out, err := matmulDims(a.Shape, b.Shape)
	if err != nil {
		panic(err)
	}
	batch, _ := kernels.BroadcastShapes(aB, bB)
	nb := int(mustNumel(batch))
	res := make([]float32, mustNumel(out))
	for bi := 0; bi < nb; bi++ {
		ai := bcastIndexRef(batch, aB, bi)
		bj := bcastIndexRef(batch, bB, bi)
		for i := 0; i < int(m); i++ {
			for j := 0; j < int(n); j++ {
				var s float64
				for l := 0; l < int(k); l++ {
					s += float64(a.Float32s()[(ai*int(m)+i)*int(k)+l]) * float64(b.Float32s()[(bj*int(k)+l)*int(n)+j])
				}
				res[(bi*int(m)+i)*int(n)+j] = float32(s)
			}
		}
	}
	return res
}

func TestMatMul(t *testing.T) {
	r := rng(t, 5)
	for _, tc := range []struct {
		a, b   []int64
		tactic string
	}{
		{[]int64{3, 4}, []int64{4, 5}, "gemm"},
		{[]int64{4}, []int64{4, 5}, "gemm"},
		{[]int64{3, 4}, []int64{4}, "gemm"},
		{[]int64{4}, []int64{4}, "gemm"},
		{[]int64{2, 3, 4}, []int64{4, 5}, "gemm"},    // folded batches
		{[]int64{2, 3, 4}, []int64{2, 4, 5}, "gemm"}, // batched
		{[]int64{2, 1, 3, 4}, []int64{5, 4, 6}, "gemm"},
		{[]int64{1, 3, 4}, []int64{2, 4, 5}, "gemm"},          // A broadcast over B's batch
		{[]int64{2, 1, 3, 3, 4}, []int64{5, 1, 4, 6}, "gemm"}, // both broadcast, batch [2 5 3]
		{[]int64{0, 4}, []int64{4, 5}, "gemm"},
		{[]int64{3, 0}, []int64{0, 5}, "gemm"},
		{[]int64{130, 70}, []int64{70, 129}, "gemm"}, // parallel over tiles, with edge panels
		{[]int64{2, 1500}, []int64{1500, 3}, "gemm"}, // K in several slabs
		{[]int64{3, 2, 1100}, []int64{1100, 70}, "gemm"},
		{[]int64{2, 3, 1024}, []int64{2, 1024, 5}, "gemm"},
		{[]int64{1, 4100}, []int64{4100, 1}, "gemm"},
		{[]int64{40, 3, 16}, []int64{40, 16, 9}, "gemm"},   // batches side by side
		{[]int64{2, 300, 200}, []int64{200, 1100}, "gemm"}, // B packed
	} {
		t.Run(fmt.Sprintf("%v x %v", tc.a, tc.b), func(t *testing.T) {
			a, b := randF32(r, tc.a...), randF32(r, tc.b...)
			_, _, _, _, _, out, err := matmulDims(tc.a, tc.b)
			require.NoError(t, err)
			n := node("MatMul", graph.Attributes{}, []kernels.Tensor{a, b}, kernels.Value{DType: graph.Float32, Shape: out})
			got, inst := run(t, n, a, b)
			require.Equal(t, tc.tactic, inst.Tactic())
			closeTo(t, matmulRef(a, b), got[0].Float32s(), 1e-4)
			if size, _ := inst.Recipe().Size(); size > 0 {
				requireRefusesSmallWorkspace(t, n, a, b)
			}
		})
	}
}

// Selecting a MatMul costs the same whatever its batch count: planning a huge binding must
// not build per-batch tables.
func TestMatMulSelectionIndependentOfBatch(t *testing.T) {
	const batches = 1 << 24
	a := kernels.Value{DType: graph.Float32, Shape: []int64{batches, 12, 1, 64}}
	b := kernels.Value{DType: graph.Float32, Shape: []int64{batches, 12, 64, 1}}
	n := &kernels.Node{Name: "n", Op: "MatMul", Inputs: []kernels.Value{a, b},
		Outputs: []kernels.Value{{DType: graph.Float32, Shape: []int64{batches, 12, 1, 1}}}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := matmulOps()[0].Select(n, kernels.CPU(2))
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<16), "selection allocated per batch")
}

func TestMatMulFloat16AndInt(t *testing.T) {
	r := rng(t, 6)
	a, b := randF32(r, 2, 3, 8), randF32(r, 8, 5)
	a16, b16 := toF16(a), toF16(b)
	n := node("MatMul", graph.Attributes{}, []kernels.Tensor{a16, b16}, kernels.Value{DType: graph.Float16, Shape: []int64{2, 3, 5}})
	got, inst := run(t, n, a16, b16)
	require.Equal(t, "f16-convert", inst.Tactic())
	want := matmulRef(f32(a.Shape, fromF16(a16)), f32(b.Shape, fromF16(b16)))
	closeTo(t, want, fromF16(got[0]), 2e-3)
	requireRefusesSmallWorkspace(t, n, a16, b16)

	ai := i64([]int64{2, 2}, []int64{1, 2, 3, 4})
	bi := i64([]int64{2}, []int64{5, -1})
	o := out1(t, node("MatMul", graph.Attributes{}, []kernels.Tensor{ai, bi}, kernels.Value{DType: graph.Int64, Shape: []int64{2}}), ai, bi)
	require.Equal(t, []int64{3, 11}, o.Int64s())
}

func TestGemm(t *testing.T) {
	r := rng(t, 7)
	for _, tc := range []struct {
		transA, transB int
		c              []int64
		alpha, beta    float32
	}{
		{0, 0, nil, 1, 1}, {1, 0, []int64{5}, 0.5, 2}, {0, 1, []int64{5}, 0.5, 1}, {1, 0, []int64{1, 5}, 1, 1}, {0, 1, []int64{3, 1}, 1, 1}, {1, 1, []int64{3, 5}, 2, 0}, {0, 0, []int64{}, 1, 1},
	} {
		aS, bS := []int64{3, 4}, []int64{4, 5}
		if tc.transA == 1 {
			aS = []int64{4, 3}
		}
		if tc.transB == 1 {
			bS = []int64{5, 4}
		}
		a, b := randF32(r, aS...), randF32(r, bS...)
		in := []kernels.Tensor{a, b}
		var c kernels.Tensor
		if tc.c != nil {
			c = randF32(r, tc.c...)
			in = append(in, c)
		}
		n := node("Gemm", kernels.Attrs("transA", tc.transA, "transB", tc.transB, "alpha", tc.alpha, "beta", tc.beta), in, kernels.Value{DType: graph.Float32, Shape: []int64{3, 5}})
		got := out1(t, n, in...)
		at := func(i, l int) float32 {
			if tc.transA == 1 {
				return a.Float32s()[l*3+i]
			}
			return a.Float32s()[i*4+l]
		}
		bt := func(l, j int) float32 {
			if tc.transB == 1 {
				return b.Float32s()[j*4+l]
			}
			return b.Float32s()[l*5+j]
		}
		want := make([]float32, 15)
		for i := 0; i < 3; i++ {
			for j := 0; j < 5; j++ {
				var s float32
				for l := 0; l < 4; l++ {
					s += at(i, l) * bt(l, j)
				}
				s *= tc.alpha
				if tc.c != nil {
					s += tc.beta * c.Float32s()[bcastIndexRef([]int64{3, 5}, tc.c, i*5+j)]
				}
				want[i*5+j] = s
			}
		}
		closeTo(t, want, got.Float32s(), 1e-5, tc)
	}
}

func TestMatMulDoesNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, shapes := range [][2][]int64{{{8, 16}, {16, 8}}, {{2, 2000}, {2000, 3}}, {{4, 3, 8}, {4, 8, 5}}} {
		a, b := randF32(r, shapes[0]...), randF32(r, shapes[1]...)
		_, _, _, _, _, outShape, _ := matmulDims(shapes[0], shapes[1])
		n := node("MatMul", graph.Attributes{}, []kernels.Tensor{a, b}, kernels.Value{DType: graph.Float32, Shape: outShape})
		requireNoAllocs(t, n, a, b)
	}
}

// TestGemm16 is Gemm of 16-bit operands in the rewrite's form, A*B plus an optional bias row,
// against float64; the bound covers the recipe; other forms are refused.
func TestGemm16(t *testing.T) {
	r := rng(t, 16)
	const m, k, n = 5, 37, 6
	for _, dt := range []graph.DType{graph.Float16, graph.BFloat16} {
		for _, cs := range [][]int64{nil, {n}, {1, n}} {
			a := tensorOf(dt, []int64{m, k}, float64sOf(randF32(r, m, k)))
			b := tensorOf(dt, []int64{k, n}, float64sOf(randF32(r, k, n)))
			in := []kernels.Tensor{a, b}
			if cs != nil {
				in = append(in, tensorOf(dt, cs, float64sOf(randF32(r, cs...))))
			}
			y := kernels.Value{DType: dt, Shape: []int64{m, n}}
			nd := node("Gemm", graph.Attributes{}, in, y)
			got := float64sOf(out1(t, nd, in...))
			av, bv := float64sOf(a), float64sOf(b)
			want := make([]float64, m*n)
			for i := range m {
				for j := range n {
					for l := range k {
						want[i*n+j] += av[i*k+l] * bv[l*n+j]
					}
					if cs != nil {
						want[i*n+j] += float64sOf(in[2])[j]
					}
				}
			}
			closeTo64(t, want, got, 3e-2, fmt.Sprintf("%v C %v", dt, cs))
			inst, err := registry.Select(nd, dev)
			require.NoError(t, err)
			size, err := inst.Recipe().Size()
			require.NoError(t, err)
			w, err := registry.Bound(kernels.RangeOf(nd), dev)
			require.NoError(t, err)
			require.LessOrEqual(t, size, w.Bytes)
		}
	}
	x := kernels.Value{DType: graph.BFloat16, Shape: []int64{4, 4}}
	_, err := registry.Select(&kernels.Node{Op: "Gemm", Attrs: kernels.Attrs("transB", int64(1)), Inputs: []kernels.Value{x, x}, Outputs: []kernels.Value{x}}, dev)
	require.ErrorContains(t, err, "only A*B plus an optional bias row")
}
