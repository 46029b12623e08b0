package cpu

import (
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/vec"
)

// variadic is Max, Min, Sum and Mean over one or more broadcast operands: the first two are
// combined into the output, and every further operand is folded into it in place.
type variadic struct {
	op    binOp
	mean  bool
	n     int
	dt    graph.DType
	first binary   // out = in0 op in1 (or in0 broadcast when there is one operand)
	rest  []binary // out = out op in_k
	copy  *expand  // single operand
}

func selectVariadic(o binOp, mean bool) func(n *kernels.Node, d kernels.Target) (plan, error) {
	return func(n *kernels.Node, d kernels.Target) (plan, error) {
		shape, err := kernels.CheckVariadic(n)
		if err != nil {
			return plan{}, err
		}
		dt := n.Inputs[0].DType
		shapes := make([][]int64, len(n.Inputs))
		for i, v := range n.Inputs {
			shapes[i] = v.Shape
		}
		v := &variadic{op: o, mean: mean, n: len(shapes), dt: dt}
		if len(shapes) == 1 {
			p, err := newBPlan(shape, shapes[0])
			if err != nil {
				return plan{}, err
			}
			v.copy = &expand{p: p, es: int(dt.Size())}
		} else {
			v.first = binary{op: o, dt: dt}
			if v.first.p, err = newBPlan(shape, shapes[0], shapes[1]); err != nil {
				return plan{}, err
			}
			for _, s := range shapes[2:] {
				b := binary{op: o, dt: dt}
				if b.p, err = newBPlan(shape, shape, s); err != nil {
					return plan{}, err
				}
				v.rest = append(v.rest, b)
			}
		}
		return plan{tactic: "direct", r: v}, nil
	}
}

func (v *variadic) run(in, out []kernels.Tensor, ws wsParts) error {
	if v.copy != nil {
		if err := v.copy.run(in[:1], out, ws); err != nil {
			return err
		}
	} else {
		if err := v.first.run(in[:2], out, ws); err != nil {
			return err
		}
		var pair [2]kernels.Tensor
		for k := range v.rest {
			// runRange, not run: run hands its operands to the pool, which would move pair
			// to the heap
			pair[0], pair[1] = out[0], in[k+2]
			if p := &v.rest[k].p; p.total > 0 {
				v.rest[k].runRange(pair[:], out, 0, p.total/p.inner())
			}
		}
	}
	if v.mean {
		scale := 1 / float64(v.n)
		switch v.dt {
		case graph.Float32:
			for i, x := range out[0].Float32s() {
				out[0].Float32s()[i] = float32(float64(x) * scale)
			}
		case graph.Float64:
			for i, x := range out[0].Float64s() {
				out[0].Float64s()[i] = x * scale
			}
		case graph.Float16, graph.BFloat16:
			load, store := f16, tof16
			if v.dt == graph.BFloat16 {
				load, store = bf16, tobf16
			}
			u := out[0].Uint16s()
			for i, x := range u {
				u[i] = store(float32(float64(load(x)) * scale))
			}
		}
	}
	return nil
}

// pow is Pow(X, Y): X float or integer, Y any numeric type, broadcast; computed in float64
// (integer results truncate, as a C cast of std::pow does). A scalar exponent of 2, 3 or 0.5
// takes an exact fast path.
type pow struct {
	p       bplan
	scalar  bool
	workers int
}

func selectPow(n *kernels.Node, d kernels.Target) (plan, error) {
	shape, err := kernels.CheckPow(n)
	if err != nil {
		return plan{}, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	pw := &pow{workers: d.Workers}
	if pw.p, err = newBPlan(shape, a.Shape, b.Shape); err != nil {
		return plan{}, err
	}
	pw.scalar = numel(b.Shape) == 1
	return plan{tactic: "direct", r: pw}, nil
}

func (pw *pow) run(in, out []kernels.Tensor, _ wsParts) error {
	x, y, z := in[0], in[1], out[0]
	p := &pw.p
	if p.total == 0 {
		return nil
	}
	if pw.scalar && x.DType == graph.Float32 {
		e := loadF64(y, 0)
		xs, zs := x.Float32s(), z.Float32s()
		// x has the output's shape when the exponent is a scalar of rank <= x's rank; otherwise
		// fall through to the general loop.
		if len(xs) == len(zs) && (e == 2 || e == 3 || e == 0.5 || e == 1) {
			forItems(powF32Items, pw, in, out, [4]int{int(2 * e)}, len(zs), 1, pw.workers)
			return nil
		}
	}
	n := p.inner()
	sx, sy := p.st[0][p.rank-1], p.st[1][p.rank-1]
	c := cursor{p: p}
	for o := 0; o < p.total; o += n {
		for i := 0; i < n; i++ {
			r := math.Pow(loadF64(x, c.off[0]+i*sx), loadF64(y, c.off[1]+i*sy))
			storeF64(z, o+i, r)
		}
		c.next()
	}
	return nil
}

// powF32Items raises elements [lo, hi) of a float32 x to the scalar exponent b.n[0]/2 (2, 3,
// 0.5 or 1) into z.
func powF32Items(b *itemsBody, lo, hi int) {
	xs, zs := b.in[0].Float32s()[lo:hi], b.out[0].Float32s()[lo:hi]
	switch b.n[0] {
	case 4:
		for i, v := range xs {
			zs[i] = v * v
		}
	case 6:
		for i, v := range xs {
			zs[i] = v * v * v
		}
	case 1:
		for i, v := range xs {
			zs[i] = float32(math.Sqrt(float64(v)))
		}
	case 2:
		copy(zs, xs)
	}
}

// storeF64 writes v into element i of t, converting to t's type (floats rounded, integers
// truncated toward zero).
func storeF64(t kernels.Tensor, i int, v float64) {
	switch t.DType {
	case graph.Float32:
		t.Float32s()[i] = float32(v)
	case graph.Float64:
		t.Float64s()[i] = v
	case graph.Float16:
		t.Uint16s()[i] = tof16(float32(v))
	case graph.BFloat16:
		t.Uint16s()[i] = tobf16(float32(v))
	default:
		storeI64(t, i, int64(v))
	}
}

// storeI64 writes v into element i of an integer or bool tensor (wrapping like a C cast).
func storeI64(t kernels.Tensor, i int, v int64) {
	switch t.DType {
	case graph.Int64:
		t.Int64s()[i] = v
	case graph.Int32:
		t.Int32s()[i] = int32(v)
	case graph.Int16:
		kernels.ViewAs[int16](t.Data)[i] = int16(v)
	case graph.Int8:
		t.Data[i] = byte(int8(v))
	case graph.Uint8:
		t.Data[i] = byte(v)
	case graph.Bool:
		t.Data[i] = 0
		if v != 0 {
			t.Data[i] = 1
		}
	case graph.Uint16:
		t.Uint16s()[i] = uint16(v)
	case graph.Uint32:
		kernels.ViewAs[uint32](t.Data)[i] = uint32(v)
	case graph.Uint64:
		kernels.ViewAs[uint64](t.Data)[i] = uint64(v)
	default:
		storeF64(t, i, float64(v))
	}
}

// where is Where(cond, X, Y) with three-way broadcasting, moving elements by size.
type where struct {
	p       bplan
	es      int
	workers int
}

func selectWhere(n *kernels.Node, d kernels.Target) (plan, error) {
	shape, err := kernels.CheckWhere(n)
	if err != nil {
		return plan{}, err
	}
	c, x, y := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	w := &where{es: int(x.DType.Size()), workers: d.Workers}
	if w.p, err = newBPlan(shape, c.Shape, x.Shape, y.Shape); err != nil {
		return plan{}, err
	}
	w.p.splitRuns(w.workers)
	return plan{tactic: "direct", r: w}, nil
}

func (w *where) run(in, out []kernels.Tensor, _ wsParts) error {
	if p := &w.p; p.total > 0 {
		runRanges(w, in, out, p.total/p.inner(), p.inner(), weightPlain, w.workers)
	}
	return nil
}

// runRange selects runs [lo, hi) of the broadcast plan.
func (w *where) runRange(in, out []kernels.Tensor, lo, hi int) {
	switch w.es {
	case 1:
		whereLoop(w, lo, hi, in[0].Data, in[1].Data, in[2].Data, out[0].Data)
	case 2:
		whereLoop(w, lo, hi, in[0].Data, kernels.ViewAs[uint16](in[1].Data), kernels.ViewAs[uint16](in[2].Data), kernels.ViewAs[uint16](out[0].Data))
	case 4:
		whereLoop(w, lo, hi, in[0].Data, kernels.ViewAs[uint32](in[1].Data), kernels.ViewAs[uint32](in[2].Data), kernels.ViewAs[uint32](out[0].Data))
	case 8:
		whereLoop(w, lo, hi, in[0].Data, kernels.ViewAs[uint64](in[1].Data), kernels.ViewAs[uint64](in[2].Data), kernels.ViewAs[uint64](out[0].Data))
	}
}

// whereLoop selects runs [lo, hi) without branches (masks are often irregular): z = y ^ ((x ^ y) & m), m
// all ones where the condition byte is nonzero. Runs with unit or zero strides, the usual
// ones, get their own loop.
func whereLoop[E ~uint8 | ~uint16 | ~uint32 | ~uint64](w *where, lo, hi int, c []byte, x, y, z []E) {
	p := &w.p
	if p.total == 0 {
		return
	}
	n := p.inner()
	r := p.rank - 1
	sc, sx, sy := p.st[0][r], p.st[1][r], p.st[2][r]
	cur := cursorAt(p, lo)
	for o := lo * n; o < hi*n; o += n {
		cc, xx, yy, zz := c[cur.off[0]:], x[cur.off[1]:], y[cur.off[2]:], z[o:o+n]
		z32, four := any(zz).([]uint32)
		switch {
		case four && sc == 1 && sx <= 1 && sy <= 1:
			// 4-byte elements with contiguous or scalar sides: vectorized
			xs, ys := any(xx).([]uint32), any(yy).([]uint32)
			vec.Select32(z32, cc[:n], xs[:max(n*sx, 1)], ys[:max(n*sy, 1)])
		case sc == 1 && sx == 0 && sy == 1:
			xv, cc, yy := xx[0], cc[:n], yy[:n]
			for i := range zz {
				b := cc[i]
				m := E(0) - E((b|-b)>>7)
				zz[i] = yy[i] ^ ((xv ^ yy[i]) & m)
			}
		case sc == 1 && sx == 1 && sy == 0:
			yv, cc, xx := yy[0], cc[:n], xx[:n]
			for i := range zz {
				b := cc[i]
				m := E(0) - E((b|-b)>>7)
				zz[i] = yv ^ ((xx[i] ^ yv) & m)
			}
		default:
			for i := range zz {
				b := cc[i*sc]
				m := E(0) - E((b|-b)>>7)
				xv, yv := xx[i*sx], yy[i*sy]
				zz[i] = yv ^ ((xv ^ yv) & m)
			}
		}
		cur.next()
	}
}

func variadicOps() []*op {
	mk := func(name string, o binOp, mean bool) *op {
		return &op{key: kernels.Key("", name), tactics: direct, sel: selectVariadic(o, mean)}
	}
	return []*op{
		mk("Max", opMax, false), mk("Min", opMin, false), mk("Sum", opAdd, false), mk("Mean", opAdd, true),
		{key: kernels.Key("", "Pow"), tactics: direct, sel: selectPow},
		{key: kernels.Key("", "Where"), tactics: direct, sel: selectWhere},
	}
}
