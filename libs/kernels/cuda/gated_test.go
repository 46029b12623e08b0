package cuda

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
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
// the gate product into the output, the up product into workspace and the SwiGLU kernel in place.
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
		require.Len(t, parts, 2, c.name)
		rows := numel(c.a) / 1536
		require.Equal(t, []string{"up", "cublas"}, []string{parts[0].Name, parts[1].Name}, c.name)
		require.Equal(t, rows*8960*int64(c.dt.Size()), parts[0].Size, c.name)
		require.Equal(t, gemmWorkspace(c.t), parts[1].Size, c.name)
		require.Equal(t, "carve_swiglu_"+dtName(c.dt), soleLaunchOn(t, reg, n, c.t, c.name).kernel, c.name)
	}
}

// The cublaslt tactic carves the up product a chunk of rows at a time: the gate product covers
// every row of the output, the up products cover the rows once, in order, each followed by the
// SwiGLU over its own rows of the output, in place.
func TestGatedChunks(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	const k, n = 1536, 8960
	for _, c := range []struct {
		m, rows int64 // rows of A, rows a chunk
		chunks  int
	}{{3, 3, 1}, {512, 512, 1}, {513, 512, 2}, {2048, 512, 4}, {2100, 528, 4}, {8192, 2048, 4}} {
		name := fmt.Sprintf("M %d", c.m)
		nd := gatedNode(graph.BFloat16, []int64{1, c.m, k}, k, n, true)
		inst, err := reg.Select(nd, h200)
		require.NoError(t, err, name)
		require.Equal(t, c.rows*n*2, inst.Recipe().Parts[0].Size, name)
		prog := inst.(*instance).prog
		require.Len(t, prog, 1+2*c.chunks, name)
		gate := prog[0].call.(*partProduct)
		require.Equal(t, [3]int64{c.m, k, n}, [3]int64{gate.m, gate.k, gate.n}, name)
		require.Equal(t, outp(0), gate.dst, name)
		require.Equal(t, 1, gate.weight, name)
		next := int64(0)
		for i := 1; i < len(prog); i += 2 {
			up := prog[i].call.(*partProduct)
			require.Equal(t, next, up.row, name)
			require.LessOrEqual(t, up.m, c.rows, name)
			require.Equal(t, wsp(0), up.dst, name)
			require.Equal(t, 2, up.weight, name)
			sw := prog[i+1]
			y := outp(0).at(up.row * n * 2)
			require.Equal(t, []param{y, y, wsp(0), i64p(up.m * n)}, sw.params[:4], name)
			next += up.m
		}
		require.Equal(t, c.m, next, name)
	}
	prev := int64(0)
	for m := int64(1); m <= 20000; m++ {
		r := gatedChunkRows(m)
		require.GreaterOrEqual(t, r, prev, "gatedChunkRows falls at M %d", m)
		require.LessOrEqual(t, r, m)
		prev = r
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
		Inputs: []kernels.ValueRange{{DType: dt, Dims: []kernels.DimRange{{Lo: 1, Hi: 8}, {Lo: 1, Hi: 4096}, kernels.Fixed(1536)}},
			{DType: dt, Dims: []kernels.DimRange{kernels.Fixed(1536), kernels.Fixed(8960)}},
			{DType: dt, Dims: []kernels.DimRange{kernels.Fixed(1536), kernels.Fixed(8960)}}},
		Outputs: []kernels.ValueRange{{DType: dt, Dims: []kernels.DimRange{{Lo: 1, Hi: 8}, {Lo: 1, Hi: 4096}, kernels.Fixed(8960)}}}}
	bd, err := k.Bound(r, h200)
	require.NoError(t, err)
	for _, bs := range [][2]int64{{1, 1}, {1, 64}, {8, 1}, {3, 7}, {8, 64}, {1, 513}, {5, 1000}, {8, 4096}} {
		inst, err := k.Select(gatedNode(dt, []int64{bs[0], bs[1], 1536}, 1536, 8960, true), h200)
		require.NoError(t, err)
		size, err := inst.Recipe().Size()
		require.NoError(t, err)
		require.LessOrEqual(t, size, bd.Bytes, "batch %d seq %d", bs[0], bs[1])
	}
}

// The cublaslt tactic's "cublas" part is a cap (WorkspaceMeasurer): the instance runs with it
// carved down to alloc.DefaultPartAlign, as the tight plan carves it, but not with less of its
// "up" part than its Recipe says. The gemv tactic has no part to measure.
func TestGatedTightWorkspace(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	gemv, err := reg.Select(gatedNode(graph.BFloat16, []int64{1, 1536}, 1536, 8960, true), h200)
	require.NoError(t, err)
	require.Equal(t, -1, gemv.(WorkspaceMeasurer).MeasuredPart())

	n := gatedNode(graph.BFloat16, []int64{1, 2048, 1536}, 1536, 8960, true)
	inst, err := reg.Select(n, h200)
	require.NoError(t, err)
	require.Equal(t, 1, inst.(WorkspaceMeasurer).MeasuredPart())
	next := alloc.Ptr(1 << 40)
	in, out := fakeTensors(t, n.Inputs, &next), fakeTensors(t, n.Outputs, &next)
	run := func(sizes ...int64) error {
		r := inst.Recipe()
		r.Parts = slices.Clone(r.Parts)
		for i, s := range sizes {
			r.Parts[i].Size = s
		}
		size, err := r.Size()
		require.NoError(t, err)
		ws, err := alloc.Carve(alloc.Region{Ptr: next, Size: size}, r)
		require.NoError(t, err)
		checks := *inst.(*instance)
		checks.prog = nil // the checks only: the addresses are not a device's
		return checks.run(in, out, ws, 0, nil)
	}
	up := inst.Recipe().Parts[0].Size
	var we *kernels.WorkspaceError
	for _, cublas := range []int64{gemmWorkspace(h200), 1 << 20, alloc.DefaultPartAlign} {
		require.NoError(t, run(up, cublas), "cublas part of %d bytes", cublas)
	}
	require.ErrorAs(t, run(up-256, alloc.DefaultPartAlign), &we)
	require.Equal(t, "up", we.Part)
	require.ErrorAs(t, run(up, 0), &we)
	require.Equal(t, "cublas", we.Part)
}
