package cpu

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
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
	ms := n.Key().Domain == kernels.DomainMicrosoft
	r := &rotary{posIn: 1, cosIn: 2, sinIn: 3, workers: d.Workers}
	if ms {
		if err := kernels.CheckArity(n, 4, 4, 1, 1); err != nil {
			return plan{}, err
		}
		if n.Attrs.Int("is_packed_batching", 0) != 0 {
			return plan{}, fmt.Errorf("is_packed_batching is not supported")
		}
	} else {
		if err := kernels.CheckArity(n, 3, 4, 1, 1); err != nil {
			return plan{}, err
		}
		r.cosIn, r.sinIn, r.posIn = 1, 2, 3
		if _, ok := n.Input(3); !ok {
			r.posIn = -1
		}
	}
	x := n.Inputs[0]
	if !halfOK(x.DType) {
		return plan{}, fmt.Errorf("input is %v", x.DType)
	}
	r.dt, r.bf = x.DType, x.DType == graph.BFloat16
	cs, sn := n.Inputs[r.cosIn], n.Inputs[r.sinIn]
	if cs.DType != x.DType || sn.DType != x.DType || !equalShape(cs.Shape, sn.Shape) {
		return plan{}, fmt.Errorf("cos/sin caches %v and %v for input %v", cs, sn, x.DType)
	}
	half := int(cs.Shape[len(cs.Shape)-1])
	heads := int(n.Attrs.Int("num_heads", 0))
	r.rot = int(n.Attrs.Int("rotary_embedding_dim", 0))
	switch len(x.Shape) {
	case 3:
		r.bsnh = true
		r.b, r.s = int(x.Shape[0]), int(x.Shape[1])
		hidden := int(x.Shape[2])
		if heads == 0 {
			if r.rot != 0 {
				return plan{}, fmt.Errorf("rotary_embedding_dim needs num_heads for a 3-D input")
			}
			if half == 0 || hidden%(2*half) != 0 {
				return plan{}, fmt.Errorf("hidden size %d is not a multiple of the cache's rotary dim %d", hidden, 2*half)
			}
			heads = hidden / (2 * half)
		}
		if heads <= 0 || hidden%heads != 0 {
			return plan{}, fmt.Errorf("hidden size %d does not split into %d heads", hidden, heads)
		}
		r.n, r.d = heads, hidden/heads
	case 4:
		r.b, r.n, r.s, r.d = int(x.Shape[0]), int(x.Shape[1]), int(x.Shape[2]), int(x.Shape[3])
	default:
		return plan{}, fmt.Errorf("input shape %v, want 3-D or 4-D", x.Shape)
	}
	if r.rot == 0 {
		r.rot = r.d
	}
	if r.rot%2 != 0 || r.rot > r.d || half != r.rot/2 {
		return plan{}, fmt.Errorf("rotary dim %d, head size %d, cache width %d", r.rot, r.d, half)
	}
	r.interleaved = n.Attrs.Int("interleaved", 0) != 0
	if r.posIn >= 0 {
		p := n.Inputs[r.posIn]
		if p.DType != graph.Int64 {
			return plan{}, fmt.Errorf("position_ids are %v, want int64", p.DType)
		}
		switch {
		case numel(p.Shape) == 1 && len(p.Shape) <= 1:
			r.posScalar = true
		case len(p.Shape) == 2 && p.Shape[0] == int64(r.b) && p.Shape[1] == int64(r.s):
		default:
			return plan{}, fmt.Errorf("position_ids shape %v, want [1] or [%d, %d]", p.Shape, r.b, r.s)
		}
		if len(cs.Shape) != 2 {
			return plan{}, fmt.Errorf("cos_cache shape %v, want [max_position, %d]", cs.Shape, half)
		}
		r.maxPos = int(cs.Shape[0])
	} else if len(cs.Shape) != 3 || cs.Shape[0] != int64(r.b) || cs.Shape[1] != int64(r.s) {
		return plan{}, fmt.Errorf("without position_ids, cos_cache must be [%d, %d, %d], is %v", r.b, r.s, half, cs.Shape)
	}
	if err := kernels.CheckOutput(n, 0, x.DType, x.Shape); err != nil {
		return plan{}, err
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

// position returns the cache row of (b, s), or an error when it is outside the cache.
func (r *rotary) position(pos kernels.Tensor, b, s int) (int, error) {
	if r.posIn < 0 {
		return b*r.s + s, nil
	}
	var p int64
	if r.posScalar {
		p = pos.Int64s()[0] + int64(s)
	} else {
		p = pos.Int64s()[b*r.s+s]
	}
	if p < 0 || p >= int64(r.maxPos) {
		return 0, fmt.Errorf("position %d outside the cache of %d positions", p, r.maxPos)
	}
	return int(p), nil
}

func (r *rotary) run(in, out []kernels.Tensor, _ wsParts) error {
	var pos kernels.Tensor
	if r.posIn >= 0 {
		pos = in[r.posIn]
	}
	for b := 0; b < r.b; b++ {
		for s := 0; s < r.s; s++ {
			if _, err := r.position(pos, b, s); err != nil {
				return err
			}
		}
	}
	runRanges(r, in, out, r.b*r.s, r.n*r.d, weightRow, r.workers)
	return nil
}

// runRange rotates the rows of (batch, position) pairs [lo, hi), b*S + s, every head of each.
func (r *rotary) runRange(in, out []kernels.Tensor, lo, hi int) {
	var pos kernels.Tensor
	if r.posIn >= 0 {
		pos = in[r.posIn]
	}
	if r.dt == graph.Float32 {
		rotaryRun[float32](r, in, out, pos, lo, hi)
	} else {
		rotaryRun[uint16](r, in, out, pos, lo, hi)
	}
}

func rotaryRun[E elt](r *rotary, in, out []kernels.Tensor, pos kernels.Tensor, lo, hi int) {
	x, y := kernels.ViewAs[E](in[0].Data), kernels.ViewAs[E](out[0].Data)
	cosE, sinE := kernels.ViewAs[E](in[r.cosIn].Data), kernels.ViewAs[E](in[r.sinIn].Data)
	half := r.rot / 2
	var cbuf, sbuf [512]float32
	cos32, _ := any(cosE).([]float32)
	sin32, _ := any(sinE).([]float32)
	for bs := lo; bs < hi; bs++ {
		b, s := bs/r.s, bs%r.s
		p, _ := r.position(pos, b, s)
		cos, sin := cbuf[:0], sbuf[:0]
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
			var o int
			if r.bsnh {
				o = ((b*r.s+s)*r.n + h) * r.d
			} else {
				o = ((b*r.n+h)*r.s + s) * r.d
			}
			rope(y[o:o+r.d], x[o:o+r.d], cos, sin, r.rot, r.interleaved, r.bf)
		}
	}
}

func rotaryOps() []*op {
	return []*op{
		{key: kernels.Key(kernels.DomainMicrosoft, "RotaryEmbedding"), tactics: direct, sel: selectRotary},
		{key: kernels.Key("", "RotaryEmbedding"), tactics: direct, sel: selectRotary},
	}
}
