package cpu

import (
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/vec"
)

type redOp uint8

const (
	rSum redOp = iota
	rMean
	rMax
	rMin
	rProd
	rSumSquare
	rL1
	rL2
	rLogSumExp
	rArgMax
	rArgMin
)

// reduce is the Reduce* family. Axes come from the attribute (older opsets) or from input 1,
// so the plan is made at run time, on the stack. Every output element accumulates in float64
// over its reduced sub-tensor.
type reduce struct {
	op         redOp
	dt         graph.DType
	in         []int64
	keepdims   bool
	noopEmpty  bool
	attrAxes   []int64
	axesInput  bool
	selectLast bool // ArgMax/ArgMin select_last_index
	workers    int
}

func selectReduce(o redOp) func(n *kernels.Node, d kernels.Target) (plan, error) {
	return func(n *kernels.Node, d kernels.Target) (plan, error) {
		rn, err := kernels.CheckReduce(n)
		if err != nil {
			return plan{}, err
		}
		x := n.Inputs[0]
		if len(x.Shape) > 16 {
			return plan{}, fmt.Errorf("rank %d is more than 16", len(x.Shape))
		}
		return plan{tactic: "direct", r: &reduce{
			workers: d.Workers, op: o, dt: x.DType, in: x.Shape, keepdims: rn.Keep, noopEmpty: rn.NoopEmpty,
			attrAxes: rn.Axes, axesInput: rn.AxesInput, selectLast: rn.SelectLast,
		}}, nil
	}
}

// mark sets red for the reduced axes; identity reports a no-op (empty axes with
// noop_with_empty_axes).
func (r *reduce) mark(axes []int64, red *[16]bool) (identity bool, err error) {
	return kernels.MarkReduced(axes, red[:len(r.in)], r.noopEmpty)
}

func (r *reduce) run(in, out []kernels.Tensor, _ wsParts) error {
	var red [16]bool
	axes := r.attrAxes
	var buf [16]int64
	if r.axesInput && len(in) > 1 && in[1].Data != nil {
		a := in[1].Int64s()
		if len(a) > 16 {
			return fmt.Errorf("%d axes", len(a))
		}
		axes = buf[:copy(buf[:], a)]
	}
	identity, err := r.mark(axes, &red)
	if err != nil {
		return err
	}
	// verify the output rank/shape without allocating
	k := 0
	for i, d := range r.in {
		switch {
		case identity || !red[i]:
			if k >= len(out[0].Shape) || out[0].Shape[k] != d {
				return fmt.Errorf("output shape %v does not match reducing %v over the given axes", out[0].Shape, r.in)
			}
			k++
		case r.keepdims:
			if k >= len(out[0].Shape) || out[0].Shape[k] != 1 {
				return fmt.Errorf("output shape %v does not match reducing %v over the given axes", out[0].Shape, r.in)
			}
			k++
		}
	}
	if k != len(out[0].Shape) {
		return fmt.Errorf("output shape %v does not match reducing %v over the given axes", out[0].Shape, r.in)
	}
	if identity {
		copy(out[0].Data, in[0].Data)
		return nil
	}
	// split dims into kept (outer odometer) and reduced (inner odometer), with input strides
	var kd, ks, rd, rs [16]int
	nk, nr := 0, 0
	stride := 1
	for i := len(r.in) - 1; i >= 0; i-- {
		d := int(r.in[i])
		if red[i] {
			rd[nr], rs[nr] = d, stride
			nr++
		} else {
			kd[nk], ks[nk] = d, stride
			nk++
		}
		stride *= d
	}
	// reverse so the last entries are the innermost
	for i, j := 0, nk-1; i < j; i, j = i+1, j-1 {
		kd[i], kd[j], ks[i], ks[j] = kd[j], kd[i], ks[j], ks[i]
	}
	for i, j := 0, nr-1; i < j; i, j = i+1, j-1 {
		rd[i], rd[j], rs[i], rs[j] = rd[j], rd[i], rs[j], rs[i]
	}
	outN := 1
	for i := 0; i < nk; i++ {
		outN *= kd[i]
	}
	count := 1
	for i := 0; i < nr; i++ {
		count *= rd[i]
	}
	x, z := in[0], out[0]
	if x.DType == graph.Float32 && z.DType == graph.Float32 && nr == 1 && rs[0] == 1 && r.op <= rL2 && r.op != rProd {
		// the common case: float32 rows reduced along the contiguous last axis
		forItems(reduceRows, r, in, out, [4]int{count}, outN, count, r.workers)
		return nil
	}
	if x.DType == graph.Float32 && z.DType == graph.Float32 && nr == 1 && rs[0] > 1 && rd[0] > 0 && (r.op == rSum || r.op == rMean) {
		// one reduced axis with contiguous rows after it: whole rows added at a time, in
		// float32 (as onnxruntime does)
		inner, dim := rs[0], rd[0]
		xs, zs := x.Float32s(), z.Float32s()
		for o := 0; o < outN/inner; o++ {
			acc := zs[o*inner : (o+1)*inner]
			base := o * dim * inner
			copy(acc, xs[base:base+inner])
			for k := 1; k < dim; k++ {
				vec.VV(vec.Add, acc, acc, xs[base+k*inner:])
			}
			if r.op == rMean {
				vec.Scale(acc, 1/float32(dim))
			}
		}
		return nil
	}
	if x.DType == graph.Float32 && nr == 1 && rs[0] == 1 && count > 0 && (r.op == rArgMax || r.op == rArgMin) {
		forItems(argRows, r, in, out, [4]int{count}, outN, count, r.workers)
		return nil
	}
	var kidx [16]int
	base := 0
	for o := 0; o < outN; o++ {
		v := r.one(x, base, rd[:nr], rs[:nr], count)
		if r.op == rArgMax || r.op == rArgMin {
			z.Int64s()[o] = int64(v)
		} else {
			storeF64(z, o, v)
		}
		for d := nk - 1; d >= 0; d-- {
			kidx[d]++
			base += ks[d]
			if kidx[d] < kd[d] {
				break
			}
			base -= ks[d] * kd[d]
			kidx[d] = 0
		}
	}
	return nil
}

// reduceRows reduces rows [lo, hi) of n[0] contiguous float32s each.
func reduceRows(b *itemsBody, lo, hi int) {
	r, count := b.k.(*reduce), b.n[0]
	xs, zs := b.in[0].Float32s(), b.out[0].Float32s()
	for o := lo; o < hi; o++ {
		zs[o] = float32(reduceRow(r.op, xs[o*count:(o+1)*count]))
	}
}

// argRows is ArgMax (or ArgMin) of rows [lo, hi) of n[0] contiguous float32s each.
func argRows(b *itemsBody, lo, hi int) {
	r, count := b.k.(*reduce), b.n[0]
	xs, zs := b.in[0].Float32s(), b.out[0].Int64s()
	for o := lo; o < hi; o++ {
		zs[o] = int64(argRow(xs[o*count:(o+1)*count], r.op == rArgMax, r.selectLast))
	}
}

// reduceRow reduces one contiguous float32 row (Sum, Mean, Max, Min, SumSquare, L1, L2),
// accumulating in float64 like one.
func reduceRow(op redOp, x []float32) float64 {
	switch op {
	case rMax:
		return float64(vec.Max(x))
	case rMin:
		acc := math.Inf(1)
		for _, v := range x {
			acc = min(acc, float64(v))
		}
		return acc
	}
	var acc float64
	switch op {
	case rSum, rMean:
		acc, _ = vec.Sums(x)
	case rSumSquare, rL2:
		_, acc = vec.Sums(x)
	case rL1:
		for _, v := range x {
			acc += math.Abs(float64(v))
		}
	}
	switch op {
	case rMean:
		return acc / float64(len(x))
	case rL2:
		return math.Sqrt(acc)
	}
	return acc
}

// argRow is ArgMax (or ArgMin) of one contiguous float32 row, as one computes it.
func argRow(x []float32, isMax, last bool) int {
	acc, arg := x[0], 0
	for i, v := range x[1:] {
		if isMax && (v > acc || last && v == acc) || !isMax && (v < acc || last && v == acc) {
			acc, arg = v, i+1
		}
	}
	return arg
}

// one reduces the sub-tensor at base spanned by dims/strides.
func (r *reduce) one(x kernels.Tensor, base int, dims, strides []int, count int) float64 {
	var acc float64
	switch r.op {
	case rMax, rArgMax:
		acc = math.Inf(-1)
	case rMin, rArgMin:
		acc = math.Inf(1)
	case rProd:
		acc = 1
	}
	var lse float64
	if r.op == rLogSumExp {
		// max first, for a stable log-sum-exp
		m := math.Inf(-1)
		r.walk(x, base, dims, strides, func(_ int, v float64) { m = max(m, v) })
		lse = m
		if math.IsInf(m, 0) {
			lse = 0
		}
	}
	arg := 0
	if count == 0 && (r.op == rArgMax || r.op == rArgMin) {
		return 0
	}
	first := true
	r.walk(x, base, dims, strides, func(i int, v float64) {
		switch r.op {
		case rSum, rMean:
			acc += v
		case rMax:
			acc = max(acc, v)
		case rMin:
			acc = min(acc, v)
		case rProd:
			acc *= v
		case rSumSquare, rL2:
			acc += v * v
		case rL1:
			acc += math.Abs(v)
		case rLogSumExp:
			acc += math.Exp(v - lse)
		case rArgMax:
			if first || v > acc || r.selectLast && v == acc {
				acc, arg = v, i
			}
		case rArgMin:
			if first || v < acc || r.selectLast && v == acc {
				acc, arg = v, i
			}
		}
		first = false
	})
	switch r.op {
	case rMean:
		if isInt(r.dt) {
			return float64(int64(acc) / int64(max(count, 1)))
		}
		return acc / float64(count)
	case rL2:
		return math.Sqrt(acc)
	case rLogSumExp:
		return math.Log(acc) + lse
	case rArgMax, rArgMin:
		return float64(arg)
	}
	return acc
}

// walk visits the reduced sub-tensor in row-major order; f gets the position along it.
func (r *reduce) walk(x kernels.Tensor, base int, dims, strides []int, f func(i int, v float64)) {
	n := len(dims)
	if n == 0 {
		f(0, loadF64(x, base))
		return
	}
	var idx [16]int
	inner, is := dims[n-1], strides[n-1]
	off := base
	pos := 0
	f32 := x.DType == graph.Float32
	var xs []float32
	if f32 {
		xs = x.Float32s()
	}
	for {
		if inner > 0 {
			if f32 {
				for i := 0; i < inner; i++ {
					f(pos+i, float64(xs[off+i*is]))
				}
			} else {
				for i := 0; i < inner; i++ {
					f(pos+i, loadF64(x, off+i*is))
				}
			}
		}
		pos += inner
		d := n - 2
		for ; d >= 0; d-- {
			idx[d]++
			off += strides[d]
			if idx[d] < dims[d] {
				break
			}
			off -= strides[d] * dims[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

func reduceOps() []*op {
	mk := func(name string, o redOp) *op {
		return &op{key: kernels.Key("", name), tactics: direct, sel: selectReduce(o)}
	}
	return []*op{
		mk("ReduceSum", rSum), mk("ReduceMean", rMean), mk("ReduceMax", rMax), mk("ReduceMin", rMin),
		mk("ReduceProd", rProd), mk("ReduceSumSquare", rSumSquare), mk("ReduceL1", rL1), mk("ReduceL2", rL2),
		mk("ReduceLogSumExp", rLogSumExp), mk("ArgMax", rArgMax), mk("ArgMin", rArgMin),
	}
}
