package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

// com.microsoft.MoE, onnxruntime's mixture of experts (kernels.CheckMoE reads the node), in
// float32, float16 and bfloat16, every intermediate in float32 and the output rounded once, as
// the CPU kernel computes it. Tactic "grouped", five launches of csrc/moe.cu:
//
//  1. carve_moe_route: a thread a row: softmax, the K best (probability, index) pairs (ties to
//     the larger index), their weights (normalized with normalize_routing_weights); each row's
//     routes in ascending expert order into "routes";
//  2. carve_moe_sort: one block: the routes of positive weight counted by expert, their offsets
//     and the products' tiles of bm slots into "counts", and a stable counting sort of the routes
//     into slots (each expert's routes contiguous, in ascending order);
//  3. carve_moe_fc1 (carve_moe_fc1g when gated: swiglu, or fc3): over (expert, tile of bm slots)
//     x 64 columns, the input rows through the sorted routes times fc1 (and fc3), the biases and
//     the activation in the epilogue, into "act" [routes, Inter];
//  4. carve_moe_fc2: "act" times fc2 plus its bias, into "y" [routes, Hidden];
//  5. carve_moe_combine: each output element the weighted sum of its row's routes of y, in
//     ascending expert order (the CPU kernel's), rounded once: deterministic, no atomics.
//
// The grids are fixed by the shapes: the products launch, for tiles of bm rows, as many blocks as
// the experts can fill in the worst case (moeMaxTiles), and a
// block whose tile is past the tiles the routes made exits; bm is 16 when the experts average
// fewer than 32 routes each (decode steps), else 64. Nothing waits on the host, so the node is
// graph-capturable.
//
// Cost: the products are plain tiled FMA loops (no tensor cores; float32 accumulation for every
// type), reading weights element by element (any layout, no alignment); a decode step reads each
// chosen expert's weights once per tile of rows. Workspace: "routes" (16 bytes a route: expert,
// weight, slot, sorted route), "counts" (2*(E+1) int32), "act" (routes x Inter float32) and "y"
// (routes x Hidden float32): it grows with rows*K*(Inter + Hidden), all of it at the range's
// most rows for the bound. Limits: at most 1024 experts (the sort's shared counts) and K <= 64
// (the router's per-thread lists).

const moeTactic = "grouped"

// Launch constants of csrc/moe.cu.
const (
	moeLegacyFlag  = 1  // MOE_LEGACY
	moeActShift    = 8  // MOE_ACT_SHIFT
	moeMaxK        = 64 // MOE_MAX_K
	moeMaxExperts  = 1024
	moeSortThreads = 1024
	moeTileCols    = 64 // BN
	moeThreads     = 256
)

// moeTileRows is the products' tile height: 16 slots when the experts average fewer than 32
// routes each, else 64.
func moeTileRows(m kernels.MoE) int64 {
	if m.Routes() < 32*m.Experts {
		return 16
	}
	return 64
}

// moeMaxTiles is the most tiles of bm slots the routes can fill: every expert holds at most Rows
// routes (a row's experts are distinct), the tiles of all of them hold Routes, and every tile
// holds one at least.
func moeMaxTiles(m kernels.MoE, bm int64) int64 {
	r := m.Routes()
	return min(m.Experts*((m.Rows+bm-1)/bm), (r+m.Experts*(bm-1))/bm, r)
}

// moeParts is the grouped tactic's workspace.
func moeParts(m kernels.MoE) ([]alloc.Part, error) {
	r := m.Routes()
	if r == 0 {
		return nil, nil
	}
	var parts []alloc.Part
	for _, p := range []struct {
		name string
		dims []int64
	}{{"routes", []int64{r, 16}}, {"counts", []int64{2*m.Experts + 2, 4}}, {"act", []int64{r, m.Inter, 4}}, {"y", []int64{r, m.Hidden, 4}}} {
		size, err := kernels.Product(p.dims...)
		if err != nil {
			return nil, err
		}
		parts = append(parts, alloc.Part{Name: p.name, Size: size})
	}
	return parts, nil
}

func selectMoE(n *kernels.Node, t kernels.Target) (plan, error) {
	m, err := kernels.CheckMoE(n)
	if err != nil {
		return plan{}, err
	}
	if !isFloat(m.DType) {
		return plan{}, errDType("the input", m.DType, "float32, float16 or bfloat16")
	}
	if m.Experts > moeMaxExperts {
		return plan{}, fmt.Errorf("%d experts: the CUDA kernel routes at most %d (the CPU backend takes any number)", m.Experts, moeMaxExperts)
	}
	if m.K > moeMaxK {
		return plan{}, fmt.Errorf("k %d: the CUDA kernel routes a row to at most %d experts (the CPU backend takes any k)", m.K, moeMaxK)
	}
	r := m.Routes()
	if !fits32(m.Rows, m.Hidden, m.FC1Out, r) || (max(m.Inter, m.Hidden)+moeTileCols-1)/moeTileCols > 65535 {
		return plan{}, fmt.Errorf("%d rows of hidden size %d, inter %d and k %d are too large for the CUDA kernel", m.Rows, m.Hidden, m.Inter, m.K)
	}
	if r == 0 {
		return plan{tactic: moeTactic}, nil
	}
	parts, err := moeParts(m)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: moeTactic, parts: parts, prog: moeProgram(m, t)}, nil
}

// moeProgram is the grouped tactic's launches.
func moeProgram(m kernels.MoE, t kernels.Target) program {
	dn := dtName(m.DType)
	r := m.Routes()
	experts, weights, slots, sorted := wsp(0), wsp(0).at(4*r), wsp(0).at(8*r), wsp(0).at(12*r)
	counts, act, y := wsp(1), wsp(2), wsp(3)
	bm := moeTileRows(m)
	tiles := uint32(moeMaxTiles(m, bm))
	colTiles := func(n int64) uint32 { return uint32((n + moeTileCols - 1) / moeTileCols) }
	flags := 0
	if m.Legacy {
		flags |= moeLegacyFlag
	}
	ek := pack32(m.Experts, m.K)
	block := Dim3{X: moeThreads, Y: 1, Z: 1}

	fc1 := fmt.Sprintf("carve_moe_fc1_%s_m%d", dn, bm)
	wl, bl := nullp(), nullp()
	lcols, gmap, lmap := int64(0), pack32(1, 0), pack32(0, 0)
	switch {
	case m.Act == kernels.MoESwiGLU:
		fc1 = fmt.Sprintf("carve_moe_fc1g_%s_m%d", dn, bm)
		wl, bl, lcols = inp(2), inp(3), m.FC1Out
		gmap, lmap = pack32(2, 0), pack32(2, 1) // interleaved: gate 2j, linear 2j+1
		if m.Fusion == 2 {
			gmap, lmap = pack32(1, 0), pack32(1, m.Inter) // concatenated: gate j, linear Inter+j
		}
	case m.FC3:
		fc1 = fmt.Sprintf("carve_moe_fc1g_%s_m%d", dn, bm)
		wl, bl, lcols, lmap = inp(6), inp(7), m.Inter, pack32(1, 0)
	}
	return program{
		{kernel: "carve_moe_route_" + dn, grid: grid1(m.Rows, 1, t), block: block1,
			params: []param{inp(1), experts, weights, pack32(m.Rows, m.Experts), i32p(int(m.K)), i32p(boolInt(m.Normalize))}},
		{kernel: "carve_moe_sort", grid: Dim3{X: 1, Y: 1, Z: 1}, block: Dim3{X: moeSortThreads, Y: 1, Z: 1},
			params: []param{experts, weights, sorted, slots, counts, pack32(r, m.Experts), i32p(int(bm))}},
		{kernel: fc1, grid: Dim3{X: tiles, Y: colTiles(m.Inter), Z: 1}, block: block,
			params: []param{act, inp(0), sorted, counts, inp(2), inp(3), wl, bl, ek, pack32(m.Hidden, m.Inter),
				pack32(m.FC1Out, lcols), gmap, lmap, i32p(flags | int(m.Act)<<moeActShift), f32p(m.Limit), f32p(m.Alpha), f32p(m.Beta)}},
		{kernel: fmt.Sprintf("carve_moe_fc2_%s_m%d", dn, bm), grid: Dim3{X: tiles, Y: colTiles(m.Hidden), Z: 1}, block: block,
			params: []param{y, act, sorted, counts, inp(4), inp(5), nullp(), nullp(), ek, pack32(m.Inter, m.Hidden),
				pack32(m.Hidden, 0), pack32(1, 0), pack32(0, 0), i32p(flags | int(kernels.MoEIdentity)<<moeActShift), f32p(0), f32p(0), f32p(0)}},
		{kernel: "carve_moe_combine_" + dn, grid: grid1(m.Rows*m.Hidden, 1, t), block: block1,
			params: []param{outp(0), y, weights, slots, pack32(m.Rows, m.Hidden), i32p(int(m.K))}},
	}
}

// boundMoE is the grouped tactic's workspace at the range's largest sizes (kernels.MoEBound).
func boundMoE(r *kernels.NodeRange, _ kernels.Target) (kernels.Bound, error) {
	m, _, err := kernels.MoEBound(r)
	if err != nil {
		return kernels.Bound{}, err
	}
	parts, err := moeParts(m)
	if err != nil {
		return kernels.Bound{}, err
	}
	return recipeBound(moeTactic, parts)
}

func moeOps() []*op {
	return []*op{{key: kernels.Key(kernels.DomainMicrosoft, "MoE"), sel: selectMoE, bound: boundMoE,
		tactics: []kernels.TacticInfo{{Name: moeTactic, Workspace: true,
			Summary: "device routing and a counting sort of the routes by expert, two grouped tiled products (activation fused into the first), a per-row combine"}}}}
}
