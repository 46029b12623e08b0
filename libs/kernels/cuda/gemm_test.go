package cuda

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

func matmulNode(dt graph.DType, a, b, out []int64) *kernels.Node {
	return &kernels.Node{Name: "mm", Op: "MatMul",
		Inputs:  []kernels.Value{{DType: dt, Shape: a}, {DType: dt, Shape: b}},
		Outputs: []kernels.Value{{DType: dt, Shape: out}}}
}

// Selection needs no GPU: the estimator plans CUDA GEMMs on any machine.
func TestMatMulSelect(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	h200 := kernels.KnownGPUs["h200"]
	for _, c := range []struct {
		a, b, out []int64
		mode      gemmMode
		m, batch  int64
		sa, sb    int64
		tactic    string
	}{
		{[]int64{7, 33}, []int64{33, 5}, []int64{7, 5}, gemmSingle, 7, 1, 0, 0, gemmTactic},
		{[]int64{33}, []int64{33, 5}, []int64{5}, gemmSingle, 1, 1, 0, 0, gemmTactic},
		{[]int64{1, 1536}, []int64{1536, 256}, []int64{1, 256}, gemmSingle, 1, 1, 0, 0, gemvTactic},
		{[]int64{3, 2, 7, 33}, []int64{33, 5}, []int64{3, 2, 7, 5}, gemmSingle, 42, 1, 0, 0, gemmTactic},
		{[]int64{3, 7, 33}, []int64{3, 33, 5}, []int64{3, 7, 5}, gemmStrided, 7, 3, 7 * 33, 33 * 5, gemmTactic},
		{[]int64{7, 33}, []int64{4, 33, 5}, []int64{4, 7, 5}, gemmStrided, 7, 4, 0, 33 * 5, gemmTactic},
		{[]int64{2, 1, 7, 33}, []int64{1, 3, 33, 5}, []int64{2, 3, 7, 5}, gemmLoop, 7, 6, 0, 0, gemmTactic},
	} {
		t.Run(fmt.Sprint(c.a, c.b), func(t *testing.T) {
			inst, err := reg.Select(matmulNode(graph.BFloat16, c.a, c.b, c.out), h200)
			require.NoError(t, err)
			g := inst.(*gemmInstance)
			require.Equal(t, c.mode, g.mode)
			require.Equal(t, c.m, g.m)
			require.Equal(t, c.batch, g.batch)
			require.Equal(t, c.sa, g.sa)
			require.Equal(t, c.sb, g.sb)
			require.Equal(t, c.tactic, inst.Tactic())
		})
	}
	bad := []*kernels.Node{
		matmulNode(graph.Int64, []int64{2, 3}, []int64{3, 4}, []int64{2, 4}),
		matmulNode(graph.Float32, []int64{2, 3}, []int64{4, 4}, []int64{2, 4}),
		matmulNode(graph.Float32, []int64{2, 3}, []int64{3, 4}, []int64{2, 5}),
		matmulNode(graph.Float32, []int64{2, 2, 3}, []int64{3, 3, 4}, []int64{3, 2, 4}),
	}
	for _, n := range bad {
		_, err := reg.Select(n, h200)
		var ne *kernels.NodeError
		require.ErrorAs(t, err, &ne, "%v", n.Inputs)
	}
}

// The loop mode's strides follow each operand's own layout, 0 where it broadcasts.
func TestGemmBatchStrides(t *testing.T) {
	require.Equal(t, []int64{0, 10}, gemmBatchStrides([]int64{1, 3}, []int64{2, 3}, 10))
	require.Equal(t, []int64{10, 0}, gemmBatchStrides([]int64{2, 1}, []int64{2, 3}, 10))
	require.Equal(t, []int64{0, 30, 10}, gemmBatchStrides([]int64{4, 3}, []int64{5, 4, 3}, 10))
}

// R <= W over shape families, and both are the architecture's cap.
func TestGemmBoundCoversRecipe(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	for name, tg := range map[string]kernels.Target{"h200": kernels.KnownGPUs["h200"], "a100": kernels.KnownGPUs["a100"]} {
		want := GemmWorkspaceHopper
		if name == "a100" {
			want = GemmWorkspaceOlder
		}
		nr := &kernels.NodeRange{Name: "mm", Op: "MatMul", Inputs: []kernels.ValueRange{
			{DType: graph.Float16, Dims: []kernels.DimRange{{Lo: 1, Hi: 8}, {Lo: 1, Hi: 8192}, kernels.Fixed(1536)}},
			{DType: graph.Float16, Dims: []kernels.DimRange{kernels.Fixed(1536), kernels.Fixed(8960)}}}}
		w, err := reg.Bound(nr, tg)
		require.NoError(t, err)
		require.Equal(t, kernels.Bound{Bytes: want, Tactic: gemmTactic}, w)
		for _, b := range []int64{1, 8} {
			for _, m := range []int64{1, 511, 8192} {
				inst, err := reg.Select(matmulNode(graph.Float16, []int64{b, m, 1536}, []int64{1536, 8960}, []int64{b, m, 8960}), tg)
				require.NoError(t, err)
				r, err := inst.Recipe().Size()
				require.NoError(t, err)
				require.LessOrEqual(t, r, w.Bytes)
				if inst.Tactic() == gemmTactic {
					require.Equal(t, want, r)
				} else {
					require.Zero(t, r) // gemv carves nothing
				}
			}
		}
	}
}

func TestGemmSelect(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	attrs := graph.NewAttributes(graph.Attribute{Name: "transB", Kind: graph.AttrInt, Int: 1},
		graph.Attribute{Name: "beta", Kind: graph.AttrFloat, Float: 0.5})
	for _, c := range []struct {
		c    []int64
		mode cMode
		sm   int64
		sn   int64
		ok   bool
	}{
		{[]int64{4, 6}, cFull, 0, 0, true},
		{[]int64{6}, cBroadcast, 0, 1, true},
		{[]int64{4, 1}, cBroadcast, 1, 0, true},
		{[]int64{}, cBroadcast, 0, 0, true},
		{[]int64{5}, 0, 0, 0, false},
	} {
		n := &kernels.Node{Name: "g", Op: "Gemm", Attrs: attrs,
			Inputs: []kernels.Value{{DType: graph.Float32, Shape: []int64{4, 3}}, {DType: graph.Float32, Shape: []int64{6, 3}},
				{DType: graph.Float32, Shape: c.c}},
			Outputs: []kernels.Value{{DType: graph.Float32, Shape: []int64{4, 6}}}}
		inst, err := reg.Select(n, kernels.KnownGPUs["h200"])
		if !c.ok {
			require.Error(t, err, "C %v", c.c)
			continue
		}
		require.NoError(t, err, "C %v", c.c)
		g := inst.(*gemmInstance)
		require.Equal(t, []any{c.mode, c.sm, c.sn, true, int64(3)}, []any{g.c, g.csm, g.csn, g.transB, g.k}, "C %v", c.c)
	}
}

// With beta 1, a C that is a row of N is a bias for cuBLASLt's epilogue, except at M = 1, where
// it is the whole of C.
func TestGemmSelectBias(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	for _, c := range []struct {
		m    int64
		c    []int64
		beta float32
		mode cMode
	}{
		{4, []int64{6}, 1, cBias},
		{4, []int64{1, 6}, 1, cBias},
		{1, []int64{6}, 1, cFull},
		{4, []int64{6}, 2, cBroadcast},
		{4, []int64{4, 1}, 1, cBroadcast},
	} {
		n := &kernels.Node{Name: "g", Op: "Gemm", Attrs: graph.NewAttributes(graph.Attribute{Name: "beta", Kind: graph.AttrFloat, Float: c.beta}),
			Inputs: []kernels.Value{{DType: graph.BFloat16, Shape: []int64{c.m, 3}}, {DType: graph.BFloat16, Shape: []int64{3, 6}},
				{DType: graph.BFloat16, Shape: c.c}},
			Outputs: []kernels.Value{{DType: graph.BFloat16, Shape: []int64{c.m, 6}}}}
		inst, err := reg.Select(n, kernels.KnownGPUs["h200"])
		require.NoError(t, err, "C %v", c.c)
		g := inst.(*gemmInstance)
		require.Equal(t, c.mode, g.c, "M %d C %v beta %v", c.m, c.c, c.beta)
		if c.mode == cBias { // the fallback reads C as a broadcast row
			require.Equal(t, []int64{0, 1}, []int64{g.csm, g.csn})
		}
	}
}

func TestArchMajor(t *testing.T) {
	for arch, want := range map[string]int{"sm_90": 9, "sm_90a": 9, "sm_80": 8, "sm_100": 10, "sm_120f": 12} {
		got, ok := archMajor(arch)
		require.True(t, ok, arch)
		require.Equal(t, want, got, arch)
	}
	_, ok := archMajor("gfx90a")
	require.False(t, ok)
}
