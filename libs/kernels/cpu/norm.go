package cpu

import (
	"fmt"
	"math"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/par"
	"carve.dev/libs/kernels/internal/vec"
)

// layerNorm is the layer-normalization family: LayerNormalization, SimplifiedLayerNormalization
// (RMSNorm) and the contrib SkipLayerNormalization / SkipSimplifiedLayerNormalization, which first
// add a skip input and a bias.
//
// Tactic "row-stats": pass one computes each row's mean and inverse standard deviation (in
// float64) into the workspace, in parallel over rows; pass two normalizes every row with them
// and fills the optional Mean/InvStdDev outputs. The workspace is 16 bytes per row (8 for the
// simplified forms, which have no mean).
type layerNorm struct {
	simplified bool
	rows, h    int
	eps        float64
	dt         graph.DType
	bf         bool
	slots      int

	in              int // input index of X
	skip, skipRows  int // input index of skip (-1 none) and its row count (broadcast over rows)
	scale, bias     int // input indices of scale (gamma) and of the shift (beta/B), -1 none
	addBias         int // Skip*: input index of the bias added before normalizing, -1 none
	scaleIx, biasIx []int32
	meanOut, invOut int // output indices, -1 when absent
	sumOut          int // Skip*: input_skip_bias_sum output, -1 when absent
	statsF32        bool
}

const (
	partMean   = "mean"
	partInvStd = "inv_std"
)

type normKind uint8

const (
	normLN normKind = iota
	normRMS
	normSkipLN
	normSkipRMS
)

// normRows is the row count and row length of a layer norm over x at axis.
func normRows(shape []int64, axis int) (rows, h int) {
	return numel(shape[:axis]), numel(shape[axis:])
}

// bcastIndex maps each position of the normalized shape to an element of p (broadcast from the
// right); nil when p already has the normalized shape's element count.
func bcastIndex(p, norm []int64) ([]int32, error) {
	if numel(p) == numel(norm) {
		return nil, nil
	}
	pl, err := newBPlan(norm, p)
	if err != nil {
		return nil, err
	}
	ix := make([]int32, numel(norm))
	n := pl.inner()
	s := pl.st[0][pl.rank-1]
	c := cursor{p: &pl}
	for o := 0; o < len(ix); o += n {
		for i := 0; i < n; i++ {
			ix[o+i] = int32(c.off[0] + i*s)
		}
		c.next()
	}
	return ix, nil
}

func selectNorm(n *kernels.Node, d kernels.Target) (plan, error) {
	g, err := kernels.CheckNorm(n)
	if err != nil {
		return plan{}, err
	}
	x := n.Inputs
	ln := &layerNorm{
		simplified: g.Simplified, rows: int(g.Rows), h: int(g.H), eps: float64(g.Eps), dt: x[0].DType, bf: x[0].DType == graph.BFloat16,
		slots: d.Workers, in: 0, skip: g.Skip, skipRows: int(g.SkipRows), scale: g.Scale, bias: g.Bias, addBias: g.AddBias,
		meanOut: g.MeanOut, invOut: g.InvOut, sumOut: g.SumOut,
	}
	if g.Skip < 0 { // the Skip forms' scale and bias hold h elements; the others' broadcast
		norm := x[0].Shape[g.Axis:]
		if ln.scaleIx, err = bcastIndex(x[g.Scale].Shape, norm); err != nil {
			return plan{}, fmt.Errorf("scale: %w", err)
		}
		if ln.bias >= 0 {
			if ln.biasIx, err = bcastIndex(x[g.Bias].Shape, norm); err != nil {
				return plan{}, fmt.Errorf("bias: %w", err)
			}
		}
	}
	for _, o := range []int{ln.meanOut, ln.invOut} {
		if o >= 0 {
			ln.statsF32 = n.Outputs[o].DType == graph.Float32
		}
	}
	parts, err := normParts(ln.simplified, int64(ln.rows))
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: "row-stats", parts: parts, r: ln}, nil
}

func normParts(simplified bool, rows int64) ([]alloc.Part, error) {
	b, err := kernels.Product(rows, 8)
	if err != nil {
		return nil, err
	}
	if simplified {
		return []alloc.Part{{Name: partInvStd, Size: b}}, nil
	}
	return []alloc.Part{{Name: partMean, Size: b}, {Name: partInvStd, Size: b}}, nil
}

// boundNorm is W for the family: 8 or 16 bytes per row, rows at their largest.
func boundNorm(kind normKind) func(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	return func(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
		x, ok := r.Input(0)
		if !ok || len(x.Dims) == 0 {
			return kernels.Bound{}, fmt.Errorf("input 0 is missing or a scalar")
		}
		axis := len(x.Dims) - 1
		if kind == normLN || kind == normRMS {
			a, err := kernels.NormAxis(r.Attrs.Int("axis", -1), len(x.Dims))
			if err != nil {
				return kernels.Bound{}, err
			}
			axis = a
		}
		rows := int64(1)
		for _, dr := range x.Dims[:axis] {
			var err error
			if rows, err = kernels.Product(rows, dr.Hi); err != nil {
				return kernels.Bound{}, err
			}
		}
		parts, err := normParts(kind == normRMS || kind == normSkipRMS, rows)
		if err != nil {
			return kernels.Bound{}, err
		}
		return recipeBound("row-stats", parts)
	}
}

type normBody struct {
	ln      *layerNorm
	in, out []kernels.Tensor
	mean    []float64
	inv     []float64
	pass    int
}

var normBodies par.Pool[normBody]

func (b *normBody) Do(slot, lo, hi int) {
	switch b.ln.dt {
	case graph.Float32:
		if b.pass == 0 {
			normRowsF32(b, lo, hi)
		}
	default:
		normRange[uint16](b, lo, hi)
	}
}

func (ln *layerNorm) run(in, out []kernels.Tensor, ws wsParts) error {
	b := normBodies.Get()
	b.ln, b.in, b.out = ln, in, out
	if ln.simplified {
		b.mean, b.inv = nil, kernels.ViewAs[float64](ws.bytes(0))[:ln.rows]
	} else {
		b.mean, b.inv = kernels.ViewAs[float64](ws.bytes(0))[:ln.rows], kernels.ViewAs[float64](ws.bytes(1))[:ln.rows]
	}
	grain, slots := loopShape(ln.rows, ln.h, weightRow, ln.slots)
	passes := 2
	if ln.dt == graph.Float32 {
		passes = 1 // normRowsF32 does both
	}
	for b.pass = 0; b.pass < passes; b.pass++ {
		par.For(ln.rows, grain, slots, b)
	}
	*b = normBody{}
	normBodies.Put(b)
	return nil
}

// normRowsF32 is the float32 form: both passes over each row at once, the skip and bias sum
// staged in the output row, statistics in float64, the normalization in float32.
func normRowsF32(b *normBody, lo, hi int) {
	ln := b.ln
	h := ln.h
	f := func(i int) []float32 {
		if i < 0 {
			return nil
		}
		return b.in[i].Float32s()
	}
	x, skip, addBias, scale, shift := f(ln.in), f(ln.skip), f(ln.addBias), f(ln.scale), f(ln.bias)
	y := b.out[0].Float32s()
	var sum []float32
	if ln.sumOut >= 0 {
		sum = b.out[ln.sumOut].Float32s()
	}
	if addBias != nil {
		addBias = addBias[:h]
	}
	for r := lo; r < hi; r++ {
		src, yr := x[r*h:(r+1)*h], y[r*h:(r+1)*h]
		if skip != nil || addBias != nil {
			switch {
			case skip != nil && addBias != nil:
				vec.VV(vec.Add, yr, src, skip[(r%ln.skipRows)*h:])
				vec.VV(vec.Add, yr, yr, addBias)
			case skip != nil:
				vec.VV(vec.Add, yr, src, skip[(r%ln.skipRows)*h:])
			default:
				vec.VV(vec.Add, yr, src, addBias)
			}
			if sum != nil {
				copy(sum[r*h:(r+1)*h], yr)
			}
			src = yr
		}
		s, ss := vec.Sums(src)
		var m, inv float64
		if ln.simplified {
			inv = 1 / math.Sqrt(ss/float64(h)+ln.eps)
		} else {
			m = s / float64(h)
			inv = 1 / math.Sqrt(vec.SumSqDev(src, m)/float64(h)+ln.eps) // two passes, for accuracy
			b.mean[r] = m
		}
		b.inv[r] = inv
		mf, invf := float32(m), float32(inv)
		if ln.scaleIx == nil && ln.biasIx == nil {
			vec.Affine(yr, src, scale, shift, mf, invf)
		} else {
			for j, v := range src {
				gi, si := j, j
				if ln.scaleIx != nil {
					gi = int(ln.scaleIx[j])
				}
				if ln.biasIx != nil {
					si = int(ln.biasIx[j])
				}
				o := (v - mf) * invf * scale[gi]
				if shift != nil {
					o += shift[si]
				}
				yr[j] = o
			}
		}
		if ln.meanOut >= 0 {
			writeStat(b.out[ln.meanOut], r, m, false)
		}
		if ln.invOut >= 0 {
			writeStat(b.out[ln.invOut], r, inv, false)
		}
	}
}

func view16or32[E elt](t kernels.Tensor) []E { return kernels.ViewAs[E](t.Data) }

// normRange runs one pass over rows [lo, hi).
func normRange[E elt](b *normBody, lo, hi int) {
	ln := b.ln
	h, bf := ln.h, ln.bf
	x := view16or32[E](b.in[ln.in])
	var skip, addBias, scale, shift, sum []E
	if ln.skip >= 0 {
		skip = view16or32[E](b.in[ln.skip])
	}
	if ln.addBias >= 0 {
		addBias = view16or32[E](b.in[ln.addBias])
	}
	scale = view16or32[E](b.in[ln.scale])
	if ln.bias >= 0 {
		shift = view16or32[E](b.in[ln.bias])
	}
	if ln.sumOut >= 0 {
		sum = view16or32[E](b.out[ln.sumOut])
	}
	// value of element j of row r after the skip and bias additions
	val := func(r, j int) float32 {
		v := ld(x[r*h+j], bf)
		if skip != nil {
			v += ld(skip[(r%ln.skipRows)*h+j], bf)
		}
		if addBias != nil {
			v += ld(addBias[j], bf)
		}
		return v
	}
	if b.pass == 0 {
		for r := lo; r < hi; r++ {
			var s, ss float64
			for j := 0; j < h; j++ {
				v := float64(val(r, j))
				s += v
				ss += v * v
			}
			if ln.simplified {
				b.inv[r] = 1 / math.Sqrt(ss/float64(h)+ln.eps)
				continue
			}
			m := s / float64(h)
			// two-pass variance for accuracy
			var vv float64
			for j := 0; j < h; j++ {
				dv := float64(val(r, j)) - m
				vv += dv * dv
			}
			b.mean[r] = m
			b.inv[r] = 1 / math.Sqrt(vv/float64(h)+ln.eps)
		}
		return
	}
	y := view16or32[E](b.out[0])
	for r := lo; r < hi; r++ {
		m := 0.0
		if !ln.simplified {
			m = b.mean[r]
		}
		inv := b.inv[r]
		for j := 0; j < h; j++ {
			v := val(r, j)
			if sum != nil {
				sum[r*h+j] = st[E](v, bf)
			}
			g := j
			if ln.scaleIx != nil {
				g = int(ln.scaleIx[j])
			}
			o := (float64(v) - m) * inv * float64(ld(scale[g], bf))
			if shift != nil {
				k := j
				if ln.biasIx != nil {
					k = int(ln.biasIx[j])
				}
				o += float64(ld(shift[k], bf))
			}
			y[r*h+j] = st[E](float32(o), bf)
		}
		if ln.meanOut >= 0 {
			writeStat(b.out[ln.meanOut], r, m, bf)
		}
		if ln.invOut >= 0 {
			writeStat(b.out[ln.invOut], r, inv, bf)
		}
	}
}

func writeStat(t kernels.Tensor, r int, v float64, bf bool) {
	if t.DType == graph.Float32 {
		t.Float32s()[r] = float32(v)
		return
	}
	t.Uint16s()[r] = st[uint16](float32(v), bf)
}

func normOps() []*op {
	tac := []kernels.TacticInfo{{Name: "row-stats", Summary: "per-row mean and inverse std-dev in workspace, then normalize", Workspace: true}}
	mk := func(domain, name string, k normKind) *op {
		return &op{key: kernels.Key(domain, name), tactics: tac, sel: selectNorm, bound: boundNorm(k)}
	}
	return []*op{
		mk("", "LayerNormalization", normLN),
		mk("", "SimplifiedLayerNormalization", normRMS),
		mk(kernels.DomainMicrosoft, "SimplifiedLayerNormalization", normRMS),
		mk(kernels.DomainMicrosoft, "SkipLayerNormalization", normSkipLN),
		mk(kernels.DomainMicrosoft, "SkipSimplifiedLayerNormalization", normSkipRMS),
	}
}

// recipeBound is the Bound of a tactic whose worst-case recipe has parts: its carved size.
func recipeBound(tactic string, parts []alloc.Part) (kernels.Bound, error) {
	size, err := alloc.Recipe{Kernel: tactic, Parts: parts}.Size()
	if err != nil {
		return kernels.Bound{}, err
	}
	return kernels.Bound{Bytes: size, Tactic: tactic}, nil
}
