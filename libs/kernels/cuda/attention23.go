package cuda

import (
	"fmt"
	"math"
	"strings"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// ONNX Attention (ai.onnx, opset 23) runs one core kernel of csrc/attention23.cu over strided
// views of Q, K, V and Y, after copy kernels that write present_key / present_value (past
// followed by the new keys or values) when the node has them or has a past. The semantics are
// the CPU kernel's (libs/kernels/cpu/attention23.go): grouped heads, bool or float attn_mask
// broadcast to [B, Hq, S, T], is_causal with the past offset, carve's window (graph.AttentionBand:
// the keys before it are not read), scale, softcap, zeros for rows with every key masked,
// carve's relative bias (graph.AttnRelC2P: the terms its tables' indices pick, added to each
// score; an index entry outside [-R, R), which the CPU kernel refuses, gives a NaN row).
//
// Tactics, a pure function of dtype, head sizes and layout:
//   - "flash-mma": float16 and bfloat16 with D == Dv in {64, 128} and every row and head stride a
//     multiple of 8 elements: FlashAttention-2 on tensor cores (64 query rows per block, 64-key
//     tiles double-buffered in shared memory, mma.sync with float32 accumulation), in one of
//     four kernels by mask and softcap (a23MMAVariant). When a tensor's address is not 16-byte
//     aligned at run time, the "flash" kernel runs instead.
//   - "flash-tile": D == Dv in {32, 64, 128} in float32, and 32 in the 16-bit types: 64 query
//     rows per block against 64-key tiles staged in shared memory as float, each thread four rows
//     by four keys, on the CUDA cores (float32 stays float32: no TF32).
//   - "flash": every other case: one warp per query row with an online softmax; with a
//     relative bias, carve_a23rel_*, the same kernel reading the tables' terms per score.
//
// Neither stores scores: the only workspace is "keys" / "values" ([B, Hkv, T, D|Dv]) for a node
// with a past but without the present outputs, which the core then reads; it grows with T,
// never with S x T.

const (
	a23Causal     = 1 // csrc A23_CAUSAL
	a23GQA        = 2 // csrc A23_GQA: the past per batch, from GroupQueryAttention's seqlens_k
	a23MaskBool   = 1 // csrc A23_MASK_BOOL
	a23MaskFloat  = 2 // csrc A23_MASK_FLOAT
	a23RowsWarps  = 4 // rows (warps) per block of carve_a23_*
	a23MMARows    = 64
	a23MMAKeys    = 64
	a23MMAThreads = 128
	// csrc TILE_ROWS, TILE_KEYS, TILE_THREADS: the tiled kernel's blocks (TILE_KEYS == TILE_ROWS)
	a23TileRows    = 64
	a23TileKeys    = 64
	a23TileThreads = 256
)

// a23Geom is an ONNX Attention node's geometry: T = P + L keys.
type a23Geom struct {
	b, hq, hkv, s, l, p, t, d, dv int64
}

// a23Dims reads the geometry from the attributes and the shapes of Q, K, V and past_key (nil
// when absent), as kernels.ONNXAttentionDims reads it, with the views of Q, K, V and Y.
func a23Dims(at graph.Attributes, q, k, v, pk []int64) (a23Geom, kernels.ONNXAttentionGeom, error) {
	og, err := kernels.ONNXAttentionDims(at, q, k, v)
	if err != nil {
		return a23Geom{}, og, err
	}
	g := a23Geom{b: og.B, hq: og.Hq, hkv: og.Hkv, s: og.S, l: og.L, d: og.D, dv: og.Dv}
	if pk != nil {
		if len(pk) != 4 {
			return g, og, fmt.Errorf("past_key has %d dims, want 4", len(pk))
		}
		g.p = pk[2]
	}
	g.t = g.p + g.l
	return g, og, nil
}

// a23KVParts is the workspace for a past without present outputs.
func a23KVParts(g a23Geom, es int64, presentK, presentV bool) ([]alloc.Part, error) {
	if g.p == 0 {
		return nil, nil
	}
	var parts []alloc.Part
	for _, x := range []struct {
		name    string
		w       int64
		present bool
	}{{"keys", g.d, presentK}, {"values", g.dv, presentV}} {
		if x.present {
			continue
		}
		sz, err := kernels.Product(g.b, g.hkv, g.t, x.w, es)
		if err != nil {
			return nil, err
		}
		parts = append(parts, alloc.Part{Name: x.name, Size: sz})
	}
	return parts, nil
}

// a23Strides are a tensor's element strides: batch, head, row.
type a23Strides struct{ b, h, r int64 }

// a23Layout is the strides of a [B, H, S, W] tensor.
func a23Layout(h, s, w int64) a23Strides { return a23Strides{b: h * s * w, h: s * w, r: w} }

// a23View is the strides of a view (kernels.AttnView), its offset apart.
func a23View(v kernels.AttnView) a23Strides { return a23Strides{b: v.SB, h: v.SH, r: v.SS} }

func (st a23Strides) params() []param { return []param{i64p(st.b), pack32(st.h, st.r)} }

// a23Mask checks attn_mask against the scores [B, Hq, S, T]: it returns the kind, the mask's
// last dim and its batch, head and row strides (0 where broadcast).
func a23Mask(m kernels.Value, dt graph.DType, g a23Geom) (kind int64, maskT int64, st a23Strides, err error) {
	if m.DType != graph.Bool && m.DType != dt {
		return 0, 0, st, fmt.Errorf("attn_mask is %v, want bool or %v", m.DType, dt)
	}
	r := len(m.Shape)
	want := []int64{g.b, g.hq, g.s, g.t}
	if r == 0 || r > 4 || m.Shape[r-1] > g.t {
		return 0, 0, st, fmt.Errorf("attn_mask %v does not broadcast to the scores %v", m.Shape, want)
	}
	strides := make([]int64, r)
	acc := int64(1)
	for i := r - 1; i >= 0; i-- {
		strides[i] = acc
		acc *= m.Shape[i]
	}
	dst := []*int64{&st.b, &st.h, &st.r}
	for i := 0; i < r-1; i++ {
		axis := 4 - r + i
		switch m.Shape[i] {
		case 1:
		case want[axis]:
			*dst[axis] = strides[i]
		default:
			return 0, 0, st, fmt.Errorf("attn_mask %v does not broadcast to the scores %v", m.Shape, want)
		}
	}
	kind = a23MaskFloat
	if m.DType == graph.Bool {
		kind = a23MaskBool
	}
	return kind, m.Shape[r-1], st, nil
}

// a23TileShared is the tiled kernel's shared memory for elements of es bytes: a Q tile of
// a23TileRows rows of d + 4 floats, K and V tiles of a23TileKeys such rows (two of each for
// float32, whose copies run ahead by cp.async) and the tile's probabilities, a23TileRows rows of
// a23TileKeys + 4.
func a23TileShared(d, es int64) uint32 {
	nb := int64(1)
	if es == 4 {
		nb = 2
	}
	return uint32((a23TileRows*(d+4) + 2*nb*a23TileKeys*(d+4) + a23TileRows*(a23TileKeys+4)) * 4)
}

// a23MMAShared is the tensor-core kernel's shared memory: K and V tiles, two each, of
// a23MMAKeys rows of d + 8 16-bit elements, and two tiles of float mask terms.
func a23MMAShared(d int64) uint32 { return uint32(2*2*a23MMAKeys*(d+8)*2 + 2*a23MMAKeys*4) }

func selectONNXAttention(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckONNXAttentionArity(n); err != nil {
		return plan{}, err
	}
	q, k, v := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	dt := q.DType
	if !isFloat(dt) || k.DType != dt || v.DType != dt {
		return plan{}, fmt.Errorf("Q, K and V are %v, %v and %v; want one of float32, float16, bfloat16", q.DType, k.DType, v.DType)
	}
	es := dt.Size()
	pk, okPK := n.Input(4)
	pv, okPV := n.Input(5)
	if okPK != okPV {
		return plan{}, fmt.Errorf("past_key and past_value go together")
	}
	var pkShape []int64
	if okPK {
		pkShape = pk.Shape
	}
	at := n.Attrs
	g, og, err := a23Dims(at, q.Shape, k.Shape, v.Shape, pkShape)
	if err != nil {
		return plan{}, err
	}
	if okPK {
		wk, wv := []int64{g.b, g.hkv, g.p, g.d}, []int64{g.b, g.hkv, g.p, g.dv}
		if pk.DType != dt || pv.DType != dt || !equalShape(pk.Shape, wk) || !equalShape(pv.Shape, wv) {
			return plan{}, fmt.Errorf("past_key %v and past_value %v, want %v%v and %v%v", pk, pv, dt, wk, dt, wv)
		}
	}
	if g.d > 1024 || g.dv > 256 {
		return plan{}, fmt.Errorf("head sizes %d/%d; the CUDA kernel takes at most 1024 for Q and K, 256 for V", g.d, g.dv)
	}
	mkind, maskT, ms := int64(0), int64(0), a23Strides{}
	mask := nullp()
	if m, ok := n.Input(3); ok {
		if mkind, maskT, ms, err = a23Mask(m, dt, g); err != nil {
			return plan{}, err
		}
		mask = inp(3)
	}
	band, err := graph.ReadAttentionBand(at)
	if err != nil {
		return plan{}, err
	}
	rel, err := kernels.CheckRelBias(n, dt, g.b, g.hq, g.s, g.t, g.p)
	if err != nil {
		return plan{}, err
	}
	flags, win := 0, band
	if band.Right == 0 && band.Left < 0 {
		flags, win.Right = a23Causal, -1 // plain causal: the kernels' fast path
	}
	if !fits32(win.Left+1, win.Right+1) { // -1 (no bound) packs and reads back as -1
		return plan{}, fmt.Errorf("window %+v is too large for the CUDA kernels", band)
	}
	scale := float32(1 / math.Sqrt(float64(g.d)))
	if at.Has("scale") {
		scale = at.Float("scale", 0)
	}
	softcap := at.Float("softcap", 0)
	if softcap < 0 {
		return plan{}, fmt.Errorf("softcap %g is negative", softcap)
	}
	if err := kernels.CheckOutput(n, 0, dt, og.YShape()); err != nil {
		return plan{}, err
	}
	_, presentK := n.Output(1)
	_, presentV := n.Output(2)
	if presentK {
		if err := kernels.CheckOutput(n, 1, dt, []int64{g.b, g.hkv, g.t, g.d}); err != nil {
			return plan{}, err
		}
	}
	if presentV {
		if err := kernels.CheckOutput(n, 2, dt, []int64{g.b, g.hkv, g.t, g.dv}); err != nil {
			return plan{}, err
		}
	}
	// Q, K, V and Y through their views (carve's layouts: rows of a packed projection, say), at
	// their offsets
	qs, ks, vs, os := a23View(og.Q), a23View(og.K), a23View(og.V), a23View(og.Y)
	qref, kref, vref, yref := inp(0).at(og.Q.Off*es), inp(1).at(og.K.Off*es), inp(2).at(og.V.Off*es), outp(0).at(og.Y.Off*es)
	if !fits32(g.b, g.hq, g.hkv, g.s, g.t, g.p, g.d, g.dv, maskT, qs.h, qs.r, os.h, os.r, ks.h, ks.r, vs.h, vs.r, ms.h, ms.r) {
		return plan{}, fmt.Errorf("attention geometry %+v is too large for the CUDA kernels", g)
	}
	if g.b*g.hq > 65535 {
		return plan{}, fmt.Errorf("%d batches x heads are too many for the CUDA attention grid (at most 65535)", g.b*g.hq)
	}
	parts, err := a23KVParts(g, es, presentK, presentV)
	if err != nil {
		return plan{}, err
	}
	var prog program
	name := dtName(dt)
	// the present outputs, and with a past the keys and values the core reads
	wsIdx := 0
	for _, x := range []struct {
		present bool
		out     int
		src     param
		past    param
		w       int64
		st      *a23Strides
		ref     *param
	}{{presentK, 1, kref, inp(4), g.d, &ks, &kref}, {presentV, 2, vref, inp(5), g.dv, &vs, &vref}} {
		if !x.present && g.p == 0 {
			continue
		}
		dst := outp(x.out)
		if !x.present {
			dst = wsp(wsIdx)
			wsIdx++
		}
		past := nullp()
		if g.p > 0 {
			past = x.past
		}
		if total := g.b * g.hkv * g.t * x.w; total > 0 {
			prog = append(prog, step{kernel: "carve_a23_concat_" + name, grid: grid1(total, 1, t), block: block1,
				params: []param{dst, past, x.src, pack32(g.b, g.hkv), pack32(g.t, g.p), i64p(x.w), i64p(x.st.b), pack32(x.st.h, x.st.r)}})
		}
		if g.p > 0 {
			*x.ref = dst
			*x.st = a23Layout(g.hkv, g.t, x.w)
			if !fits32(x.st.h, x.st.r) {
				return plan{}, fmt.Errorf("attention geometry %+v is too large for the CUDA kernels", g)
			}
		}
	}
	tactic := a23Tactic(dt, g, qs, ks, vs, os)
	if rel.Present() || tactic == "flash-tile" && int64(a23TileShared(g.d, es)) > t.SharedMemPerBlock {
		tactic = "flash" // the tensor-core and tiled kernels take no relative bias; the tiles must fit
	}
	if g.b*g.hq*g.s == 0 {
		return plan{tactic: tactic, parts: parts, prog: prog}, nil
	}
	ps := a23Params(a23Views{q: qref, k: kref, v: vref, out: yref, qs: qs, ks: ks, vs: vs, os: os}, g,
		mask, mkind, maskT, ms, flags, scale, softcap, win, nullp(), nullp())
	rows, err := a23RowsStep(name, g, ps)
	if err != nil {
		return plan{}, err
	}
	if rel.Present() {
		rows.kernel = strings.Replace(rows.kernel, "carve_a23_", "carve_a23rel_", 1)
		for _, t := range []kernels.RelTable{rel.C2P, rel.P2C} {
			if !t.Present {
				rows.params = append(rows.params, nullp(), nullp(), i64p(0), i64p(0))
				continue
			}
			if !fits32(t.SH, t.R, t.Rows*t.R) {
				return plan{}, fmt.Errorf("relative-bias table of %d rows of %d terms is too large for the CUDA kernels", t.Rows, t.R)
			}
			rows.params = append(rows.params, inp(t.Tab), inp(t.Index), i64p(t.SB), pack32(t.SH, t.R))
		}
		return plan{tactic: tactic, parts: parts, prog: append(prog, rows)}, nil
	}
	if tactic == "flash-tile" {
		tile := step{kernel: fmt.Sprintf("carve_a23_tile_%s_%d", name, g.d),
			grid:  Dim3{X: uint32((g.s + a23TileRows - 1) / a23TileRows), Y: uint32(g.b * g.hq), Z: 1},
			block: Dim3{X: a23TileThreads, Y: 1, Z: 1}, shared: a23TileShared(g.d, es), params: ps}
		return plan{tactic: tactic, parts: parts, prog: append(prog, tile)}, nil
	}
	if tactic != "flash-mma" {
		return plan{tactic: tactic, parts: parts, prog: append(prog, rows)}, nil
	}
	mma := a23MMAStep(name, g, a23MMAVariant(mkind, softcap, scale, !win.Unbounded()), ps, rows)
	return plan{tactic: tactic, parts: parts, prog: append(prog, mma)}, nil
}

// a23Views is the core's tensors and their strides, in elements.
type a23Views struct {
	q, k, v, out   param
	qs, ks, vs, os a23Strides
}

// a23Params is the parameters of every core kernel of csrc/attention23.cu, A23_PARAMS in its
// order: the one place that lays them out, for ONNX Attention and GroupQueryAttention's prefill
// (which passes its seqlens_k and total_sequence_length with flag a23GQA; nullp() otherwise).
func a23Params(x a23Views, g a23Geom, mask param, mkind, maskT int64, ms a23Strides, flags int, scale, softcap float32,
	win graph.AttentionBand, seqlens, total param) []param {
	ps := []param{x.q, x.k, x.v, x.out, mask}
	for _, st := range []a23Strides{x.qs, x.ks, x.vs, x.os} {
		ps = append(ps, st.params()...)
	}
	return append(ps, pack32(g.b, g.hq), pack32(g.hkv, g.s), pack32(g.t, g.p), pack32(g.d, g.dv),
		pack32(mkind, maskT), i64p(ms.b), pack32(ms.h, ms.r), i32p(flags), f32p(scale), f32p(softcap),
		pack32(win.Left, win.Right), seqlens, total)
}

// a23RowsStep is the rows kernel (one warp per query row) over ps.
func a23RowsStep(name string, g a23Geom, ps []param) (step, error) {
	dpl, err := dplFor(g.dv)
	if err != nil {
		return step{}, err
	}
	return step{kernel: fmt.Sprintf("carve_a23_%s_%d", name, dpl),
		grid:  Dim3{X: uint32((g.s + a23RowsWarps - 1) / a23RowsWarps), Y: uint32(g.b * g.hq), Z: 1},
		block: Dim3{X: 32 * a23RowsWarps, Y: 1, Z: 1}, shared: uint32(a23RowsWarps * g.d * 4), params: ps}, nil
}

// a23MMAStep is the tensor-core kernel of variant over ps, the rows kernel its fallback when a
// tensor is not 16-byte aligned at run time.
func a23MMAStep(name string, g a23Geom, variant string, ps []param, rows step) step {
	return step{kernel: fmt.Sprintf("carve_a23_mma%s_%s_%d", variant, name, g.d),
		grid:  Dim3{X: uint32((g.s + a23MMARows - 1) / a23MMARows), Y: uint32(g.b * g.hq), Z: 1},
		block: Dim3{X: a23MMAThreads, Y: 1, Z: 1}, shared: a23MMAShared(g.d), params: ps,
		align: 16, alignOnly: []int{0, 1, 2, 3}, fallback: &rows}
}

// a23MMAVariant names the tensor-core kernel (csrc A23_PLAIN, A23_FMASK, A23_BMASK, A23_GEN):
// the plain one reads no mask and takes the row maximum of the raw dots, which is that of the
// scaled scores only for a positive scale; the masked ones take any scale; softcap, and a
// scale that is not positive without a mask, and a window, take the general one.
func a23MMAVariant(mkind int64, softcap, scale float32, window bool) string {
	switch {
	case softcap > 0 || window:
		return "gen"
	case mkind == a23MaskFloat:
		return "fmask"
	case mkind == a23MaskBool:
		return "bmask"
	case !(scale > 0):
		return "gen"
	}
	return ""
}

// a23Tactic picks the tensor-core kernel where it applies (16-bit types, D == Dv in {64, 128},
// every stride a whole number of 16-byte units) and the tiled one where it does not but the
// head size is one it is built for (D == Dv in {32, 64, 128} in float32, 32 in 16-bit types).
func a23Tactic(dt graph.DType, g a23Geom, sts ...a23Strides) string {
	half := dt == graph.Float16 || dt == graph.BFloat16
	tile := g.d == g.dv && (g.d == 32 || dt == graph.Float32 && (g.d == 64 || g.d == 128))
	if !half || g.d != g.dv || (g.d != 64 && g.d != 128) {
		if tile {
			return "flash-tile"
		}
		return "flash"
	}
	for _, st := range sts {
		if st.b%8 != 0 || st.h%8 != 0 || st.r%8 != 0 {
			return "flash"
		}
	}
	return "flash-mma"
}

// boundONNXAttention is W: only a past without present outputs needs workspace, which grows
// with every dim, so it is taken at the largest.
func boundONNXAttention(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	q, okQ := r.Input(0)
	k, okK := r.Input(1)
	v, okV := r.Input(2)
	if !okQ || !okK || !okV {
		return kernels.Bound{}, fmt.Errorf("Q, K and V are required")
	}
	pk, okP := r.Input(4)
	g, _, err := a23Dims(r.Attrs, rangeDims(q, true, true), rangeDims(k, true, true), rangeDims(v, true, true), rangeDims(pk, okP, true))
	if err != nil {
		return kernels.Bound{}, err
	}
	_, presentK := r.Output(1)
	_, presentV := r.Output(2)
	parts, err := a23KVParts(g, q.DType.Size(), presentK, presentV)
	if err != nil || len(parts) == 0 {
		return kernels.Bound{}, err
	}
	return recipeBound("flash", parts)
}

func onnxAttentionOps() []*op {
	tac := []kernels.TacticInfo{
		{Name: "flash-mma", Summary: "float16/bfloat16, head size 64 or 128: FlashAttention-2 on tensor cores (mma.sync, float32 accumulation), 64x64 tiles; workspace only for keys and values of a past without present outputs", Workspace: true},
		{Name: "flash-tile", Summary: "float32 at head size 32, 64 or 128, 16-bit types at 32: 64 query rows by 64-key tiles in shared memory on the CUDA cores, float32 throughout, online softmax; workspace only for keys and values of a past without present outputs", Workspace: true},
		{Name: "flash", Summary: "one warp per query row, online softmax over all keys; workspace only for keys and values of a past without present outputs", Workspace: true},
	}
	return []*op{{key: kernels.Key("", "Attention"), tactics: tac, sel: selectONNXAttention, bound: boundONNXAttention}}
}
