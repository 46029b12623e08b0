package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// gatedNode is a GatedMatMul of A (shape a) against two [k, n] weights.
func gatedNode(dt graph.DType, a []int64, k, n int64, weights bool) *kernels.Node {
	out := append(append([]int64(nil), a[:len(a)-1]...), n)
	return &kernels.Node{Name: "gm", Op: "GatedMatMul", Domain: kernels.DomainCarve,
		Inputs: []kernels.Value{{DType: dt, Shape: a}, {DType: dt, Shape: []int64{k, n}, Initializer: weights},
			{DType: dt, Shape: []int64{k, n}, Initializer: weights}},
		Outputs: []kernels.Value{{DType: dt, Shape: out}}}
}

// Selection needs no GPU: one row of a 16-bit type on sm_90+ is one carve_gemv_swiglu launch
// with no workspace, reading the weights early only when both are weights; everything else is
// two cuBLASLt products into workspace and the SwiGLU kernel.
func TestGatedSelect(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	for _, weights := range []bool{false, true} {
		n := gatedNode(graph.BFloat16, []int64{1, 1, 1536}, 1536, 8960, weights)
		inst, err := reg.Select(n, h200)
		require.NoError(t, err)
		require.Equal(t, "gemv", inst.Tactic())
		require.Empty(t, inst.Recipe().Parts)
		l := soleLaunch(t, reg, n, "gemv")
		require.Equal(t, "carve_gemv_swiglu_bf16_m1_s2", l.kernel)
		require.Equal(t, Dim3{X: 2, Y: 70, Z: 1}, l.grid) // 8960 columns, 128 a block (32 column threads, half a weight)
		require.Equal(t, uint64(boolInt(weights)), l.args[len(l.args)-1].bits, "early")
		require.True(t, inst.(*instance).prog[0].dependent)
	}
	// N not a multiple of 8: the unaligned kernel only
	require.Equal(t, "carve_gemv_swiglu_f16_m1_s2_u", soleLaunch(t, reg, gatedNode(graph.Float16, []int64{1, 100}, 100, 203, true), "odd N").kernel)

	for _, c := range []struct {
		name string
		dt   graph.DType
		a    []int64
		t    kernels.Target
	}{
		{"three rows", graph.BFloat16, []int64{3, 1, 1536}, h200},
		{"float32", graph.Float32, []int64{1, 1536}, h200},
		{"sm_80", graph.BFloat16, []int64{1, 1536}, kernels.KnownGPUs["a100"]},
	} {
		n := gatedNode(c.dt, c.a, 1536, 8960, true)
		inst, err := reg.Select(n, c.t)
		require.NoError(t, err, c.name)
		require.Equal(t, "cublaslt", inst.Tactic(), c.name)
		parts := inst.Recipe().Parts
		require.Len(t, parts, 3, c.name)
		rows := numel(c.a) / 1536
		require.Equal(t, []string{"gate", "up", "cublas"}, []string{parts[0].Name, parts[1].Name, parts[2].Name}, c.name)
		require.Equal(t, rows*8960*int64(c.dt.Size()), parts[0].Size, c.name)
		require.Equal(t, parts[0].Size, parts[1].Size, c.name)
		require.Equal(t, gemmWorkspace(c.t), parts[2].Size, c.name)
		require.Equal(t, "carve_swiglu_"+dtName(c.dt), soleLaunchOn(t, reg, n, c.t, c.name).kernel, c.name)
	}
}

// Operands that do not make a GatedMatMul are errors that say why.
func TestGatedSelectErrors(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	bad := func(f func(n *kernels.Node)) *kernels.Node {
		n := gatedNode(graph.BFloat16, []int64{2, 64}, 64, 32, true)
		f(n)
		return n
	}
	for name, n := range map[string]*kernels.Node{
		"weights differ": bad(func(n *kernels.Node) { n.Inputs[2].Shape = []int64{64, 16} }),
		"K differs":      bad(func(n *kernels.Node) { n.Inputs[0].Shape = []int64{2, 63} }),
		"dtypes differ":  bad(func(n *kernels.Node) { n.Inputs[1].DType = graph.Float16 }),
		"3-D weight":     bad(func(n *kernels.Node) { n.Inputs[1].Shape = []int64{1, 64, 32} }),
		"wrong output":   bad(func(n *kernels.Node) { n.Outputs[0].Shape = []int64{2, 64} }),
		"integers":       gatedNode(graph.Int32, []int64{2, 64}, 64, 32, true),
	} {
		_, err := reg.Select(n, h200)
		require.Error(t, err, name)
	}
}

// The bound covers every selection in the range: the cublaslt parts at the most rows.
func TestGatedBound(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	k, err := reg.Lookup(kernels.BackendCUDA, kernels.Key(kernels.DomainCarve, "GatedMatMul"))
	require.NoError(t, err)
	dt := graph.BFloat16
	r := &kernels.NodeRange{Name: "gm", Op: "GatedMatMul", Domain: kernels.DomainCarve,
		Inputs: []kernels.ValueRange{{DType: dt, Dims: []kernels.DimRange{{Lo: 1, Hi: 8}, {Lo: 1, Hi: 64}, kernels.Fixed(1536)}},
			{DType: dt, Dims: []kernels.DimRange{kernels.Fixed(1536), kernels.Fixed(8960)}},
			{DType: dt, Dims: []kernels.DimRange{kernels.Fixed(1536), kernels.Fixed(8960)}}},
		Outputs: []kernels.ValueRange{{DType: dt, Dims: []kernels.DimRange{{Lo: 1, Hi: 8}, {Lo: 1, Hi: 64}, kernels.Fixed(8960)}}}}
	bd, err := k.Bound(r, h200)
	require.NoError(t, err)
	for _, bs := range [][2]int64{{1, 1}, {1, 64}, {8, 1}, {3, 7}, {8, 64}} {
		inst, err := k.Select(gatedNode(dt, []int64{bs[0], bs[1], 1536}, 1536, 8960, true), h200)
		require.NoError(t, err)
		size, err := inst.Recipe().Size()
		require.NoError(t, err)
		require.LessOrEqual(t, size, bd.Bytes, "batch %d seq %d", bs[0], bs[1])
	}
}
