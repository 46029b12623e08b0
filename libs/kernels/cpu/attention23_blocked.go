package cpu

import (
	"math"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/gemm"
	"carve.dev/libs/kernels/internal/vec"
)

// The float32 form of ONNX Attention's flash tactic works on blocks of query rows: a task is
// (batch, query head, block of blockRows rows), and walks the keys the block sees in blocks of
// blockKeys. Per key block, the scores are one matrix product (Q K^T, package gemm), the
// masks are applied to whole rows (package vec), each row's running maximum and sum are
// updated (online softmax: earlier output is rescaled when the maximum grows), and the
// weighted values are a second product accumulated into the output rows. The workspace is a
// block of scores and the products' packing per worker, whatever S and T are.
const (
	blockRows = 64
	blockKeys = 256
)

// negInfBits is -Inf's bits, what a bool mask's false keys get.
var negInfBits = [1]uint32{0xff800000}

// attn23BlockedSlot is one worker's scratch: blockRows x blockKeys scores and the products'
// workspace.
func attn23BlockedSlot(g attn23Dims) int64 {
	rows, keys := min(g.s, blockRows), min(max(g.t, 1), blockKeys)
	return rows*keys + max(gemm.Workspace(rows, keys, g.d, gemm.Transposed, 1), gemm.Workspace(rows, g.dv, keys, gemm.RowMajor, 1))
}

// attn23BlockedParts is the float32 recipe: one scratch slot per worker.
func attn23BlockedParts(g attn23Dims, workers int64) ([]alloc.Part, error) {
	tasks, err := kernels.Product(g.b, g.hq, (g.s+blockRows-1)/blockRows)
	if err != nil {
		return nil, err
	}
	if _, err := kernels.Product(g.b, g.hq, g.s, max(g.t, g.d, g.dv, 1), 4); err != nil {
		return nil, err
	}
	part, err := f32Part("scores", max(min(workers, tasks), 1), attn23BlockedSlot(g))
	if err != nil {
		return nil, err
	}
	return []alloc.Part{part}, nil
}

// blockedRows runs tasks [lo, hi) of the float32 form as slot.
func blockedRows(r *attn23Run, slot, lo, hi int) {
	a := r.a
	per := int(attn23BlockedSlot(attn23Dims{s: int64(a.s), t: int64(a.t), d: int64(a.d), dv: int64(a.dv)}))
	scratch := r.scores[slot*per : (slot+1)*per]
	nr, nk := min(a.s, blockRows), min(max(a.t, 1), blockKeys)
	sc, ws := scratch[:nr*nk], scratch[nr*nk:]
	q, k, v := kernels.ViewAs[float32](r.q), kernels.ViewAs[float32](r.k), kernels.ViewAs[float32](r.v)
	pk, pv := kernels.ViewAs[float32](r.pk), kernels.ViewAs[float32](r.pv)
	y := kernels.ViewAs[float32](r.y)
	var maskF []float32
	if a.mask != 0 && a.mask == a.dt {
		maskF = kernels.ViewAs[float32](r.mask)
	}
	qv, yv := viewOf(a.geom.Q), viewOf(a.geom.Y)
	qv.data, yv.data = q, y
	kpast, kcur := a.kvViews(a.d, false)
	vpast, vcur := a.kvViews(a.dv, true)
	kpast.data, kcur.data, vpast.data, vcur.data = pk, k, pv, v
	blocks := (a.s + blockRows - 1) / blockRows
	group := a.hq / a.hkv
	ninf := float32(math.Inf(-1))
	rel := a.rel.Present()
	var mx, sum [blockRows]float32
	var firstOf, keysOf [blockRows]int
	for task := lo; task < hi; task++ {
		bh, rb := task/blocks, task%blocks
		b, h := bh/a.hq, bh%a.hq
		kh := h / group
		i0 := rb * blockRows
		rows := min(blockRows, a.s-i0)
		start, span := a.t, 0 // keys [start, span) are those any row of the block sees
		for i := 0; i < rows; i++ {
			first, keys := a.keyRange(i0 + i)
			if a.mask != 0 {
				keys = min(keys, a.maskT)
			}
			firstOf[i], keysOf[i], mx[i], sum[i] = first, keys, ninf, 0
			if first < keys {
				start, span = min(start, first), max(span, keys)
			}
		}
		out := yv.data[yv.at(b, h, i0):]
		for i := 0; i < rows; i++ {
			clear(out[i*yv.st : i*yv.st+a.dv])
		}
		qm := gemm.Mat{Data: qv.data[qv.at(b, h, i0):], Ld: qv.st}
		for j0 := start; j0 < span; j0 += nk {
			j1 := min(j0+nk, span)
			w := j1 - j0
			// scores of the block's rows against keys [j0, j1), past and new keys apart
			for _, seg := range [2]struct {
				kv     *view3
				s0, s1 int
				first  int
				isPast bool
			}{{&kpast, j0, min(j1, a.p), j0, true}, {&kcur, max(j0, a.p), j1, max(j0, a.p) - a.p, false}} {
				if seg.s0 >= seg.s1 {
					continue
				}
				p := gemm.NewPlan(rows, seg.s1-seg.s0, a.d, gemm.Transposed, 1)
				km := gemm.Mat{Data: seg.kv.data[seg.kv.at(b, kh, seg.first):], Ld: seg.kv.st, Trans: true}
				p.Run(qm, km, nil, sc[seg.s0-j0:], w, a.scale, false, ws)
			}
			for i := 0; i < rows; i++ {
				row := sc[i*w : (i+1)*w]
				from, keys := max(firstOf[i]-j0, 0), keysOf[i]
				if keys <= j0 || from >= min(keys, j1)-j0 {
					clear(row)
					continue
				}
				clear(row[:from])
				vis := row[from : min(keys, j1)-j0]
				if a.softcap > 0 {
					vec.VS(vec.Mul, vis, vis, 1/a.softcap)
					vec.Tanh(vis, vis)
					vec.VS(vec.Mul, vis, vis, a.softcap)
				}
				if rel {
					r.addRel(vis, b, h, i0+i, j0+from)
				}
				if a.mask != 0 {
					mo := b*a.maskSB + h*a.maskSH + (i0+i)*a.maskS + j0 + from
					if maskF != nil {
						vec.VV(vec.Add, vis, vis, maskF[mo:mo+len(vis)])
					} else {
						bits := kernels.ViewAs[uint32](kernels.BytesOf(vis))
						vec.Select32(bits, r.mask[mo:mo+len(vis)], bits, negInfBits[:])
					}
				}
				bmax := vec.Max(vis)
				if bmax == ninf {
					clear(row)
					continue
				}
				if bmax > mx[i] {
					if sum[i] > 0 { // rescale what the earlier key blocks gave
						alpha := vec.Exp32(mx[i] - bmax)
						sum[i] *= alpha
						vec.Scale(out[i*yv.st:i*yv.st+a.dv], alpha)
					}
					mx[i] = bmax
				}
				sum[i] += vec.ExpShift(vis, vis, mx[i])
				clear(row[from+len(vis):])
			}
			// out += P V over the same keys
			for _, seg := range [2]struct {
				kv     *view3
				s0, s1 int
				first  int
			}{{&vpast, j0, min(j1, a.p), j0}, {&vcur, max(j0, a.p), j1, max(j0, a.p) - a.p}} {
				if seg.s0 >= seg.s1 {
					continue
				}
				p := gemm.NewPlan(rows, a.dv, seg.s1-seg.s0, gemm.RowMajor, 1)
				vm := gemm.Mat{Data: seg.kv.data[seg.kv.at(b, kh, seg.first):], Ld: seg.kv.st}
				p.Run(gemm.Mat{Data: sc[seg.s0-j0:], Ld: w}, vm, nil, out, yv.st, 1, true, ws)
			}
		}
		for i := 0; i < rows; i++ {
			o := out[i*yv.st : i*yv.st+a.dv]
			if sum[i] > 0 {
				vec.Scale(o, 1/sum[i])
			} else {
				clear(o) // no key visible: a zero row, as PyTorch gives
			}
		}
	}
}
