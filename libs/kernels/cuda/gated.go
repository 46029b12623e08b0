package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// carve's GatedMatMul (graph.DomainCarve, made by package rewrite's gated-matmul kind from a
// gated MLP's two products and its SwiGLU): Y = swish(A Wg, alpha) * (A Wu) for A [..., K] and
// two [K, N] weights. Tactics:
//
//   - "gemv": one row of A (a decode step at batch 1) in float16 or bfloat16 on sm_90 and newer
//     runs as one launch of carve_gemv_swiglu (csrc/gemv.cu), the gemv kernel reading both
//     weights in one grid (half of each block's column threads read Wg, half Wu, at the same
//     columns) and applying the gate in its epilogue. The unfused graph's three launches (two
//     products and the SwiGLU) become one, and the two [1, N] products never reach memory. It
//     keeps the gemv kernel's dependent launch and its early reads of the weights, with a
//     geometry of its own (gatedChoose). On the H200, Qwen2.5-1.5B's decode step at batch 1
//     (K 1536, N 8960, bfloat16, 28 layers) took 1.59 ms/token against 1.73 with cuBLASLt's two
//     products and the SwiGLU kernel.
//   - "cublaslt": every other case: the gate product with cuBLASLt straight into the output,
//     then, a chunk of rows at a time, the up product into the workspace part "up" and
//     carve_swiglu over the chunk in place (Y = swish(Y) * up). Only a chunk of the up product is
//     ever carved: gatedChunkRows rows (all of them up to 512, then a quarter of them, at least
//     512), so beside cuBLASLt's cap the node holds the larger of 512 rows and a quarter of one
//     [M, N] product, where the unfused graph holds two whole ones beside its output. The MLP is
//     a prefill's peak: in Qwen2.5-1.5B at (1, 2048) (M 2048, N 8960, bfloat16) the node held 70
//     MiB of products in its workspace and holds 8.75 MiB now. The chunks cost time: in A/B runs
//     of that model's whole prefill on the H200 against one chunk of all the rows, the arena
//     went from 114 to 88 MiB at (1, 2048) for 13.8 against 13.6 ms, and from 360 to 255 MiB at
//     (8, 1024) for 44.4 against 43.2 ms; (1, 512) is one chunk either way.
//
// The workspace bound is the cublaslt tactic's parts at the range's most rows (the gemv tactic
// needs none; gatedChunkRows never falls as M grows).

const gatedGemvTactic = "gemv"

// gatedGeom is a GatedMatMul's shape: m rows of A (its leading dims folded), k and n the weights'.
type gatedGeom struct {
	dt      graph.DType
	m, k, n int64
}

// gatedDims checks a GatedMatMul's operands (A, Wg, Wu shapes) and returns its geometry and
// output shape.
func gatedDims(dt graph.DType, a, wg, wu []int64) (gatedGeom, []int64, error) {
	if len(a) < 1 || len(wg) != 2 || len(wu) != 2 {
		return gatedGeom{}, nil, fmt.Errorf("A %v, Wg %v and Wu %v: want A of rank 1 or more and two 2-D weights", a, wg, wu)
	}
	if !equalShape(wg, wu) {
		return gatedGeom{}, nil, fmt.Errorf("Wg %v and Wu %v differ; want one [K, N] shape", wg, wu)
	}
	k, n := wg[0], wg[1]
	if a[len(a)-1] != k {
		return gatedGeom{}, nil, fmt.Errorf("A %v and weights %v: A's last dim must be K = %d", a, wg, k)
	}
	out := append(append([]int64(nil), a[:len(a)-1]...), n)
	m := numel(a[:len(a)-1])
	return gatedGeom{dt: dt, m: m, k: k, n: n}, out, nil
}

// gatedParts is the cublaslt tactic's workspace: a chunk of the up product, then cuBLASLt's own
// (the part the tight plan may lower, see MeasuredPart).
func gatedParts(g gatedGeom, t kernels.Target) ([]alloc.Part, error) {
	sz, err := kernels.Product(gatedChunkRows(g.m), g.n, int64(g.dt.Size()))
	if err != nil {
		return nil, err
	}
	return []alloc.Part{{Name: "up", Size: sz}, {Name: gemmPart, Size: gemmWorkspace(t)}}, nil
}

// gatedChunkRows is how many rows of the up product the cublaslt tactic carves at a time for m
// rows of A: all of them up to gatedChunkMin, else a quarter of them rounded up to 16 rows, but
// at least gatedChunkMin (so the products stay large enough for cuBLASLt's tiles to fill the
// GPU). It never falls as m grows, so its value at a range's most rows bounds the range.
func gatedChunkRows(m int64) int64 {
	if m <= gatedChunkMin {
		return m
	}
	return max(gatedChunkMin, (m/gatedChunks+15)/16*16)
}

const (
	gatedChunkMin = 512
	gatedChunks   = 4
)

func selectGated(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckArity(n, 3, 3, 1, 1); err != nil {
		return plan{}, err
	}
	a, wg, wu := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if !isFloat(a.DType) || wg.DType != a.DType || wu.DType != a.DType {
		return plan{}, fmt.Errorf("A is %s, Wg %s and Wu %s; want one of float32, float16 or bfloat16", a.DType, wg.DType, wu.DType)
	}
	g, out, err := gatedDims(a.DType, a.Shape, wg.Shape, wu.Shape)
	if err != nil {
		return plan{}, err
	}
	if err := kernels.CheckOutput(n, 0, a.DType, out); err != nil {
		return plan{}, err
	}
	alpha := n.Attrs.Float("alpha", 1)
	if g.m == 0 || g.n == 0 {
		return plan{tactic: gemmTactic}, nil
	}
	if p, ok := gatedGemv(g, alpha, wg.Initializer && wu.Initializer, t); ok {
		return p, nil
	}
	parts, err := gatedParts(g, t)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: gemmTactic, parts: parts, prog: gatedProgram(g, alpha, t)}, nil
}

// gatedProgram is the cublaslt tactic's launches: the gate product into the output, then for
// each chunk of rows the up product into part 0 and the SwiGLU in place over the chunk's rows.
func gatedProgram(g gatedGeom, alpha float32, t kernels.Target) program {
	es := int64(g.dt.Size())
	prog := program{{call: &partProduct{label: "GatedMatMul/gate", dt: g.dt, m: g.m, k: g.k, n: g.n, weight: 1, dst: outp(0)}}}
	rows := gatedChunkRows(g.m)
	for r := int64(0); r < g.m; r += rows {
		m := min(rows, g.m-r)
		y := outp(0).at(r * g.n * es)
		prog = append(prog, step{call: &partProduct{label: "GatedMatMul/up", dt: g.dt, m: m, k: g.k, n: g.n, row: r, weight: 2, dst: wsp(0)}},
			step{kernel: "carve_swiglu_" + dtName(g.dt), grid: grid1(m*g.n, 16/es, t), block: block1,
				params: []param{y, y, wsp(0), i64p(m * g.n), f32p(alpha)}, dependent: true})
	}
	return prog
}

// gatedGemv is the gemv tactic's launch for g where it applies: one row, a 16-bit float type,
// sm_90 or newer, and a geometry that fits (gatedChoose's for the two weights side by side, as
// one product of 2N columns).
func gatedGemv(g gatedGeom, alpha float32, early bool, t kernels.Target) (plan, bool) {
	if major, ok := archMajor(t.Arch); !ok || major < 9 {
		return plan{}, false
	}
	if g.m != 1 || (g.dt != graph.Float16 && g.dt != graph.BFloat16) {
		return plan{}, false
	}
	side := &gemmInstance{dt: g.dt, m: 1, k: g.k, n: 2 * g.n}
	c, ok := gatedChoose(side)
	if !ok {
		return plan{}, false
	}
	wo := int64(4) << c.cwlog // output columns a block
	tiles := (g.n + wo - 1) / wo
	ks := gemvSlice(g.k, c.split)
	shared := gemvShared(side, c, gemvRing, true)
	if tiles > 65535 || !fits32(g.k, 2*g.n, ks) || shared > t.SharedMemPerBlock {
		return plan{}, false
	}
	st := step{kernel: fmt.Sprintf("carve_gemv_swiglu_%s_m1_s%d", dtName(g.dt), c.split),
		grid: Dim3{X: uint32(c.split), Y: uint32(tiles), Z: 1}, block: Dim3{X: gemvThreads, Y: 1, Z: 1}, shared: uint32(shared),
		params: []param{outp(0), inp(0), inp(1), inp(2), pack32(1, g.n), pack32(g.k, ks), i32p(c.cwlog),
			f32p(1), f32p(alpha), i32p(boolInt(early))},
		dependent: true}
	slow := st
	slow.kernel += "_u"
	slow.shared = uint32(gemvShared(side, c, 0, true))
	if g.n%8 != 0 {
		return plan{tactic: gatedGemvTactic, prog: program{slow}}, true
	}
	st.align, st.alignOnly, st.fallback = 16, []int{2, 3}, &slow
	return plan{tactic: gatedGemvTactic, prog: program{st}}, true
}

// gatedChoose is the swiglu kernel's geometry for the two weights side by side (side: one
// product of 2N columns): K in gatedSplit slices (more while A's stage does not fit), and the
// widest tile that still gives gatedMinBlocks blocks. In the Qwen2.5-1.5B decode step on the
// H200 (batch 1, A/B runs of the whole step, ms/token), its 70 x 2 blocks of 128 columns took
// 1.59 against 1.73 unfused, and the step was as sensitive to the geometry as that: 2 slices of
// 64 columns 1.60, 8 of 128 1.63, 8 of 64 (gemvChoose's) 1.77, 4 slices of 64 or 128 columns
// and 1 slice 2.0 to 2.1, all with identical tokens. The cause of the spread was not profiled.
func gatedChoose(side *gemmInstance) (gemvConfig, bool) {
	return gemvFit(side, gemvConfig{cwlog: 5, split: gatedSplit}, gatedMinBlocks)
}

const (
	gatedSplit     = 2   // K slices of the swiglu kernel (see gatedChoose)
	gatedMinBlocks = 128 // about one block per multiprocessor of an H200
)

// boundGated is the cublaslt tactic's workspace at the range's most rows.
func boundGated(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	a, okA := r.Input(0)
	wg, okG := r.Input(1)
	wu, okU := r.Input(2)
	if !okA || !okG || !okU {
		return kernels.Bound{}, fmt.Errorf("GatedMatMul needs A, Wg and Wu")
	}
	g, _, err := gatedDims(a.DType, rangeDims(a, true, true), rangeDims(wg, true, true), rangeDims(wu, true, true))
	if err != nil {
		return kernels.Bound{}, err
	}
	parts, err := gatedParts(g, t)
	if err != nil {
		return kernels.Bound{}, err
	}
	return recipeBound(gemmTactic, parts)
}

func gatedOps() []*op {
	return []*op{{key: kernels.Key(kernels.DomainCarve, "GatedMatMul"), sel: selectGated, bound: boundGated,
		tactics: []kernels.TacticInfo{
			{Name: gatedGemvTactic, Summary: "one row of fp16/bf16 on sm_90+: both weights in one gemv launch, the SwiGLU in its epilogue, no workspace"},
			{Name: gemmTactic, Workspace: true, Summary: "the gate product with cuBLASLt into the output, then the up product into workspace a chunk of rows at a time, each chunk's SwiGLU in place"}}}}
}
