package cuda

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The layer-normalization family (LayerNormalization, SimplifiedLayerNormalization = RMSNorm,
// com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization; ONNX's
// RMSNormalization, registered in rmsnorm23.go) and Softmax (softmax.go) run one block per row
// with the statistics in registers and shared memory (csrc/norm.cu): unlike the CPU kernels'
// "row-stats" tactic they need no workspace. A few norm rows (a decode step's) of up to 4 *
// normThreads 16-byte vectors are held in registers (carve_norm_rows: one vector a thread where
// the row allows, so a row is a short latency chain); many rows, or a longer one, go through
// carve_layer_norm, which walks a row (cached in shared memory when it fits).

// kernel flags of carve_layer_norm_* (csrc/norm.cu)
const (
	normSimple  = 1
	normStatF32 = 2
	normCached  = 4
)

// rowBlock is the block size for a row of h elements moved v at a time: enough threads that
// each takes a few vectors, at most 1024.
func rowBlock(h, v int64) Dim3 {
	th := (h/v + 3) / 4
	th = min(max((th+31)/32*32, 32), 1024)
	return Dim3{X: uint32(th), Y: 1, Z: 1}
}

// rowsGrid is the grid of a kernel that grid-strides over rows, one block each.
func rowsGrid(rows int64, t kernels.Target) Dim3 {
	return Dim3{X: uint32(min(max(rows, 1), int64(t.SMs)*gridWaves*4)), Y: 1, Z: 1}
}

// normThreads is csrc NORM_THREADS, the most threads of a carve_norm_rows block.
const normThreads = 512

// normRowsOff turns carve_norm_rows off (tests and benchmarks compare it with carve_layer_norm).
var normRowsOff = false

// normRows is the vectors of v elements a thread holds (1, 2 or 4) and the block of
// carve_norm_rows for rows rows of h elements: the fewest vectors a thread that let a block of at
// most normThreads cover a row. ok is false when none does, or when there are more rows than
// twice the multiprocessors: carve_layer_norm, whose small blocks keep more rows in flight, takes
// them (on the H200, 17.3 us for 8192 x 1536 bfloat16 against 26.6; the decode step's row, 2.1
// against 3.1).
func normRows(rows, h, v int64, t kernels.Target) (int64, Dim3, bool) {
	if rows > 2*int64(t.SMs) {
		return 0, Dim3{}, false
	}
	vecs := (h + v - 1) / v
	for _, ns := range []int64{1, 2, 4} {
		if th := (vecs + ns - 1) / ns; th <= normThreads && !normRowsOff {
			return ns, Dim3{X: uint32(max((th+31)/32*32, 32)), Y: 1, Z: 1}, true
		}
	}
	return 0, Dim3{}, false
}

// cachedRow reports whether a row of h floats fits the shared memory a block may have, leaving
// room for the reduction scratch, and returns the dynamic shared bytes to ask for.
func cachedRow(h int64, t kernels.Target) (bool, uint32) {
	b := h * 4
	if b+1024 > t.SharedMemPerBlock {
		return false, 0
	}
	return true, uint32(b)
}

func selectNorm(n *kernels.Node, t kernels.Target) (plan, error) {
	g, err := kernels.CheckNorm(n)
	if err != nil {
		return plan{}, err
	}
	x := n.Inputs
	dt := x[0].DType
	rows, h, eps, simplified := g.Rows, g.H, g.Eps, g.Simplified
	skip, addBias, scale, bias := g.Skip, g.AddBias, g.Scale, g.Bias
	meanOut, invOut, sumOut, skipRows := g.MeanOut, g.InvOut, g.SumOut, g.SkipRows
	for _, i := range []int{scale, bias} {
		if i >= 0 && numel(x[i].Shape) != h {
			return plan{}, fmt.Errorf("input %d has shape %v; the CUDA kernel takes %d elements (no broadcast within the normalized dims)", i, x[i].Shape, h)
		}
	}
	flags := 0
	if simplified {
		flags |= normSimple
	}
	for _, o := range []int{meanOut, invOut} {
		if o >= 0 && n.Outputs[o].DType == graph.Float32 {
			flags |= normStatF32
		}
	}
	if rows == 0 || h == 0 {
		return plan{tactic: "fused"}, nil
	}
	ref := func(i int, in bool) param {
		switch {
		case i < 0:
			return nullp()
		case in:
			return inp(i)
		}
		return outp(i)
	}
	params := []param{outp(0), inp(0), ref(skip, true), ref(addBias, true), inp(scale), ref(bias, true),
		ref(sumOut, false), ref(meanOut, false), ref(invOut, false), i64p(rows), i64p(h), i64p(max(skipRows, 1)),
		f32p(eps), i32p(0)}
	if ns, block, ok := normRows(rows, h, 16/dt.Size(), t); ok {
		params[len(params)-1] = i32p(flags)
		st := step{kernel: fmt.Sprintf("carve_norm_rows_%s_%d", dtName(dt), ns), grid: rowsGrid(rows, t), block: block, params: params,
			dependent: true}
		return plan{tactic: "fused", prog: program{st}}, nil
	}
	cached, shared := cachedRow(h, t)
	if cached {
		flags |= normCached
	}
	params[len(params)-1] = i32p(flags)
	st := step{kernel: "carve_layer_norm_" + dtName(dt), grid: rowsGrid(rows, t), block: rowBlock(h, 16/dt.Size()), shared: shared,
		params: params}
	return plan{tactic: "fused", prog: program{st}}, nil
}

// normTactics is the layer-normalization family's one tactic.
var normTactics = []kernels.TacticInfo{{Name: "fused", Summary: "one block per row, statistics in shared memory, no workspace"}}

func normOps() []*op {
	mk := func(domain, name string) *op {
		return &op{key: kernels.Key(domain, name), tactics: normTactics, sel: selectNorm}
	}
	return []*op{
		mk("", "LayerNormalization"),
		mk("", "SimplifiedLayerNormalization"),
		mk(kernels.DomainMicrosoft, "SimplifiedLayerNormalization"),
		mk(kernels.DomainMicrosoft, "SkipLayerNormalization"),
		mk(kernels.DomainMicrosoft, "SkipSimplifiedLayerNormalization"),
	}
}
