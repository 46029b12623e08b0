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

// gemmNode is a Gemm node (alpha 1) with C of shape c (nil: none).
func gemmNode(dt graph.DType, transA, transB bool, beta float32, a, b, c, out []int64) *kernels.Node {
	return gemmNodeAlpha(dt, transA, transB, 1, beta, a, b, c, out)
}

func gemmNodeAlpha(dt graph.DType, transA, transB bool, alpha, beta float32, a, b, c, out []int64) *kernels.Node {
	n := &kernels.Node{Name: "g", Op: "Gemm", Attrs: graph.NewAttributes(
		graph.Attribute{Name: "transA", Kind: graph.AttrInt, Int: b2iSel(transA)},
		graph.Attribute{Name: "transB", Kind: graph.AttrInt, Int: b2iSel(transB)},
		graph.Attribute{Name: "alpha", Kind: graph.AttrFloat, Float: alpha},
		graph.Attribute{Name: "beta", Kind: graph.AttrFloat, Float: beta}),
		Inputs:  []kernels.Value{{DType: dt, Shape: a}, {DType: dt, Shape: b}},
		Outputs: []kernels.Value{{DType: dt, Shape: out}}}
	if c != nil {
		n.Inputs = append(n.Inputs, kernels.Value{DType: dt, Shape: c})
	}
	return n
}

func b2iSel(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// gemvRecord runs g's gemv program with a recording launcher, B at address bAddr.
func gemvRecord(t *testing.T, g *gemmInstance, bAddr alloc.Ptr) []launchRec {
	t.Helper()
	in := []kernels.Tensor{{Addr: 1 << 40}, {Addr: bAddr}, {Addr: 3 << 40}}
	out := []kernels.Tensor{{Addr: 4 << 40}}
	var recs []launchRec
	rec := func(_ alloc.Stream, kernel string, grid, block Dim3, shared uint32, args ...Arg) error {
		recs = append(recs, launchRec{kernel: kernel, grid: grid, block: block, shared: shared, args: slices.Clone(args)})
		return nil
	}
	require.NoError(t, g.gemv.exec(1, in, out, nil, rec))
	return recs
}

// Selection picks gemv exactly where it measured faster (gemvWins) for fp16/bf16 against an
// untransposed weight on sm_90+, and plans its launch from the shapes alone.
func TestGemvSelect(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	h200, a100 := kernels.KnownGPUs["h200"], kernels.KnownGPUs["a100"]
	bf, f16, f32 := graph.BFloat16, graph.Float16, graph.Float32
	mm := matmulNode
	for _, c := range []struct {
		name   string
		node   *kernels.Node
		tg     kernels.Target
		kernel string // "" : cublaslt
		grid   Dim3
	}{
		{"down", mm(bf, []int64{1, 8960}, []int64{8960, 1536}, []int64{1, 1536}), h200, "carve_gemv_bf16_m1_s8", Dim3{8, 12, 1}},
		{"o", mm(bf, []int64{1, 1536}, []int64{1536, 1536}, []int64{1, 1536}), h200, "carve_gemv_bf16_m1_s8", Dim3{8, 12, 1}},
		{"qkv bias", gemmNode(bf, false, false, 1, []int64{1, 1536}, []int64{1536, 2048}, []int64{2048}, []int64{1, 2048}), h200, "carve_gemv_bf16_m1_s8", Dim3{8, 16, 1}},
		{"k", mm(bf, []int64{1, 1536}, []int64{1536, 256}, []int64{1, 256}), h200, "carve_gemv_bf16_m1_s8", Dim3{8, 8, 1}},
		{"k 2 rows", mm(f16, []int64{2, 1536}, []int64{1536, 256}, []int64{2, 256}), h200, "carve_gemv_f16_m2_s8", Dim3{8, 8, 1}},
		{"k batches fold", mm(bf, []int64{2, 2, 1536}, []int64{1536, 256}, []int64{2, 2, 256}), h200, "carve_gemv_bf16_m4_s8", Dim3{8, 8, 1}},
		{"1-D A", mm(bf, []int64{1536}, []int64{1536, 1536}, []int64{1536}), h200, "carve_gemv_bf16_m1_s8", Dim3{8, 12, 1}},
		{"odd N", mm(f16, []int64{1, 2000}, []int64{2000, 1001}, []int64{1, 1001}), h200, "carve_gemv_f16_m1_s8_u", Dim3{8, 8, 1}},
		{"C full", gemmNode(bf, false, false, 0.5, []int64{3, 1536}, []int64{1536, 256}, []int64{3, 256}, []int64{3, 256}), h200, "carve_gemv_bf16_m4_s8", Dim3{8, 8, 1}},
		{"gate", mm(bf, []int64{1, 1536}, []int64{1536, 8960}, []int64{1, 8960}), h200, "", Dim3{}},
		{"o 2 rows", mm(bf, []int64{2, 1536}, []int64{1536, 1536}, []int64{2, 1536}), h200, "", Dim3{}},
		{"k 5 rows", mm(bf, []int64{5, 1536}, []int64{1536, 256}, []int64{5, 256}), h200, "", Dim3{}},
		{"k 5 rows folded", mm(bf, []int64{5, 1, 1536}, []int64{1536, 256}, []int64{5, 1, 256}), h200, "", Dim3{}},
		{"small K", mm(bf, []int64{1, 64}, []int64{64, 256}, []int64{1, 256}), h200, "", Dim3{}},
		{"huge K", mm(bf, []int64{1, 1 << 20}, []int64{1 << 20, 256}, []int64{1, 256}), h200, "", Dim3{}},
		{"narrow N", mm(bf, []int64{1, 1536}, []int64{1536, 128}, []int64{1, 128}), h200, "", Dim3{}},
		{"float32", mm(f32, []int64{1, 1536}, []int64{1536, 256}, []int64{1, 256}), h200, "", Dim3{}},
		{"sm_80", mm(bf, []int64{1, 1536}, []int64{1536, 256}, []int64{1, 256}), a100, "", Dim3{}},
		{"strided batches", mm(bf, []int64{2, 1, 1536}, []int64{2, 1536, 256}, []int64{2, 1, 256}), h200, "", Dim3{}},
		{"transB", gemmNode(bf, false, true, 1, []int64{1, 1536}, []int64{256, 1536}, nil, []int64{1, 256}), h200, "", Dim3{}},
		{"transA", gemmNode(bf, true, false, 1, []int64{1536, 1}, []int64{1536, 256}, nil, []int64{1, 256}), h200, "", Dim3{}},
		{"K = 0", mm(bf, []int64{1, 0}, []int64{0, 256}, []int64{1, 256}), h200, "", Dim3{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			inst, err := reg.Select(c.node, c.tg)
			require.NoError(t, err)
			g := inst.(*gemmInstance)
			if c.kernel == "" {
				require.Equal(t, gemmTactic, inst.Tactic())
				require.Nil(t, g.gemv)
				return
			}
			require.Equal(t, gemvTactic, inst.Tactic())
			require.Empty(t, inst.Recipe().Parts)
			recs := gemvRecord(t, g, 2<<40)
			require.Len(t, recs, 1)
			require.Equal(t, c.kernel, recs[0].kernel)
			require.Equal(t, c.grid, recs[0].grid)
			require.Equal(t, Dim3{X: gemvThreads, Y: 1, Z: 1}, recs[0].block)
			require.LessOrEqual(t, int64(recs[0].shared), c.tg.SharedMemPerBlock)
			if len(c.node.Inputs) == 3 {
				require.Equal(t, uint64(3<<40), recs[0].args[3].bits, "C")
			} else {
				require.Zero(t, recs[0].args[3].bits, "no C")
			}
		})
	}
}

// A B that is not 16-byte aligned at run time takes the kernel with element loads.
func TestGemvUnalignedB(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	inst, err := reg.Select(matmulNode(graph.BFloat16, []int64{1, 1536}, []int64{1536, 256}, []int64{1, 256}), kernels.KnownGPUs["h200"])
	require.NoError(t, err)
	g := inst.(*gemmInstance)
	require.Equal(t, "carve_gemv_bf16_m1_s8", gemvRecord(t, g, 2<<40)[0].kernel)
	require.Equal(t, "carve_gemv_bf16_m1_s8_u", gemvRecord(t, g, 2<<40+8)[0].kernel)
}

// Every geometry gemvChoose can pick is one the kernel has, and its shared memory fits (with
// CARVE_PTX_DIR naming a folder of the kernels' PTX, the kernels and their fallbacks exist with
// the parameters the program passes).
func TestGemvChoose(t *testing.T) {
	h200 := kernels.KnownGPUs["h200"]
	sigs := ptxSignatures(t)
	for _, m := range []int64{1, 3, 4} {
		for _, k := range []int64{1, 100, 1536, 8960, 16384, 65536} {
			for _, n := range []int64{1, 13, 256, 1536, 8960, 151936} {
				t.Run(fmt.Sprintf("%dx%dx%d", m, k, n), func(t *testing.T) {
					g := &gemmInstance{dt: graph.BFloat16, m: m, k: k, n: n, alpha: 1, mode: gemmSingle, batch: 1}
					c, ok := gemvChoose(g)
					require.Contains(t, []int64{1, 2, 4, 8}, c.split)
					require.Equal(t, gemvStage(g, c) <= gemvMaxStage, ok)
					require.Equal(t, gemvSlice(k, gemvMaxSplit)*gemvRowsVariant(m)*4 <= gemvMaxStage, ok, "A's stage fits in 8 slices")
					if !ok {
						return
					}
					p, err := gemvProgram(g, c, h200)
					require.NoError(t, err)
					if sigs == nil {
						return
					}
					for st := &p[0]; st != nil; st = st.fallback {
						want, ok := sigs[st.kernel]
						require.True(t, ok, "kernel %s is not in the PTX", st.kernel)
						require.Len(t, st.params, len(want), st.kernel)
						for i, q := range st.params {
							size := 8
							if q.kind == litRef {
								size = int(q.arg.size)
							}
							require.Equal(t, want[i], size, "parameter %d of %s", i, st.kernel)
						}
					}
				})
			}
		}
	}
}

// gemv reads B before the dependent launch's wait only when B is a weight: the early parameter
// follows kernels.Value.Initializer, and the launch is dependent either way.
func TestGemvEarlyOnlyForWeights(t *testing.T) {
	reg, err := kernels.RegistryFor(kernels.BackendCUDA)
	require.NoError(t, err)
	for _, weight := range []bool{false, true} {
		n := matmulNode(graph.BFloat16, []int64{1, 1536}, []int64{1536, 1536}, []int64{1, 1536})
		n.Inputs[1].Initializer = weight
		inst, err := reg.Select(n, kernels.KnownGPUs["h200"])
		require.NoError(t, err)
		g := inst.(*gemmInstance)
		require.NotNil(t, g.gemv)
		require.True(t, g.gemv[0].dependent)
		recs := gemvRecord(t, g, 2<<40)
		require.Equal(t, uint64(boolInt(weight)), recs[0].args[len(recs[0].args)-1].bits, "early, weight %v", weight)
	}
}
