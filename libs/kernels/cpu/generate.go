package cpu

import (
	"fmt"
	"math"
	"slices"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/vec"
)

// constant writes bytes fixed at Select: Constant, Shape, Size.
type constant struct{ data []byte }

func (c *constant) run(in, out []kernels.Tensor, _ wsParts) error {
	copy(out[0].Data, c.data)
	return nil
}

func selectShape(n *kernels.Node, d kernels.Target) (plan, error) {
	dims, err := kernels.ShapeDims(n)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: "direct", r: &constant{data: slices.Clone(kernels.BytesOf(dims))}}, nil
}

func selectSize(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckSize(n); err != nil {
		return plan{}, err
	}
	v := []int64{int64(numel(n.Inputs[0].Shape))}
	return plan{tactic: "direct", r: &constant{data: slices.Clone(kernels.BytesOf(v))}}, nil
}

func selectConstant(n *kernels.Node, d kernels.Target) (plan, error) {
	data, err := kernels.ConstantValue(n)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: "direct", r: &constant{data: slices.Clone(data)}}, nil
}

// fill is ConstantOfShape: every element is the value attribute's single element.
type fill struct{ elem []byte }

func selectConstantOfShape(n *kernels.Node, d kernels.Target) (plan, error) {
	_, elem, err := kernels.ConstantOfShapeValue(n)
	if err != nil {
		return plan{}, err
	}
	elem = slices.Clone(elem)
	return plan{tactic: "direct", r: &fill{elem: elem}}, nil
}

func (f *fill) run(in, out []kernels.Tensor, _ wsParts) error {
	shape := in[0].Int64s()
	for i, d := range shape {
		if d != out[0].Shape[i] {
			return fmt.Errorf("shape input %v differs from the output shape %v", shape, out[0].Shape)
		}
	}
	z := out[0].Data
	es := len(f.elem)
	allZero := true
	for _, b := range f.elem {
		allZero = allZero && b == 0
	}
	if allZero {
		clear(z)
		return nil
	}
	for i := 0; i+es <= len(z); i += es {
		copy(z[i:i+es], f.elem)
	}
	return nil
}

// rangeOp is Range: out[i] = start + i*delta, with the count checked against the output.
type rangeOp struct{ dt graph.DType }

func selectRange(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckRangeOp(n); err != nil {
		return plan{}, err
	}
	dt := n.Inputs[0].DType
	switch dt {
	case graph.Float32, graph.Float64, graph.Int16, graph.Int32, graph.Int64:
	default:
		return plan{}, fmt.Errorf("Range of %v is not supported", dt)
	}
	return plan{tactic: "direct", r: &rangeOp{dt: dt}}, nil
}

func (r *rangeOp) run(in, out []kernels.Tensor, _ wsParts) error {
	z := out[0]
	n := int(z.Shape[0])
	if isFloat(r.dt) {
		start, limit, delta := loadF64(in[0], 0), loadF64(in[1], 0), loadF64(in[2], 0)
		if delta == 0 {
			return fmt.Errorf("delta is 0")
		}
		if r.dt == graph.Float32 { // count as the reference does, in the element type
			s, l, dl := float32(start), float32(limit), float32(delta)
			start, limit, delta = float64(s), float64(l), float64(dl)
		}
		// the graph computed the count; allow it to differ by one through float rounding
		want := int(max(math.Ceil((limit-start)/delta), 0))
		if want-n > 1 || n-want > 1 {
			return fmt.Errorf("Range(%v, %v, %v) has %d elements, output %d", start, limit, delta, want, n)
		}
		for i := 0; i < n; i++ {
			storeF64(z, i, start+float64(i)*delta)
		}
		return nil
	}
	start, limit, delta := loadI64(in[0], 0), loadI64(in[1], 0), loadI64(in[2], 0)
	if delta == 0 {
		return fmt.Errorf("delta is 0")
	}
	want := int64(0)
	if delta > 0 && limit > start {
		want = (limit - start + delta - 1) / delta
	} else if delta < 0 && limit < start {
		want = (start - limit - delta - 1) / -delta
	}
	if want != int64(n) {
		return fmt.Errorf("Range(%d, %d, %d) has %d elements, output %d", start, limit, delta, want, n)
	}
	for i := 0; i < n; i++ {
		storeI64(z, i, start+int64(i)*delta)
	}
	return nil
}

// cumSum is CumSum along an axis given as a tensor; exclusive and reverse per the attributes.
// Sums accumulate in float64 for floats and int64 for integers.
type cumSum struct {
	dt                 graph.DType
	shape              []int64
	exclusive, reverse bool
	workers            int
}

func selectCumSum(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckCumSum(n); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	at := n.Attrs
	return plan{tactic: "direct", r: &cumSum{workers: d.Workers, dt: x.DType, shape: x.Shape, exclusive: at.Int("exclusive", 0) != 0, reverse: at.Int("reverse", 0) != 0}}, nil
}

func (c *cumSum) run(in, out []kernels.Tensor, _ wsParts) error {
	axis, err := kernels.NormAxis(loadI64(in[1], 0), len(c.shape))
	if err != nil {
		return err
	}
	outer, dim, inner := numel(c.shape[:axis]), int(c.shape[axis]), numel(c.shape[axis+1:])
	x, z := in[0], out[0]
	if c.dt == graph.Float32 {
		forItems(cumSumF32Items, c, in, out, [4]int{dim, inner}, outer, dim*inner, c.workers)
		return nil
	}
	f := isFloat(c.dt)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			var sf float64
			var si int64
			for k := 0; k < dim; k++ {
				kk := k
				if c.reverse {
					kk = dim - 1 - k
				}
				idx := (o*dim+kk)*inner + i
				var vf float64
				var vi int64
				if f {
					vf = loadF64(x, idx)
				} else {
					vi = loadI64(x, idx)
				}
				if c.exclusive {
					if f {
						storeF64(z, idx, sf)
					} else {
						storeI64(z, idx, si)
					}
				}
				sf += vf
				si += vi
				if !c.exclusive {
					if f {
						storeF64(z, idx, sf)
					} else {
						storeI64(z, idx, si)
					}
				}
			}
		}
	}
	return nil
}

// cumSumF32 is CumSum of float32, summed in float32 (as onnxruntime does): whole rows of
// inner elements at a time when inner > 1.
// cumSumF32Items sums outer indices [lo, hi) of a float32 CumSum (n holds the axis length and
// the inner size).
func cumSumF32Items(b *itemsBody, lo, hi int) {
	c, dim, inner := b.k.(*cumSum), b.n[0], b.n[1]
	cumSumF32(b.in[0].Float32s(), b.out[0].Float32s(), lo, hi, dim, inner, c.exclusive, c.reverse)
}

func cumSumF32(x, z []float32, lo, hi, dim, inner int, exclusive, reverse bool) {
	for o := lo; o < hi; o++ {
		xs, zs := x[o*dim*inner:(o+1)*dim*inner], z[o*dim*inner:(o+1)*dim*inner]
		row := func(k int) int {
			if reverse {
				k = dim - 1 - k
			}
			return k * inner
		}
		if inner == 1 {
			var s float32
			for k := 0; k < dim; k++ {
				r := row(k)
				v := xs[r]
				if exclusive {
					zs[r] = s
					s += v
				} else {
					s += v
					zs[r] = s
				}
			}
			continue
		}
		for k := 0; k < dim; k++ {
			r := row(k)
			zr := zs[r : r+inner]
			switch {
			case k == 0 && exclusive:
				clear(zr)
			case k == 0:
				copy(zr, xs[r:r+inner])
			case exclusive:
				p := row(k - 1)
				vec.VV(vec.Add, zr, zs[p:p+inner], xs[p:p+inner])
			default:
				p := row(k - 1)
				vec.VV(vec.Add, zr, zs[p:p+inner], xs[r:r+inner])
			}
		}
	}
}

// trilu keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims.
type trilu struct {
	upper   bool
	shape   []int64
	es      int
	workers int
}

func selectTrilu(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckTrilu(n); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	return plan{tactic: "direct", r: &trilu{workers: d.Workers, upper: n.Attrs.Int("upper", 1) != 0, shape: x.Shape, es: int(x.DType.Size())}}, nil
}

func (t *trilu) run(in, out []kernels.Tensor, _ wsParts) error {
	var k int64
	if len(in) > 1 && in[1].Data != nil {
		k = in[1].Int64s()[0]
	}
	r := len(t.shape)
	rows, cols := int(t.shape[r-2]), int(t.shape[r-1])
	mats := numel(t.shape[:r-2])
	forItems(triluRows, t, in, out, [4]int{rows, cols, int(k)}, mats*rows, cols, t.workers)
	return nil
}

// triluRows writes rows [lo, hi) of the stacked matrices (n holds the rows and columns of one
// matrix, and k).
func triluRows(b *itemsBody, lo, hi int) {
	t := b.k.(*trilu)
	rows, cols, k := b.n[0], int64(b.n[1]), int64(b.n[2])
	x, z, es := b.in[0].Data, b.out[0].Data, int64(t.es)
	for mi := lo; mi < hi; mi++ {
		i := int64(mi % rows)
		row := int64(mi) * cols * es
		// the kept columns of row i are [j0, cols) (upper: j >= i + k) or [0, j1) (lower)
		j0, j1 := int64(0), cols
		if t.upper {
			j0 = min(max(i+k, 0), cols)
		} else {
			j1 = min(max(i+k+1, 0), cols)
		}
		zr, xr := z[row:row+cols*es], x[row:row+cols*es]
		clear(zr[:j0*es])
		copy(zr[j0*es:j1*es], xr[j0*es:j1*es])
		clear(zr[j1*es:])
	}
}

func generateOps() []*op {
	mk := func(domain, name string, sel func(*kernels.Node, kernels.Target) (plan, error)) *op {
		return &op{key: kernels.Key(domain, name), tactics: direct, sel: sel}
	}
	return []*op{
		mk("", "Shape", selectShape), mk("", "Size", selectSize), mk("", "Constant", selectConstant),
		mk("", "ConstantOfShape", selectConstantOfShape), mk("", "Range", selectRange),
		mk("", "CumSum", selectCumSum), mk("", "Trilu", selectTrilu),
		mk(kernels.DomainMicrosoft, "Trilu", selectTrilu), mk(kernels.DomainMicrosoft, "Range", selectRange),
	}
}
