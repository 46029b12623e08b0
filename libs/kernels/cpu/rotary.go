package cpu

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/vec"
)

// rope rotates one head vector: the first rot elements of src, in halves (x[k], x[k+rot/2]) or
// interleaved pairs (x[2k], x[2k+1]), by the angles whose cosines and sines are cos[k], sin[k]
// (k < rot/2); the rest is copied. dst may be src.
func rope[E elt](dst, src []E, cos, sin []float32, rot int, interleaved, bf bool) {
	if d, ok := any(dst).([]float32); ok {
		ropeF32(d, any(src).([]float32), cos, sin, rot, interleaved)
		return
	}
	half := rot / 2
	if interleaved {
		for k := 0; k < half; k++ {
			x0, x1 := ld(src[2*k], bf), ld(src[2*k+1], bf)
			dst[2*k] = st[E](x0*cos[k]-x1*sin[k], bf)
			dst[2*k+1] = st[E](x1*cos[k]+x0*sin[k], bf)
		}
	} else {
		for k := 0; k < half; k++ {
			x0, x1 := ld(src[k], bf), ld(src[k+half], bf)
			dst[k] = st[E](x0*cos[k]-x1*sin[k], bf)
			dst[k+half] = st[E](x1*cos[k]+x0*sin[k], bf)
		}
	}
	if &dst[0] != &src[0] {
		copy(dst[rot:len(src)], src[rot:])
	}
}

// ropeF32 is rope for float32.
func ropeF32(dst, src, cos, sin []float32, rot int, interleaved bool) {
	half := rot / 2
	cos, sin = cos[:half], sin[:half]
	if interleaved {
		s, d := src[:2*half], dst[:2*half]
		for k, c := range cos {
			x0, x1, sn := s[2*k], s[2*k+1], sin[k]
			d[2*k] = x0*c - x1*sn
			d[2*k+1] = x1*c + x0*sn
		}
	} else {
		s0, s1, d0, d1 := src[:half], src[half:2*half], dst[:half], dst[half:2*half]
		for k, c := range cos {
			x0, x1, sn := s0[k], s1[k], sin[k]
			d0[k] = x0*c - x1*sn
			d1[k] = x1*c + x0*sn
		}
	}
	if &dst[0] != &src[0] {
		copy(dst[rot:len(src)], src[rot:])
	}
}

// rotary is RotaryEmbedding: com.microsoft's (input, position_ids, cos_cache, sin_cache) and
// ONNX opset 23's (X, cos_cache, sin_cache, position_ids?).
type rotary struct {
	dt                  graph.DType
	bf                  bool
	b, s, n, d, rot     int
	bsnh                bool // 3-D input [B, S, N*D]; else [B, N, S, D]
	interleaved         bool
	posIn, cosIn, sinIn int // input indices; posIn -1 when cos/sin are already per position
	maxPos              int
	posScalar           bool // position_ids of shape [1]: an offset
	workers             int
}

func selectRotary(n *kernels.Node, d kernels.Target) (plan, error) {
	g, err := kernels.CheckRotary(n)
	if err != nil {
		return plan{}, err
	}
	dt := n.Inputs[0].DType
	r := &rotary{
		dt: dt, bf: dt == graph.BFloat16, b: int(g.B), s: int(g.S), n: int(g.Heads), d: int(g.D), rot: int(g.Rot),
		bsnh: g.BSNH, interleaved: g.Interleaved, posIn: g.PosIn, cosIn: g.CosIn, sinIn: g.SinIn, posScalar: g.PosScalar,
		workers: d.Workers,
	}
	if g.PosIn >= 0 {
		r.maxPos = int(g.MaxPos)
	}
	return plan{tactic: "direct", r: r}, nil
}

func equalShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkPositions returns an error naming the first position outside the cache, if any: one
// tight pass before the rows fan out, so that runRange need not check.
func (r *rotary) checkPositions(pos kernels.Tensor) error {
	if r.posIn < 0 {
		return nil
	}
	ids := pos.Int64s()
	if r.posScalar {
		ids = ids[:1]
	} else {
		ids = ids[:r.b*r.s]
	}
	for _, p := range ids {
		last := p
		if r.posScalar {
			last = p + int64(r.s) - 1
		}
		switch {
		case p < 0:
			return fmt.Errorf("position %d outside the cache of %d positions", p, r.maxPos)
		case last >= int64(r.maxPos):
			return fmt.Errorf("position %d outside the cache of %d positions", max(p, int64(r.maxPos)), r.maxPos)
		}
	}
	return nil
}

// position returns the cache row of (b, s), which checkPositions has found inside the cache.
func (r *rotary) position(ids []int64, b, s int) int {
	switch {
	case r.posIn < 0:
		return b*r.s + s
	case r.posScalar:
		return int(ids[0]) + s
	default:
		return int(ids[b*r.s+s])
	}
}

func (r *rotary) run(in, out []kernels.Tensor, _ wsParts) error {
	var pos kernels.Tensor
	if r.posIn >= 0 {
		pos = in[r.posIn]
	}
	if err := r.checkPositions(pos); err != nil {
		return err
	}
	runRanges(r, in, out, r.b*r.s, r.n*r.d, weightRow, r.workers)
	return nil
}

// runRange rotates the rows of (batch, position) pairs [lo, hi), b*S + s, every head of each.
func (r *rotary) runRange(in, out []kernels.Tensor, lo, hi int) {
	var ids []int64
	if r.posIn >= 0 {
		ids = in[r.posIn].Int64s()
	}
	if r.dt == graph.Float32 {
		rotaryRun[float32](r, in, out, ids, lo, hi)
	} else {
		rotaryRun[uint16](r, in, out, ids, lo, hi)
	}
}

func rotaryRun[E elt](r *rotary, in, out []kernels.Tensor, ids []int64, lo, hi int) {
	x, y := kernels.ViewAs[E](in[0].Data), kernels.ViewAs[E](out[0].Data)
	cosE, sinE := kernels.ViewAs[E](in[r.cosIn].Data), kernels.ViewAs[E](in[r.sinIn].Data)
	if x32, ok := any(x).([]float32); ok && !r.interleaved {
		r.rowsF32(x32, any(y).([]float32), any(cosE).([]float32), any(sinE).([]float32), ids, lo, hi)
		return
	}
	half := r.rot / 2
	var cbuf, sbuf [512]float32
	cos32, _ := any(cosE).([]float32)
	sin32, _ := any(sinE).([]float32)
	for bs := lo; bs < hi; bs++ {
		b, s := bs/r.s, bs%r.s
		p := r.position(ids, b, s)
		var cos, sin []float32
		switch {
		case cos32 != nil: // float32 caches are used in place
			cos, sin = cos32[p*half:(p+1)*half], sin32[p*half:(p+1)*half]
		case half <= len(cbuf):
			cos, sin = cbuf[:half], sbuf[:half]
		default:
			cos, sin = make([]float32, half), make([]float32, half)
		}
		if cos32 == nil {
			for k := 0; k < half; k++ {
				cos[k], sin[k] = ld(cosE[p*half+k], r.bf), ld(sinE[p*half+k], r.bf)
			}
		}
		for h := 0; h < r.n; h++ {
			o := ((b*r.s+s)*r.n + h) * r.d
			if !r.bsnh {
				o = ((b*r.n+h)*r.s + s) * r.d
			}
			rope(y[o:o+r.d], x[o:o+r.d], cos, sin, r.rot, r.interleaved, r.bf)
		}
	}
}

// rowsF32 is rotaryRun for float32 in the half form: runs of positions of one batch, every
// head of each, in one vec.RopeRows call (a call a position cost as much as its rotations).
func (r *rotary) rowsF32(x, y, cos, sin []float32, ids []int64, lo, hi int) {
	half := r.rot / 2
	rowStride, headStride := r.n*r.d, r.d // [B, S, N*D]
	if !r.bsnh {
		rowStride, headStride = r.d, r.s*r.d // [B, N, S, D]
	}
	inPlace := len(x) > 0 && &x[0] == &y[0]
	var buf [64]int64
	for bs := lo; bs < hi; {
		b, s := bs/r.s, bs%r.s
		end := min(hi, (b+1)*r.s)
		var pos []int64
		if r.posIn >= 0 && !r.posScalar {
			pos = ids[bs:end] // position_ids [B, S]: the cache rows themselves
		} else {
			end = min(end, bs+len(buf))
			pos = buf[:end-bs]
			for i := range pos {
				pos[i] = int64(r.position(ids, b, s+i))
			}
		}
		o := (b*r.s + s) * rowStride // the first position's first head
		if !r.bsnh {
			o = (b*r.n*r.s + s) * r.d
		}
		vec.RopeRows(y[o:], x[o:], cos, sin, pos, half, r.n, headStride, rowStride)
		if r.rot < r.d && !inPlace { // the lanes past the rotary dim are copied
			for i := range pos {
				for h := range r.n {
					oh := o + i*rowStride + h*headStride
					copy(y[oh+r.rot:oh+r.d], x[oh+r.rot:oh+r.d])
				}
			}
		}
		bs = end
	}
}

func rotaryOps() []*op {
	return []*op{
		{key: kernels.Key(kernels.DomainMicrosoft, "RotaryEmbedding"), tactics: direct, sel: selectRotary},
		{key: kernels.Key("", "RotaryEmbedding"), tactics: direct, sel: selectRotary},
	}
}
