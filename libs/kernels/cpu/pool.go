package cpu

import (
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// MaxPool and AveragePool (1-D to 3-D; kernel_shape, strides, dilations, pads, auto_pad,
// ceil_mode; AveragePool's count_include_pad) and GlobalAveragePool and GlobalMaxPool, on
// float32, with the checks of kernels.CheckPool and kernels.CheckGlobalPool. One tactic,
// "direct": each output plane (image, channel) on one participant, in parallel over planes, no
// workspace. A window's taps outside the input are skipped; AveragePool divides by the taps
// inside the input, or with count_include_pad by those inside the padded input (the explicit or
// SAME pads, not the extra end a ceil_mode window reaches), as onnxruntime does. MaxPool's
// Indices output is refused.
type pool struct {
	max      bool
	inclPad  bool
	global   bool
	geo      geom3
	end      [3]int // the end pads
	planes   int
	inVol, p int
	workers  int
	// spans are MaxPool's tap ranges, made once at Select: spans[d][o] the taps of output o along
	// dim d that lie inside the input.
	spans [3][]tapSpan
}

// tapSpan is the range [k0, k1) of a window's taps that lie inside the input, the window
// starting at input index i0 (which may be negative).
type tapSpan struct{ k0, k1, i0 int }

// makeSpans fills pl.spans from its geometry.
func (pl *pool) makeSpans() {
	g := &pl.geo
	for d := range 3 {
		pl.spans[d] = make([]tapSpan, g.out[d])
		for o := range g.out[d] {
			i0 := o*g.s[d] - g.p[d]
			k0, k1 := 0, g.k[d]
			for k0 < k1 && i0+k0*g.d[d] < 0 {
				k0++
			}
			for k1 > k0 && i0+(k1-1)*g.d[d] >= g.in[d] {
				k1--
			}
			pl.spans[d][o] = tapSpan{k0, k1, i0}
		}
	}
}

func poolOps() []*op {
	return []*op{
		{key: kernels.Key("", "MaxPool"), tactics: direct, sel: selectPool},
		{key: kernels.Key("", "AveragePool"), tactics: direct, sel: selectPool},
		{key: kernels.Key("", "GlobalAveragePool"), tactics: direct, sel: selectGlobalPool},
		{key: kernels.Key("", "GlobalMaxPool"), tactics: direct, sel: selectGlobalPool},
	}
}

func selectPool(n *kernels.Node, d kernels.Target) (plan, error) {
	g, err := kernels.CheckPool(n)
	if err != nil {
		return plan{}, err
	}
	if dt := n.Inputs[0].DType; dt != graph.Float32 {
		return plan{}, fmt.Errorf("input is %v: the CPU %s computes float32 only", dt, n.Op)
	}
	if len(g.In) > 3 {
		return plan{}, fmt.Errorf("%d spatial dims: at most 3 are supported", len(g.In))
	}
	pl := &pool{max: n.Op == "MaxPool", inclPad: n.Attrs.Int("count_include_pad", 0) != 0, geo: newGeom3(g), workers: d.Workers}
	off := 3 - len(g.In)
	for i, e := range g.PadEnd {
		pl.end[off+i] = int(e)
	}
	pl.planes = int(g.N * g.C)
	pl.inVol = pl.geo.in[0] * pl.geo.in[1] * pl.geo.in[2]
	pl.p = pl.geo.out[0] * pl.geo.out[1] * pl.geo.out[2]
	if pl.max {
		pl.makeSpans()
	}
	return plan{tactic: "direct", r: pl}, nil
}

func selectGlobalPool(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckGlobalPool(n); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	if x.DType != graph.Float32 {
		return plan{}, fmt.Errorf("input is %v: the CPU %s computes float32 only", x.DType, n.Op)
	}
	pl := &pool{max: n.Op == "GlobalMaxPool", global: true, planes: int(x.Shape[0] * x.Shape[1]), inVol: numel(x.Shape[2:]), p: 1, workers: d.Workers}
	return plan{tactic: "direct", r: pl}, nil
}

func (pl *pool) run(in, out []kernels.Tensor, _ wsParts) error {
	per := pl.inVol
	if !pl.global {
		per = pl.p * pl.geo.kvol()
	}
	runRanges(pl, in, out, pl.planes, per, weightPlain, pl.workers)
	return nil
}

// runRange pools planes [lo, hi).
func (pl *pool) runRange(in, out []kernels.Tensor, lo, hi int) {
	x, y := in[0].Float32s(), out[0].Float32s()
	if pl.global {
		for c := lo; c < hi; c++ {
			xs := x[c*pl.inVol : (c+1)*pl.inVol]
			if pl.max {
				m := float32(math.Inf(-1))
				for _, v := range xs {
					if v > m || v != v {
						m = v
					}
				}
				y[c] = m
				continue
			}
			var s float64
			for _, v := range xs {
				s += float64(v)
			}
			y[c] = float32(s / float64(max(len(xs), 1)))
		}
		return
	}
	g := &pl.geo
	for c := lo; c < hi; c++ {
		xc := x[c*pl.inVol : (c+1)*pl.inVol]
		yp := y[c*pl.p : (c+1)*pl.p]
		if pl.max {
			pl.maxPlane(xc, yp)
			continue
		}
		i := 0
		for od := range g.out[0] {
			for oh := range g.out[1] {
				for ow := range g.out[2] {
					yp[i] = pl.window(xc, [3]int{od, oh, ow})
					i++
				}
			}
		}
	}
}

// maxPlane max-pools one plane: each output the max (Go's, which keeps NaN and has no branch)
// over the window's taps inside the input, -Inf where there are none. The taps' ranges along
// each dim are pl.spans, clipped to the input once at Select rather than every tap tested as
// window does; undilated rows are read as one slice.
func (pl *pool) maxPlane(xc, yp []float32) {
	g := &pl.geo
	inf := float32(math.Inf(-1))
	dx := g.d[2]
	if dx == 1 && g.in[2] <= maxPoolRow {
		pl.maxPlaneRows(xc, yp)
		return
	}
	i := 0
	for _, sz := range pl.spans[0] {
		for _, sy := range pl.spans[1] {
			for _, sx := range pl.spans[2] {
				m := inf
				for kz := sz.k0; kz < sz.k1; kz++ {
					for ky := sy.k0; ky < sy.k1; ky++ {
						row := xc[((sz.i0+kz*g.d[0])*g.in[1]+sy.i0+ky*g.d[1])*g.in[2]:][:g.in[2]]
						if dx == 1 {
							if sx.k0 >= sx.k1 {
								continue // a window past the input's edge (ceil_mode): no tap
							}
							for _, v := range row[sx.i0+sx.k0 : sx.i0+sx.k1] {
								m = max(m, v)
							}
							continue
						}
						for kx := sx.k0; kx < sx.k1; kx++ {
							m = max(m, row[sx.i0+kx*dx])
						}
					}
				}
				yp[i] = m
				i++
			}
		}
	}
}

// maxPoolRow is the widest input row maxPlaneRows takes (its row of maxima is on the stack).
const maxPoolRow = 512

// maxPlaneRows is maxPlane for undilated rows (dilation 1 along the last dim) at most
// maxPoolRow wide: per output row, the elementwise max of the input rows its windows read, then
// each window's run of that row. Go's max is associative and commutative (NaN wins, +0 over
// -0), so each output is maxPlane's. ResNet-50's 3x3/2 pool over 112 x 112 reads 4 values an
// output where maxPlane read 9, each tap row in a loop of its own.
func (pl *pool) maxPlaneRows(xc, yp []float32) {
	g := &pl.geo
	inf := float32(math.Inf(-1))
	var buf [maxPoolRow]float32
	vm := buf[:g.in[2]]
	i := 0
	for _, sz := range pl.spans[0] {
		for _, sy := range pl.spans[1] {
			rows := 0
			for kz := sz.k0; kz < sz.k1; kz++ {
				for ky := sy.k0; ky < sy.k1; ky++ {
					row := xc[((sz.i0+kz*g.d[0])*g.in[1]+sy.i0+ky*g.d[1])*g.in[2]:][:len(vm)]
					if rows == 0 {
						copy(vm, row)
					} else {
						for x, v := range row {
							vm[x] = max(vm[x], v)
						}
					}
					rows++
				}
			}
			out := yp[i : i+len(pl.spans[2])]
			i += len(out)
			if rows == 0 {
				for o := range out {
					out[o] = inf // a window past the input's edge (ceil_mode): no tap
				}
				continue
			}
			for o, sx := range pl.spans[2] {
				m := inf
				if sx.k0 < sx.k1 {
					for _, v := range vm[sx.i0+sx.k0 : sx.i0+sx.k1] {
						m = max(m, v)
					}
				}
				out[o] = m
			}
		}
	}
}

// window is one output element: the max or average of the window at output position o.
func (pl *pool) window(xc []float32, o [3]int) float32 {
	g := &pl.geo
	m := float32(math.Inf(-1))
	var s float32
	valid, padded := 0, 0
	for kz := range g.k[0] {
		iz := o[0]*g.s[0] - g.p[0] + kz*g.d[0]
		inZ := iz >= 0 && iz < g.in[0]
		padZ := iz >= -g.p[0] && iz < g.in[0]+pl.end[0]
		for ky := range g.k[1] {
			iy := o[1]*g.s[1] - g.p[1] + ky*g.d[1]
			inY := inZ && iy >= 0 && iy < g.in[1]
			padY := padZ && iy >= -g.p[1] && iy < g.in[1]+pl.end[1]
			for kx := range g.k[2] {
				ix := o[2]*g.s[2] - g.p[2] + kx*g.d[2]
				if padY && ix >= -g.p[2] && ix < g.in[2]+pl.end[2] {
					padded++
				}
				if !inY || ix < 0 || ix >= g.in[2] {
					continue
				}
				v := xc[(iz*g.in[1]+iy)*g.in[2]+ix]
				valid++
				if v > m || v != v {
					m = v
				}
				s += v
			}
		}
	}
	if pl.max {
		return m
	}
	div := valid
	if pl.inclPad {
		div = padded
	}
	if div == 0 {
		return 0
	}
	return s / float32(div)
}
