package cpu

import (
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Resize (opset 10 to 21) and Upsample (opset 7 to 9) on float32, with the checks of
// kernels.CheckResize: modes nearest (any rank, every nearest_mode) and linear (the last two
// dims, bilinear; the leading dims unchanged), coordinate transformations half_pixel,
// half_pixel_symmetric, pytorch_half_pixel, align_corners and asymmetric. The scales are read
// from their input at run time (or the attribute), else out/in for sizes. One tactic,
// "direct": each output row computed from its source coordinates, planes in parallel, no
// workspace. A source coordinate is clamped into the input, as onnxruntime does.
type resize struct {
	rs      kernels.ResizeNode
	in, out []int64
	workers int
}

// maxResizeRank bounds Resize's rank, so that the run keeps its scales on the stack.
const maxResizeRank = 8

func resizeOps() []*op {
	return []*op{
		{key: kernels.Key("", "Resize"), tactics: direct, sel: selectResize},
		{key: kernels.Key("", "Upsample"), tactics: direct, sel: selectResize},
	}
}

func selectResize(n *kernels.Node, d kernels.Target) (plan, error) {
	rs, err := kernels.CheckResize(n)
	if err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	if x.DType != graph.Float32 {
		return plan{}, fmt.Errorf("input is %v: the CPU %s computes float32 only", x.DType, n.Op)
	}
	if len(x.Shape) > maxResizeRank || len(x.Shape) == 0 {
		return plan{}, fmt.Errorf("rank %d: want 1 to %d", len(x.Shape), maxResizeRank)
	}
	return plan{tactic: "direct", r: &resize{rs: rs, in: x.Shape, out: n.Outputs[0].Shape, workers: d.Workers}}, nil
}

// scales fills s with every dim's scale: the scales input's or attribute's where given, else
// out/in.
func (r *resize) scales(in []kernels.Tensor, s *[maxResizeRank]float64) {
	for i := range r.in {
		s[i] = float64(r.out[i]) / float64(max(r.in[i], 1))
	}
	var given []float32
	if i := r.rs.ScalesInput; i >= 0 && i < len(in) && in[i].Data != nil {
		given = in[i].Float32s()
	} else if r.rs.AttrScales != nil {
		given = r.rs.AttrScales
	}
	for j, a := range r.rs.Axes {
		if j < len(given) && given[j] > 0 {
			s[a] = float64(given[j])
		}
	}
}

// source maps output coordinate o of a dim of in -> out elements at scale s to the input's.
func (r *resize) source(o, in, out int64, s float64) float64 {
	x := float64(o)
	switch r.rs.Coord {
	case "asymmetric":
		return x / s
	case "align_corners":
		if out == 1 {
			return 0
		}
		return x * float64(in-1) / float64(out-1)
	case "pytorch_half_pixel":
		if out == 1 {
			return 0
		}
		return (x+0.5)/s - 0.5
	case "half_pixel_symmetric":
		adj := float64(out) / (s * float64(in))
		center := float64(in) / 2
		return center*(1-adj) + (x+0.5)/s - 0.5
	}
	return (x+0.5)/s - 0.5 // half_pixel
}

// nearest rounds a source coordinate by nearest_mode and clamps it into [0, in).
func (r *resize) nearest(x float64, in int64) int64 {
	var i float64
	switch r.rs.Nearest {
	case "floor":
		i = math.Floor(x)
	case "ceil":
		i = math.Ceil(x)
	case "round_prefer_ceil":
		i = math.Floor(x + 0.5)
	default: // round_prefer_floor
		i = math.Ceil(x - 0.5)
	}
	return min(max(int64(i), 0), in-1)
}

// linear is the two taps and the second's weight of a source coordinate, clamped into [0, in).
func linearTaps(x float64, in int64) (i0, i1 int64, w float64) {
	x = max(0, min(x, float64(in-1)))
	i0 = min(int64(x), in-1)
	i1 = min(i0+1, in-1)
	return i0, i1, x - float64(i0)
}

func (r *resize) run(in, out []kernels.Tensor, _ wsParts) error {
	rank := len(r.in)
	planes := 1
	if r.rs.Mode == "linear" && rank >= 2 {
		planes = numel(r.out[:rank-2])
	} else if rank > 1 {
		planes = numel(r.out[:rank-1]) // output rows
	}
	per := numel(r.out) / max(planes, 1)
	runRanges(r, in, out, planes, per, weightRow, r.workers)
	return nil
}

// runRange computes planes (linear) or output rows (nearest) [lo, hi).
func (r *resize) runRange(in, out []kernels.Tensor, lo, hi int) {
	var s [maxResizeRank]float64
	r.scales(in, &s)
	x, y := in[0].Float32s(), out[0].Float32s()
	rank := len(r.in)
	if r.rs.Mode == "linear" {
		ih, iw, oh, ow := int64(1), r.in[rank-1], int64(1), r.out[rank-1]
		sh := 1.0
		if rank >= 2 {
			ih, oh, sh = r.in[rank-2], r.out[rank-2], s[rank-2]
		}
		sw := s[rank-1]
		for p := lo; p < hi; p++ {
			xp := x[int64(p)*ih*iw:][:ih*iw]
			yp := y[int64(p)*oh*ow:][:oh*ow]
			for i := range oh {
				y0, y1, wy := linearTaps(r.source(i, ih, oh, sh), ih)
				if rank < 2 {
					y0, y1, wy = 0, 0, 0
				}
				r0, r1 := xp[y0*iw:][:iw], xp[y1*iw:][:iw]
				yr := yp[i*ow:][:ow]
				for j := range ow {
					x0, x1, wx := linearTaps(r.source(j, iw, ow, sw), iw)
					top := float64(r0[x0]) + (float64(r0[x1])-float64(r0[x0]))*wx
					bot := float64(r1[x0]) + (float64(r1[x1])-float64(r1[x0]))*wx
					yr[j] = float32(top + (bot-top)*wy)
				}
			}
		}
		return
	}
	last := rank - 1
	iw, ow := r.in[last], r.out[last]
	for row := lo; row < hi; row++ {
		// the source row: each leading output coordinate mapped to the input's
		src, rest := int64(0), int64(row)
		stride := int64(1)
		for d := last - 1; d >= 0; d-- {
			o := rest % r.out[d]
			rest /= r.out[d]
			src += r.nearest(r.source(o, r.in[d], r.out[d], s[d]), r.in[d]) * stride
			stride *= r.in[d]
		}
		xr := x[src*iw:][:iw]
		yr := y[int64(row)*ow:][:ow]
		for j := range ow {
			yr[j] = xr[r.nearest(r.source(j, iw, ow, s[last]), iw)]
		}
	}
}
