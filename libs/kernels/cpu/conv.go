package cpu

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/gemm"
	"carve.dev/libs/kernels/internal/par"
	"carve.dev/libs/kernels/internal/vec"
)

// Conv (1-D, 2-D and 3-D; group, strides, dilations, pads, auto_pad, optional bias) on float32,
// with the checks of kernels.CheckConv. Tactics:
//
//   - "im2col": per batch image and group, Y_g (M/group x P) = W_g (M/group x K) * col (K x P),
//     K = C/group * kernel volume, P the output's spatial volume. col is never built whole: it is
//     written a tile of columns at a time into workspace, and each tile's product goes straight
//     into Y (ldc P) on package gemm. Two schedules (convTiling):
//     side by side, when the tiles of all images and groups number at least the workers: each
//     participant writes its own col tile and multiplies it on a single-participant gemm
//     ("col" and "gemm" parts: slots times one tile's), so the unfolding is as parallel as the
//     products and a tile is read by the core that wrote it. Tiles are at most convTileCols(K)
//     columns (a tile about the size of a core's L2), narrower when that leaves fewer tiles than
//     workers, down to convMinCols. Else (few output positions: the late layers of a CNN, whose
//     weights are large), chunks of at most convChunkFloats / K columns one after another, each
//     unfolded by all the workers (rows of col split over them) and then multiplied by a gemm
//     parallel over the workers (split over M and P).
//   - "gemm-1x1": a 1x1 kernel with unit strides and no padding reads X_g (C/group x P) as
//     the product's B in place; the workspace is gemm's alone.
//   - Few output positions (P under convSwapMaxCols, at least convSwapMinM output channels a
//     group; convSwaps): im2col's and gemm-1x1's products are gemm.NewSwappedPlan's, which
//     vectorize over output channels instead of over P (7 x 7 positions are 49 columns: panels of
//     16 would be a quarter padding, and of 32 more). im2col then takes chunks, each product
//     parallel over the workers (split over output channels, each packing only its rows of W),
//     the chunk as wide as convChunkCols allows for one worker too, so that W is packed once.
//   - "depthwise": group == C (any channel multiplier): a direct loop per output plane, in
//     parallel over planes, no workspace.
//   - "taps": a 1-D or 2-D kernel of unit strides over at least tapsMinCols output positions
//     (the early layers of a CNN, whose inputs are large and weights small): per image and
//     group, the input is copied once into a zero-padded plane per channel (workspace "pad"),
//     the weights reordered tap-major (W_t, mg x cg for each tap t, "weights"), and Y' = sum_t
//     W_t * shift_t(pad) is one product (gemm.RunTaps, "gemm"): output position (oh, ow) is
//     column oh*Wp + ow of Y' (Wp the padded width), and tap (kh, kw) reads the padded planes in
//     place at offset kh*dh*Wp + kw*dw, so nothing is unfolded. Y' ("out", the padded width's
//     columns past each output row unused) goes to Y a row at a time, with FusedConv's Z added
//     and Relu: each element of Z is read before Y's same element is written (Z may be Y's
//     buffer), and the product never writes Y. The bias is the product's row bias, so an
//     element's sum is its bias, the taps' products in (tap, channel) order, then Z.
//
// The bias is the fused epilogue: gemm's RunRowBias sets each tile of Y to its rows' bias just
// before the tile's product accumulates into it. Results do not depend on the worker count:
// each element of Y is one gemm sum over K in gemm's fixed order, whatever the schedule.
// Invariants: the recipe is a pure function of the shapes, attributes and the worker count, and
// grows with every dim, so Bound at a range's largest dims covers it; Run writes only Y and the
// workspace.
type conv struct {
	tactic    string
	geo       geom3
	n, groups int
	cg, mg    int // input and output channels per group
	k, p      int // the product's inner dim and the output's spatial volume
	inVol     int // the input's spatial volume
	pt, tiles int // columns per col tile (or chunk), tiles per image and group
	side      bool
	swap      bool // the products are swapped plans (convSwaps)
	slots     int
	colFloats int // one slot's col tile
	gemmPer   int // one slot's gemm workspace
	full      gemm.Plan
	last      gemm.Plan // the last, narrower tile's
	bias      bool
	sum, relu bool // FusedConv's epilogue: Z added, then Relu
	mult      int  // depthwise: output channels per input channel
	workers   int
	// taps: the padded planes' height and width, Y's columns (nq), each tap's offset in a
	// padded plane, and the workspace parts' floats
	hp, wp, nq         int
	tapOff             []int
	padFloats, wFloats int
}

// geom3 is a window normalized to 3 spatial dims (leading ones of size 1 for 1-D and 2-D).
type geom3 struct {
	in, out, k, s, d, p [3]int // p: the begin pads
}

func newGeom3(g kernels.ConvGeom) geom3 {
	var r geom3
	off := 3 - len(g.In)
	for i := range 3 {
		r.in[i], r.out[i], r.k[i], r.s[i], r.d[i] = 1, 1, 1, 1, 1
		if j := i - off; j >= 0 {
			r.in[i], r.out[i], r.k[i] = int(g.In[j]), int(g.Out[j]), int(g.Kernel[j])
			r.s[i], r.d[i], r.p[i] = int(g.Strides[j]), int(g.Dilations[j]), int(g.PadBegin[j])
		}
	}
	return r
}

func (g *geom3) kvol() int { return g.k[0] * g.k[1] * g.k[2] }

// convTileFloats is the size a col tile aims at; convMinCols is the fewest columns a tile has
// (a product narrower than a few micro-kernel panels wastes the micro-kernel); convChunkFloats
// bounds the col chunk that all the workers unfold and multiply together.
const (
	convTileFloats  = 1 << 17
	convMinCols     = 64
	convChunkFloats = 1 << 20
)

// convTileCols is the columns of a col tile of k rows: about convTileFloats floats, a multiple
// of 32 columns and at least convMinCols. It does not grow with k.
func convTileCols(k int64) int64 {
	c := convTileFloats / max(k, 1) / 32 * 32
	return max(c, convMinCols)
}

// convChunkCols is the columns of a chunk of k rows that all the workers share: about
// convChunkFloats floats, a multiple of 32 columns and at least convMinCols. It does not grow
// with k.
func convChunkCols(k int64) int64 {
	c := convChunkFloats / max(k, 1) / 32 * 32
	return max(c, convMinCols)
}

// convShape is what a Conv's workspace depends on.
type convShape struct {
	tactic          string
	n, groups, mg   int64
	k, p            int64 // inner dim (C/group * kernel volume) and output spatial volume
	kLo             int64 // the smallest k over a range (k itself for a concrete node)
	side, sideKnown bool
	swap            bool  // the products are gemm.NewSwappedPlan's (convSwaps)
	pad, nq         int64 // taps: a group's padded planes' floats and Y's columns
}

// convSwapMaxCols and convSwapMinM bound the products that convSwaps swaps: under
// convSwapMaxCols output positions the panels of P's columns are much padding (49 and 196
// columns are 64 and 208 on AVX2's 16-wide panels, 64 and 224 on AVX-512's 32), and from
// convSwapMinM output channels a group those along the panels are not. At 28 x 28 positions
// the plain plans were the faster (the README's CPU figures).
const (
	convSwapMaxCols = 256
	convSwapMinM    = 64
)

// convSwaps reports whether the products of an im2col or gemm-1x1 convolution are swapped
// plans.
func convSwaps(s convShape) bool {
	return (s.tactic == "im2col" || s.tactic == "gemm-1x1") && s.p < convSwapMaxCols && s.mg >= convSwapMinM
}

// tapsMinCols is the fewest output positions the taps tactic takes: below it the weights'
// reordering (mg x K floats an image-group) costs too much beside the product, and im2col's
// unfolded tiles are small. tapsMaxFloats bounds its workspace besides gemm's (the padded
// input, the reordered weights and Y'); a larger convolution takes im2col.
const (
	tapsMinCols   = 28 * 28
	tapsMaxFloats = 1 << 22
)

// tapsFloats is the taps tactic's workspace besides gemm's, in floats.
func tapsFloats(s convShape) int64 { return s.pad + s.mg*s.k + s.mg*s.nq }

// convTiling is the im2col schedule: side by side (each participant its own tiles of pt
// columns) when the tiles of all images and groups number at least the workers, at the
// convTileCols width or, where that leaves fewer, as narrow as gives every worker one (a
// multiple of 16 columns, at least convMinCols); else chunks of pt columns one after another,
// each parallel over the workers, convChunkCols wide (convTileCols for one worker: a chunk of
// 2304 x 196 floats, ResNet-50's 3x3 of 256 channels whole, made its product 4% slower than
// tiles of 64 columns). s.sideKnown forces the schedule (for Bound over a range). pt grows
// with p and shrinks with kLo, never with k.
func convTiling(s convShape, workers int) (pt, tiles int64, side bool) {
	if s.swap { // chunks one after another, each whole where it fits (see conv)
		pt = min(s.p, convChunkCols(s.kLo))
		return pt, (s.p + pt - 1) / pt, false
	}
	w := int64(max(workers, 1))
	per := max(s.n*s.groups, 1)
	pt = min(s.p, convTileCols(s.kLo))
	side = w > 1 && per*((s.p+pt-1)/pt) >= w
	if !side && w > 1 {
		// narrower tiles, one per worker: ceil(w / per) of each image-group's
		want := (w + per - 1) / per
		if n := (s.p + want - 1) / want; n >= convMinCols {
			pt, side = min(pt, (n+15)/16*16), true
		}
	}
	if s.sideKnown {
		if side = s.side; side {
			pt = min(s.p, convTileCols(s.kLo))
		}
	}
	if !side && w > 1 { // one worker keeps the L2-sized tiles: it multiplies them as it writes them
		pt = min(s.p, convChunkCols(s.kLo))
	}
	return pt, (s.p + pt - 1) / pt, side
}

// convParts is the recipe of a Conv: for "im2col" a "col" part and a "gemm" part, each the
// slots' sum when side by side; for "gemm-1x1" the gemm part; none for "depthwise". It also
// reports the tiling. Over a range (s.sideKnown) the side-by-side recipe takes a slot per
// worker.
func convParts(s convShape, workers int) (parts []alloc.Part, pt, tiles, slots int64, side bool) {
	switch s.tactic {
	case "depthwise":
		return nil, 0, 0, 0, false
	case "taps":
		if s.p == 0 || s.mg == 0 {
			return nil, 0, 0, 0, false
		}
		g := gemm.Workspace(s.mg, s.nq, s.k, gemm.RowMajor, workers)
		return []alloc.Part{{Name: "pad", Size: max(s.pad, 1) * 4}, {Name: "weights", Size: max(s.mg*s.k, 1) * 4},
			{Name: "out", Size: max(s.mg*s.nq, 1) * 4}, {Name: "gemm", Size: max(g, 1) * 4}}, 0, 0, 1, false
	case "gemm-1x1":
		if s.swap {
			return gemmPart(gemm.SwappedWorkspace(s.mg, s.p, s.k, workers)), 0, 0, 1, false
		}
		return gemmPart(gemm.Workspace(s.mg, s.p, s.k, gemm.RowMajor, workers)), 0, 0, 1, false
	}
	if s.p == 0 || s.mg == 0 {
		return nil, 0, 0, 0, false
	}
	pt, tiles, side = convTiling(s, workers)
	col := s.k * pt
	if side {
		slots = min(int64(max(workers, 1)), max(s.n*s.groups*tiles, 1))
		if s.sideKnown {
			slots = int64(max(workers, 1))
		}
		g := gemm.Workspace(s.mg, pt, s.k, gemm.RowMajor, 1)
		return []alloc.Part{{Name: "col", Size: slots * col * 4}, {Name: "gemm", Size: max(slots*g*4, 4)}}, pt, tiles, slots, true
	}
	g := gemm.Workspace(s.mg, pt, s.k, gemm.RowMajor, workers)
	if s.swap {
		g = gemm.SwappedWorkspace(s.mg, pt, s.k, workers)
	}
	return []alloc.Part{{Name: "col", Size: col * 4}, {Name: "gemm", Size: max(g*4, 4)}}, pt, tiles, 1, false
}

// convTactic picks the tactic from the geometry: depthwise for group == C, gemm-1x1 for a
// pointwise kernel, im2col for the rest.
func convTactic(c, groups int64, kernel, strides, padBegin, padEnd []int64) string {
	if groups == c && groups > 1 {
		return "depthwise"
	}
	for i := range kernel {
		if kernel[i] != 1 || strides[i] != 1 || padBegin[i] != 0 || padEnd[i] != 0 {
			return "im2col"
		}
	}
	return "gemm-1x1"
}

// tapsShape is s with the taps tactic's padded planes and Y's columns for geometry g (unit
// strides, at most 2 spatial dims), and whether that tactic takes it: at least tapsMinCols
// output positions and at most tapsMaxFloats floats of its own workspace.
func tapsShape(s convShape, g kernels.ConvGeom) (convShape, bool) {
	if len(g.In) > 2 {
		return s, false
	}
	kvol := int64(1)
	for i := range g.Kernel {
		if g.Strides[i] != 1 {
			return s, false
		}
		kvol *= g.Kernel[i]
	}
	if kvol == 1 {
		return s, false // gemm-1x1's, or im2col's for a padded pointwise kernel
	}
	hp, wp, oh, ow := int64(1), int64(1), int64(1), int64(1)
	last := len(g.In) - 1
	if len(g.In) == 2 {
		oh, hp = g.Out[0], g.Out[0]+(g.Kernel[0]-1)*g.Dilations[0]
	}
	ow, wp = g.Out[last], g.Out[last]+(g.Kernel[last]-1)*g.Dilations[last]
	s.pad = g.C / max(g.Group, 1) * hp * wp
	s.nq = 0
	if oh > 0 && ow > 0 {
		s.nq = (oh-1)*wp + ow
	}
	return s, s.p >= tapsMinCols && tapsFloats(s) <= tapsMaxFloats
}

func selectConv(n *kernels.Node, d kernels.Target) (plan, error) {
	g, err := kernels.CheckConv(n)
	if err != nil {
		return plan{}, err
	}
	if dt := n.Inputs[0].DType; dt != graph.Float32 {
		return plan{}, fmt.Errorf("input is %v: the CPU Conv computes float32 only; cast the model to float32", dt)
	}
	cv := &conv{geo: newGeom3(g), n: int(g.N), groups: int(g.Group), bias: g.Bias, sum: g.Sum, relu: g.Relu, workers: d.Workers}
	cv.cg, cv.mg = int(g.C/g.Group), int(g.M/g.Group)
	cv.k = cv.cg * cv.geo.kvol()
	cv.p = cv.geo.out[0] * cv.geo.out[1] * cv.geo.out[2]
	cv.inVol = cv.geo.in[0] * cv.geo.in[1] * cv.geo.in[2]
	cv.tactic = convTactic(g.C, g.Group, g.Kernel, g.Strides, g.PadBegin, g.PadEnd)
	cv.mult = int(g.M / g.C)
	cs := convShape{tactic: cv.tactic, n: g.N, groups: g.Group, mg: int64(cv.mg), k: int64(cv.k), kLo: int64(cv.k), p: int64(cv.p)}
	if ts, ok := tapsShape(cs, g); ok && cv.tactic == "im2col" {
		cs, cv.tactic = ts, "taps"
		cs.tactic = "taps"
	}
	cs.swap = convSwaps(cs)
	cv.swap = cs.swap
	parts, pt, tiles, slots, side := convParts(cs, d.Workers)
	cv.pt, cv.tiles, cv.slots, cv.side = int(pt), int(tiles), int(slots), side
	switch cv.tactic {
	case "taps":
		cv.nq, cv.padFloats, cv.wFloats = int(cs.nq), int(cs.pad), cv.mg*cv.k
		cv.hp = cv.geo.out[1] + (cv.geo.k[1]-1)*cv.geo.d[1]
		cv.wp = cv.geo.out[2] + (cv.geo.k[2]-1)*cv.geo.d[2]
		kv := cv.geo.kvol()
		cv.tapOff = make([]int, kv)
		for t := range kv {
			cv.tapOff[t] = t/cv.geo.k[2]*cv.geo.d[1]*cv.wp + t%cv.geo.k[2]*cv.geo.d[2]
		}
		cv.full = gemm.NewTapsPlan(cv.mg, cv.nq, cv.cg, kv, d.Workers)
	case "gemm-1x1":
		cv.full = cv.newPlan(cv.p, cv.cg, d.Workers)
	case "im2col":
		w := d.Workers
		if side {
			w = 1
		}
		if cv.pt > 0 {
			cv.full = cv.newPlan(cv.pt, cv.k, w)
			cv.last = cv.newPlan(cv.p-(cv.tiles-1)*cv.pt, cv.k, w)
			cv.colFloats = cv.k * cv.pt
			cv.gemmPer = int(gemm.Workspace(int64(cv.mg), int64(cv.pt), int64(cv.k), gemm.RowMajor, 1))
		}
	}
	p := plan{tactic: cv.tactic, parts: parts, r: cv}
	if cv.sum && cv.tactic != "depthwise" {
		// FusedConv's Z in place of Y: gemm's epilogue reads each tile's Z where its sums start,
		// before the tile's products write it, and no tile reads another's (gemm.Epilogue); the
		// taps tactic's products write only workspace, and its copy to Y adds each element of Z
		// before writing that element. The depthwise loop adds Z after writing the row, so it
		// does not declare it.
		p.inPlace = []kernels.InPlace{{Output: 0, Input: 3}}
	}
	return p, nil
}

// newPlan is the plan of a product of the group's weights by n columns of k rows: swapped or
// not as cv.swap says.
func (cv *conv) newPlan(n, k, workers int) gemm.Plan {
	if cv.swap {
		return gemm.NewSwappedPlan(cv.mg, n, k, workers)
	}
	return gemm.NewPlan(cv.mg, n, k, gemm.RowMajor, workers)
}

// boundConv is W: the recipe at the range's largest dims (the tile width at the smallest inner
// dim, where it is widest); over a range whose dims vary, the larger of the side-by-side and
// one-after-another recipes.
func boundConv(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	x, okX := r.Input(0)
	w, okW := r.Input(1)
	y, okY := r.Output(0)
	if !okX || !okW || !okY || len(x.Dims) < 3 || len(w.Dims) != len(x.Dims) || len(y.Dims) != len(x.Dims) {
		return kernels.Bound{}, fmt.Errorf("Conv needs X, W and Y of one rank, 3 or more, and the output's range")
	}
	if x.DType != graph.Float32 {
		return kernels.Bound{}, nil // refused at Select
	}
	groups := r.Attrs.Int("group", 1)
	fixed := true
	for _, v := range [][]kernels.DimRange{x.Dims, w.Dims, y.Dims} {
		for _, dr := range v {
			fixed = fixed && dr.Lo == dr.Hi
		}
	}
	kvolHi, kvolLo, p := int64(1), int64(1), int64(1)
	kernel := make([]int64, len(w.Dims)-2)
	for i, dr := range w.Dims[2:] {
		kvolHi, kvolLo, kernel[i] = kvolHi*dr.Hi, kvolLo*dr.Lo, dr.Hi
	}
	for _, dr := range y.Dims[2:] {
		var err error
		if p, err = kernels.Product(p, dr.Hi); err != nil {
			return kernels.Bound{}, err
		}
	}
	s := convShape{n: x.Dims[0].Hi, groups: groups, mg: w.Dims[0].Hi / max(groups, 1), k: w.Dims[1].Hi * kvolHi, kLo: w.Dims[1].Lo * kvolLo, p: p}
	s.tactic = "im2col"
	if fixed {
		n, err := concreteConv(r)
		if err != nil {
			return kernels.Bound{}, err
		}
		g, err := kernels.CheckConv(n)
		if err != nil {
			return kernels.Bound{}, err
		}
		s.tactic = convTactic(g.C, g.Group, g.Kernel, g.Strides, g.PadBegin, g.PadEnd)
		if ts, ok := tapsShape(s, g); ok && s.tactic == "im2col" {
			s, s.tactic = ts, "taps"
		}
		s.swap = convSwaps(s)
		parts, _, _, _, _ := convParts(s, d.Workers)
		return recipeBound(s.tactic, parts)
	}
	// every tactic a node of the range may select: im2col's covers gemm-1x1's (its gemm part is
	// at least the pointwise product's, k being C/group there) and depthwise's (none)
	var best kernels.Bound
	for _, side := range []bool{false, true} {
		s.side, s.sideKnown = side, true
		parts, _, _, _, _ := convParts(s, d.Workers)
		b, err := recipeBound(s.tactic, parts)
		if err != nil {
			return kernels.Bound{}, err
		}
		best = best.Max(b)
	}
	one := s
	one.tactic, one.k = "gemm-1x1", w.Dims[1].Hi
	parts, _, _, _, _ := convParts(one, d.Workers)
	b, err := recipeBound("gemm-1x1", parts)
	if err != nil {
		return kernels.Bound{}, err
	}
	best = best.Max(b)
	// the swapped products of the range's nodes under convSwapMaxCols output positions: their
	// recipes at the largest dims below that (SwappedWorkspace grows with every dim)
	if s.mg >= convSwapMinM && s.p > 0 {
		for _, v := range []convShape{s, one} {
			v.p, v.swap, v.sideKnown = min(v.p, convSwapMaxCols-1), true, false
			parts, _, _, _, _ := convParts(v, d.Workers)
			b, err := recipeBound(v.tactic, parts)
			if err != nil {
				return kernels.Bound{}, err
			}
			best = best.Max(b)
		}
	}
	if tb, ok, err := boundTaps(r, s, x.Dims, y.Dims, kernel, d.Workers); err != nil || !ok {
		return best, err
	} else {
		return best.Max(tb), nil
	}
}

// boundTaps is the taps tactic's W over a range, and whether any node of it may take the
// tactic (unit strides, at most 2 spatial dims): the parts at the range's largest dims, all but
// gemm's capped at tapsMaxFloats in all (a node whose own exceed it takes im2col).
func boundTaps(r *kernels.NodeRange, s convShape, x, y []kernels.DimRange, kernel []int64, workers int) (kernels.Bound, bool, error) {
	if len(x) > 4 {
		return kernels.Bound{}, false, nil
	}
	strides, dil := r.Attrs.Ints("strides"), r.Attrs.Ints("dilations")
	padded, rows := int64(1), int64(1) // the padded planes' floats; Y's rows (all but the last dim)
	for i, kd := range kernel {
		if i < len(strides) && strides[i] != 1 {
			return kernels.Bound{}, false, nil
		}
		dl := int64(1)
		if i < len(dil) {
			dl = dil[i]
		}
		o := y[2+i].Hi
		padded *= o + (kd-1)*dl
		if i < len(kernel)-1 {
			rows *= o
		} else {
			s.nq = rows * (o + (kd-1)*dl) // at least (rows-1)*Wp + OW
		}
	}
	hp := padded
	s.pad = x[1].Hi / max(s.groups, 1) * hp
	s.tactic = "taps"
	parts, _, _, _, _ := convParts(s, workers)
	own := min(tapsFloats(s), tapsMaxFloats)
	size := own*4 + parts[3].Size + 4*alloc.DefaultPartAlign // the gemm part, and each part's rounding
	b, err := recipeBound("taps", parts)
	if err != nil {
		return kernels.Bound{}, false, err
	}
	b.Bytes = min(b.Bytes, size)
	return b, true, nil
}

// concreteConv is the node of a degenerate range.
func concreteConv(r *kernels.NodeRange) (*kernels.Node, error) {
	n := &kernels.Node{Name: r.Name, Op: r.Op, Domain: r.Domain, Opset: r.Opset, Attrs: r.Attrs}
	conv := func(v kernels.ValueRange) kernels.Value {
		out := kernels.Value{DType: v.DType}
		for _, d := range v.Dims {
			out.Shape = append(out.Shape, d.Hi)
		}
		return out
	}
	for _, v := range r.Inputs {
		n.Inputs = append(n.Inputs, conv(v))
	}
	for _, v := range r.Outputs {
		n.Outputs = append(n.Outputs, conv(v))
	}
	return n, nil
}

func (cv *conv) run(in, out []kernels.Tensor, ws wsParts) error {
	x, w, y := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
	var b, z []float32
	if cv.bias {
		b = in[2].Float32s()
	}
	if cv.sum {
		z = in[3].Float32s()
	}
	switch cv.tactic {
	case "depthwise":
		runRanges(cv, in, out, cv.n*cv.groups*cv.mult, cv.p*cv.geo.kvol(), weightPlain, cv.workers)
	case "gemm-1x1":
		var gws []float32
		if cv.full.WorkspaceFloats() > 0 {
			gws = kernels.ViewAs[float32](ws.bytes(0))
		}
		for i := 0; i < cv.n*cv.groups; i++ {
			grp := i % cv.groups
			xs := x[i*cv.cg*cv.inVol:]
			cv.product(cv.full, w[grp*cv.mg*cv.k:], xs, b, grp, y[i*cv.mg*cv.p:], cv.zOf(z, i), 0, cv.p, gws)
		}
	case "taps":
		if cv.p == 0 || cv.mg == 0 {
			return nil
		}
		cv.runTaps(x, w, b, y, z, ws)
	case "im2col":
		if cv.pt == 0 || cv.n == 0 {
			return nil
		}
		col, gws := kernels.ViewAs[float32](ws.bytes(0)), kernels.ViewAs[float32](ws.bytes(1))
		body := convBodies.Get()
		*body = convBody{cv: cv, x: x, w: w, b: b, y: y, z: z, col: col, gws: gws}
		if cv.side {
			par.For(cv.n*cv.groups*cv.tiles, 1, cv.slots, body)
		} else {
			for i := range cv.n * cv.groups * cv.tiles {
				cv.chunk(i, body)
			}
		}
		*body = convBody{}
		convBodies.Put(body)
	}
	return nil
}

// runTaps is the taps tactic (see conv): per image-group, the padded planes and (for the first
// image of each group, or every group's when there are several) the reordered weights in one
// parallel loop, the product into Y', and Y' to Y in parallel over output channels.
func (cv *conv) runTaps(x, w, b, y, z []float32, ws wsParts) {
	pad := kernels.ViewAs[float32](ws.bytes(0))[:cv.padFloats]
	wt := kernels.ViewAs[float32](ws.bytes(1))[:cv.wFloats]
	yt := kernels.ViewAs[float32](ws.bytes(2))[:cv.mg*cv.nq]
	gws := kernels.ViewAs[float32](ws.bytes(3))
	body := convBodies.Get()
	*body = convBody{cv: cv, x: x, w: w, b: b, y: y, z: z, col: pad, gws: wt}
	for ig := range cv.n * cv.groups {
		grp := ig % cv.groups
		body.ig = ig
		items := cv.cg // padded planes, then weight rows
		if ig < cv.groups && cv.groups == 1 || cv.groups > 1 {
			items += cv.mg
		}
		body.mode = tapsPrepare
		grain, slots := loopShape(items, cv.hp*cv.wp, weightPlain, cv.workers)
		par.For(items, grain, slots, body)
		var bias []float32
		if b != nil {
			bias = b[grp*cv.mg:]
		}
		cv.full.RunTaps(gemm.Mat{Data: wt, Ld: cv.cg}, gemm.Mat{Data: pad, Ld: cv.hp * cv.wp}, gemm.Taps{B: cv.tapOff, ATap: cv.mg * cv.cg}, bias, yt, cv.nq, gws)
		body.mode, body.col = tapsOut, yt
		grain, slots = loopShape(cv.mg, cv.p, weightPlain, cv.workers)
		par.For(cv.mg, grain, slots, body)
		body.col = pad
	}
	*body = convBody{}
	convBodies.Put(body)
}

// tapsPrep writes item i of image-group ig's taps operands: padded plane i (i < cg; zeros
// around the input channel's plane) or, after them, row i-cg of the group's weights reordered
// tap-major (element (t, m, c) of wt is W_g[m, c, t]).
func (cv *conv) tapsPrep(x, w, pad, wt []float32, ig, i int) {
	g := &cv.geo
	if i >= cv.cg {
		m := i - cv.cg
		kv := g.kvol()
		grp := ig % cv.groups
		wm := w[(grp*cv.mg+m)*cv.k:][:cv.k]
		for t := range kv {
			dst := wt[(t*cv.mg+m)*cv.cg:][:cv.cg]
			for c := range dst {
				dst[c] = wm[c*kv+t]
			}
		}
		return
	}
	plane := pad[i*cv.hp*cv.wp:][:cv.hp*cv.wp]
	xc := x[(ig*cv.cg+i)*cv.inVol:][:cv.inVol]
	top, left := g.p[1], g.p[2]
	clear(plane[:top*cv.wp])
	for iy := range g.in[1] {
		row := plane[(top+iy)*cv.wp:][:cv.wp]
		clear(row[:left])
		copy(row[left:left+g.in[2]], xc[iy*g.in[2]:][:g.in[2]])
		clear(row[left+g.in[2]:])
	}
	clear(plane[(top+g.in[1])*cv.wp:])
}

// tapsOutRow writes output channel m of image-group ig from Y' (yt): each output row's run of
// Y' columns, plus Z's (read before the same element of Y is written: Z may be Y), then Relu.
func (cv *conv) tapsOutRow(yt, y, z []float32, ig, m int) {
	ow, oh := cv.geo.out[2], cv.geo.out[1]
	base := (ig*cv.mg + m) * cv.p
	for r := range oh {
		src := yt[m*cv.nq+r*cv.wp:][:ow]
		dst := y[base+r*ow:][:ow]
		if z != nil {
			vec.VV(vec.Add, dst, src, z[base+r*ow:][:ow])
		} else {
			copy(dst, src)
		}
		if cv.relu {
			vec.Relu(dst, dst) // as gemm's epilogue: NaN and -0 kept
		}
	}
}

// product is Y_g[:, p0:p0+plan.N] = W_g * B (+ the rows' bias), B row-major with ldb columns,
// then FusedConv's epilogue: Z_g's elements added (zg, nil without Z), Relu.
func (cv *conv) product(pl gemm.Plan, wg, bmat, bias []float32, grp int, yg, zg []float32, p0, ldb int, gws []float32) {
	a, bm := gemm.Mat{Data: wg, Ld: max(pl.K, 1)}, gemm.Mat{Data: bmat, Ld: max(ldb, 1)}
	if bias != nil {
		bias = bias[grp*cv.mg:]
	}
	epi := gemm.Epilogue{Relu: cv.relu}
	if zg != nil {
		epi.Add = zg[p0:]
	}
	pl.RunEpilogue(a, bm, nil, bias, epi, yg[p0:], cv.p, 1, gws)
}

// zOf is image-group ig's part of Z, nil without Z.
func (cv *conv) zOf(z []float32, ig int) []float32 {
	if z == nil {
		return nil
	}
	return z[ig*cv.mg*cv.p:]
}

// tileAt is item i's image-group, tile, first column and plan.
func (cv *conv) tileAt(i int) (ig, grp, p0 int, pl gemm.Plan) {
	t := i % cv.tiles
	ig = i / cv.tiles
	pl = cv.full
	if t == cv.tiles-1 {
		pl = cv.last
	}
	return ig, ig % cv.groups, t * cv.pt, pl
}

// item computes tile i of (image, group, tile) with its own col tile and gemm workspace.
func (cv *conv) item(i int, x, w, b, y, z, col, gws []float32) {
	ig, grp, p0, pl := cv.tileAt(i)
	cv.im2col(x[ig*cv.cg*cv.inVol:], col, p0, pl.N, 0, cv.k)
	cv.product(pl, w[grp*cv.mg*cv.k:], col, b, grp, y[ig*cv.mg*cv.p:], cv.zOf(z, ig), p0, pl.N, gws)
}

// chunk computes chunk i of (image, group, chunk): its col rows unfolded by all the workers,
// then its product parallel over them.
func (cv *conv) chunk(i int, body *convBody) {
	ig, grp, p0, pl := cv.tileAt(i)
	body.ig, body.p0, body.cols = ig, p0, pl.N
	rows := cv.k
	grain, slots := loopShape(rows, pl.N, weightPlain, cv.workers)
	if slots <= 1 {
		cv.im2col(body.x[ig*cv.cg*cv.inVol:], body.col, p0, pl.N, 0, rows)
	} else {
		body.unfold = true
		par.For(rows, grain, slots, body)
		body.unfold = false
	}
	cv.product(pl, body.w[grp*cv.mg*cv.k:], body.col, body.b, grp, body.y[ig*cv.mg*cv.p:], cv.zOf(body.z, ig), p0, pl.N, body.gws)
}

// im2col writes rows [r0, r1) of columns [p0, p0+cols) of the image-group's col matrix into
// col (row-major, cols wide): row (c, kd, kh, kw), column (od, oh, ow) holds
// x[c, od*s-p+kd*d, ...] or 0 in the padding. A row's columns come a run of output columns at
// a time (an output row, or the tile's part of one); which of a run's columns read inside the
// input row depends on kw alone, so it is found once per col row (tapCols), and each run is
// zeros, a copy (unit stride) or a strided gather, and zeros.
func (cv *conv) im2col(x, col []float32, p0, cols, r0, r1 int) {
	g := &cv.geo
	kv := g.kvol()
	s2 := g.s[2]
	for r := r0; r < r1; r++ {
		c, kr := r/kv, r%kv
		kz, ky, kx := kr/(g.k[1]*g.k[2]), kr/g.k[2]%g.k[1], kr%g.k[2]
		dst := col[r*cols : (r+1)*cols]
		xc := x[c*cv.inVol : (c+1)*cv.inVol]
		ixb := kx*g.d[2] - g.p[2]                     // output column ow reads input column ow*s2 + ixb
		lo, hi := tapCols(ixb, s2, g.in[2], g.out[2]) // the output columns that read inside
		ow := p0 % g.out[2]
		oh := p0 / g.out[2] % g.out[1]
		od := p0 / g.out[2] / g.out[1]
		for j := 0; j < cols; {
			run := min(cols-j, g.out[2]-ow)
			iz := od*g.s[0] - g.p[0] + kz*g.d[0]
			iy := oh*g.s[1] - g.p[1] + ky*g.d[1]
			seg := dst[j : j+run]
			a, b := min(max(lo, ow), ow+run), min(max(hi, ow), ow+run) // [a, b) read inside
			if uint(iz) >= uint(g.in[0]) || uint(iy) >= uint(g.in[1]) || a >= b {
				clear(seg)
			} else {
				row := xc[(iz*g.in[1]+iy)*g.in[2] : (iz*g.in[1]+iy+1)*g.in[2]]
				// inline for the short runs of late layers: per-run calls cost ~5% there
				for t := 0; t < a-ow; t++ { // a counted loop: not turned into a memclr call
					seg[t] = 0
				}
				for t := b - ow; t < run; t++ {
					seg[t] = 0
				}
				d, sr := seg[a-ow:b-ow], row[a*s2+ixb:(b-1)*s2+ixb+1]
				switch {
				case s2 == 1 && len(d) < 16:
					sr = sr[:len(d)]
					//lint:ignore S1001 a run this short is copied inline: copy's call to memmove costs more than the run
					for t, v := range sr {
						d[t] = v
					}
				case s2 == 1:
					copy(d, sr)
				case len(d) < 16:
					for t := range d {
						d[t] = sr[t*s2]
					}
				default:
					gatherStrided(d, sr, s2)
				}
			}
			j += run
			ow += run
			if ow == g.out[2] {
				ow = 0
				if oh++; oh == g.out[1] {
					oh = 0
					od++
				}
			}
		}
	}
}

// gatherStrided sets dst[t] = src[t*s] (len(src) = (len(dst)-1)*s + 1).
func gatherStrided(dst, src []float32, s int) {
	switch s {
	case 1:
		copy(dst, src)
	case 2: // four at a time, one bounds check each (the strided convolutions' common stride)
		t := 0
		for ; t+4 <= len(dst); t += 4 {
			q, d := src[2*t:2*t+7], dst[t:t+4]
			d[0], d[1], d[2], d[3] = q[0], q[2], q[4], q[6]
		}
		for ; t < len(dst); t++ {
			dst[t] = src[2*t]
		}
	default:
		for t := range dst {
			dst[t] = src[t*s]
		}
	}
}

// convBody runs a Conv's parallel loops: im2col tiles side by side, each participant with
// its slot's col tile and gemm workspace; or (unfold) rows of one chunk's col.
type convBody struct {
	cv                      *conv
	x, w, b, y, z, col, gws []float32
	unfold                  bool // rows [lo, hi) of chunk (ig, p0, cols)
	ig, p0, cols            int
	mode                    int // tapsPrepare (col the padded planes, gws the weights) or tapsOut (col Y')
}

// convBody's modes for the taps tactic.
const (
	tapsNone = iota
	tapsPrepare
	tapsOut
)

var convBodies par.Pool[convBody]

func (c *convBody) Do(slot, lo, hi int) {
	cv := c.cv
	switch c.mode {
	case tapsPrepare:
		for i := lo; i < hi; i++ {
			cv.tapsPrep(c.x, c.w, c.col, c.gws, c.ig, i)
		}
		return
	case tapsOut:
		for i := lo; i < hi; i++ {
			cv.tapsOutRow(c.col, c.y, c.z, c.ig, i)
		}
		return
	}
	if c.unfold {
		cv.im2col(c.x[c.ig*cv.cg*cv.inVol:], c.col, c.p0, c.cols, lo, hi)
		return
	}
	col := c.col[slot*cv.colFloats : (slot+1)*cv.colFloats]
	gws := c.gws[slot*cv.gemmPer : (slot+1)*cv.gemmPer]
	for i := lo; i < hi; i++ {
		cv.item(i, c.x, c.w, c.b, c.y, c.z, col, gws)
	}
}

// runRange computes depthwise output planes [lo, hi) of (image, output channel), an output row
// at a time: the row starts from the bias, and each kernel tap adds its weight times the input
// row it reads (a contiguous run for unit strides) over the output columns whose tap lies inside
// the input, the row staying in cache. Each output gets the taps in the order (kd, kh, kw), as
// a loop over its window would, with FusedConv's epilogue after the last.
func (cv *conv) runRange(in, out []kernels.Tensor, lo, hi int) {
	x, w, y := in[0].Float32s(), in[1].Float32s(), out[0].Float32s()
	var b, z []float32
	if cv.bias {
		b = in[2].Float32s()
	}
	if cv.sum {
		z = in[3].Float32s()
	}
	g := &cv.geo
	kv := g.kvol()
	m := cv.groups * cv.mult
	ow := g.out[2]
	for pl := lo; pl < hi; pl++ {
		img, oc := pl/m, pl%m
		xc := x[(img*cv.groups+oc/cv.mult)*cv.inVol:][:cv.inVol]
		wk := w[oc*kv : (oc+1)*kv]
		yp := y[pl*cv.p : (pl+1)*cv.p]
		var bias float32
		if b != nil {
			bias = b[oc]
		}
		for od := range g.out[0] {
			for oh := range g.out[1] {
				o := (od*g.out[1] + oh) * ow
				yr := yp[o : o+ow]
				fill32(yr, bias)
				for kz := range g.k[0] {
					iz := od*g.s[0] - g.p[0] + kz*g.d[0]
					if uint(iz) >= uint(g.in[0]) {
						continue
					}
					for ky := range g.k[1] {
						iy := oh*g.s[1] - g.p[1] + ky*g.d[1]
						if uint(iy) >= uint(g.in[1]) {
							continue
						}
						xr := xc[(iz*g.in[1]+iy)*g.in[2]:][:g.in[2]]
						for kx, wv := range wk[(kz*g.k[1]+ky)*g.k[2]:][:g.k[2]] {
							// output columns j0..j1-1 read xr[j*s + ix] inside the row
							ix := kx*g.d[2] - g.p[2]
							j0, j1 := tapCols(ix, g.s[2], g.in[2], ow)
							if j0 >= j1 {
								continue
							}
							if g.s[2] == 1 {
								if j1-j0 >= 16 { // shorter runs are quicker in the loop
									vec.Axpy(wv, xr[j0+ix:j1+ix], yr[j0:j1])
									continue
								}
								dst := yr[j0:j1]
								for j, v := range xr[j0+ix : j1+ix] {
									dst[j] += float32(wv * v)
								}
								continue
							}
							src := xr[j0*g.s[2]+ix : (j1-1)*g.s[2]+ix+1]
							dst := yr[j0:j1]
							for j := range dst {
								dst[j] += float32(wv * src[j*g.s[2]]) // rounded as vec.Axpy rounds
							}
						}
					}
				}
				if z != nil {
					vec.VV(vec.Add, yr, yr, z[pl*cv.p+o:pl*cv.p+o+ow])
				}
				if cv.relu {
					vec.Relu(yr, yr) // as gemm's epilogue: NaN and -0 kept
				}
			}
		}
	}
}

// tapCols is the range [j0, j1) of output columns j < n whose input column j*s + ix lies in
// [0, in).
func tapCols(ix, s, in, n int) (j0, j1 int) {
	if ix < 0 {
		j0 = (-ix + s - 1) / s
	}
	if in-ix > 0 {
		j1 = min((in-ix+s-1)/s, n)
	}
	return j0, j1
}

// fill32 sets every element of s to v.
func fill32(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}

func convOps() []*op {
	return []*op{
		{key: kernels.Key("", "Conv"), sel: selectConv, bound: boundConv, tactics: convTactics},
		{key: kernels.Key(kernels.DomainMicrosoft, "FusedConv"), sel: selectConv, bound: boundConv, tactics: convTactics},
	}
}

var convTactics = []kernels.TacticInfo{
	{Name: "im2col", Summary: "col tiles of the unfolded input in workspace, each multiplied by the weights on the packed gemm, bias (and FusedConv's Z and Relu) fused; tiles side by side, or chunks unfolded by all the workers and each product parallel", Workspace: true},
	{Name: "gemm-1x1", Summary: "pointwise kernel: the input read in place as the gemm's B, bias (and FusedConv's Z and Relu) fused", Workspace: true},
	{Name: "taps", Summary: "unit strides over many output positions: the input zero-padded once and each kernel tap's product read from it in place at the tap's shift (no unfolding), the weights reordered tap-major, the bias fused, Z and Relu as Y' goes to Y", Workspace: true},
	{Name: "depthwise", Summary: "group == channels: output rows from the bias and each tap's run of an input row, parallel over planes, no workspace"},
}
