package graph

// Shape inference of the vision and audio ops: Conv, ConvTranspose, MaxPool, AveragePool, their
// global forms, the normalizations over channels (BatchNormalization, InstanceNormalization,
// GroupNormalization), Pad, Resize and Upsample.
//
// The output-size arithmetic of a sliding window lives here once, in Window, over Dims: the
// kernels' checks (libs/kernels) call Window.OutConst on concrete shapes, so that a kernel and
// shape inference cannot disagree about an output's size or a SAME padding.

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Window is the geometry of a window sliding over a tensor's spatial dims (those after N and C)
// as Conv, ConvTranspose and the pools take it: per spatial dim a kernel size, a stride and a
// dilation, explicit pads (all begins, then all ends) unless AutoPad is SAME_UPPER, SAME_LOWER
// or VALID, and the pools' ceil_mode.
type Window struct {
	Kernel, Strides, Dilations []int64
	Pads                       []int64
	AutoPad                    string // NOTSET, SAME_UPPER, SAME_LOWER or VALID
	CeilMode                   bool
	// Transpose makes the window ConvTranspose's: OutputPadding and OutputShape apply.
	Transpose     bool
	OutputPadding []int64
	OutputShape   []int64 // the spatial output dims, nil when absent
}

// ParseWindow reads a window's attributes (kernel_shape, strides, dilations, pads, auto_pad,
// ceil_mode, and ConvTranspose's output_padding and output_shape) for spatial dims. kernel is
// the kernel size to use when kernel_shape is absent (a Conv's weight dims), nil when the
// attribute is required (pools). Errors name the attribute and what it must hold.
func ParseWindow(a Attributes, spatial int, kernel []int64, transpose bool) (Window, error) {
	w := Window{AutoPad: a.String("auto_pad", "NOTSET"), CeilMode: a.Int("ceil_mode", 0) != 0, Transpose: transpose}
	if spatial < 1 {
		return w, fmt.Errorf("input has no spatial dims: want rank 3 or more [N, C, D1, ...]")
	}
	ones := func() []int64 {
		s := make([]int64, spatial)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	w.Kernel = a.Ints("kernel_shape")
	if w.Kernel == nil {
		if kernel == nil {
			return w, fmt.Errorf("attribute kernel_shape is required")
		}
		w.Kernel = kernel
	}
	if len(w.Kernel) != spatial {
		return w, fmt.Errorf("kernel_shape %v has %d dims, want %d (the input's spatial dims)", w.Kernel, len(w.Kernel), spatial)
	}
	if kernel != nil && !slices.Equal(kernel, w.Kernel) {
		return w, fmt.Errorf("kernel_shape %v differs from the weight's spatial dims %v", w.Kernel, kernel)
	}
	get := func(name string, n int, min int64) ([]int64, error) {
		v := a.Ints(name)
		if v == nil {
			if name == "pads" || name == "output_padding" {
				return make([]int64, n), nil
			}
			return ones(), nil
		}
		if len(v) != n {
			return nil, fmt.Errorf("%s %v has %d values, want %d", name, v, len(v), n)
		}
		for _, x := range v {
			if x < min {
				return nil, fmt.Errorf("%s %v holds %d, want values >= %d", name, v, x, min)
			}
		}
		return v, nil
	}
	var err error
	for _, k := range w.Kernel {
		if k < 1 {
			return w, fmt.Errorf("kernel_shape %v holds %d, want sizes >= 1", w.Kernel, k)
		}
	}
	if w.Strides, err = get("strides", spatial, 1); err != nil {
		return w, err
	}
	if w.Dilations, err = get("dilations", spatial, 1); err != nil {
		return w, err
	}
	if w.Pads, err = get("pads", 2*spatial, 0); err != nil {
		return w, err
	}
	switch w.AutoPad {
	case "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER":
	default:
		return w, fmt.Errorf("auto_pad %q is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", w.AutoPad)
	}
	if transpose {
		if w.OutputPadding, err = get("output_padding", spatial, 0); err != nil {
			return w, err
		}
		for i, p := range w.OutputPadding {
			if p >= max(w.Strides[i], w.Dilations[i]) {
				return w, fmt.Errorf("output_padding %v holds %d, want less than the stride or the dilation", w.OutputPadding, p)
			}
		}
		if os := a.Ints("output_shape"); os != nil {
			if len(os) == spatial+2 {
				os = os[2:] // the full output shape, as some exporters write it
			}
			if len(os) != spatial {
				return w, fmt.Errorf("output_shape %v has %d dims, want %d (the spatial dims)", os, len(os), spatial)
			}
			w.OutputShape = os
		}
	}
	return w, nil
}

// Out is the window's spatial output dims over input dims in, with the pads at each end
// (SAME padding resolved). For a pool with CeilMode, a last window that would start in the end
// padding is dropped, as onnxruntime and PyTorch do. ok is the condition that every output
// dim is at least 1 (the padded input holds the dilated kernel), a constant where in is.
func (w *Window) Out(in []Dim) (out, begin, end []Dim, ok Dim) {
	n := len(in)
	out, begin, end = make([]Dim, n), make([]Dim, n), make([]Dim, n)
	ok = Const(1)
	for i, x := range in {
		k, s, d := w.Kernel[i], Const(w.Strides[i]), w.Dilations[i]
		ek := Const((k-1)*d + 1) // the dilated kernel's extent
		if w.Transpose {
			out[i], begin[i], end[i] = w.transposeOut(i, x, ek)
			ok = fnDim(fnMin, ok, ltDim(Const(0), out[i]))
			continue
		}
		switch w.AutoPad {
		case "SAME_UPPER", "SAME_LOWER":
			out[i] = x.ceilDiv(s)
			total := MaxDim(Const(0), out[i].Sub(Const(1)).Mul(s).Add(ek).Sub(x))
			half := total.FloorDiv(Const(2))
			if w.AutoPad == "SAME_UPPER" {
				begin[i], end[i] = half, total.Sub(half)
			} else {
				begin[i], end[i] = total.Sub(half), half
			}
		default:
			begin[i], end[i] = Const(0), Const(0)
			if w.AutoPad == "NOTSET" {
				begin[i], end[i] = Const(w.Pads[i]), Const(w.Pads[n+i])
			}
			span := x.Add(begin[i]).Add(end[i]).Sub(ek)
			ok = fnDim(fnMin, ok, ltDim(Const(-1), span))
			if w.CeilMode {
				o := span.ceilDiv(s).Add(Const(1))
				// drop a window that starts in the end padding
				starts := ltDim(o.Sub(Const(1)).Mul(s), x.Add(begin[i]))
				out[i] = selectDim(starts, o, o.Sub(Const(1)))
			} else {
				out[i] = span.FloorDiv(s).Add(Const(1))
			}
		}
		ok = fnDim(fnMin, ok, ltDim(Const(0), out[i]))
	}
	return out, begin, end, ok
}

// transposeOut is ConvTranspose's output dim i and pads over input dim x: the output_shape
// attribute's with the pads it implies, or stride*(in-1) + output_padding + extent - pads, SAME
// meaning an output of in*stride.
func (w *Window) transposeOut(i int, x, ek Dim) (out, begin, end Dim) {
	s, op := Const(w.Strides[i]), Const(w.OutputPadding[i])
	full := s.Mul(x.Sub(Const(1))).Add(op).Add(ek)
	var target Dim
	switch {
	case w.OutputShape != nil:
		target = Const(w.OutputShape[i])
	case w.AutoPad == "SAME_UPPER" || w.AutoPad == "SAME_LOWER":
		target = x.Mul(s)
	case w.AutoPad == "VALID":
		return full, Const(0), Const(0)
	default:
		b, e := Const(w.Pads[i]), Const(w.Pads[len(w.Kernel)+i])
		return full.Sub(b).Sub(e), b, e
	}
	total := MaxDim(Const(0), full.Sub(target))
	half := total.FloorDiv(Const(2))
	if w.AutoPad == "SAME_LOWER" {
		return target, total.Sub(half), half
	}
	return target, half, total.Sub(half)
}

// OutConst is Out over concrete input dims: the output dims and the pads at each end, or an
// error naming the dims when an output dim would be under 1.
func (w *Window) OutConst(in []int64) (out, begin, end []int64, err error) {
	o, b, e, ok := w.Out(ConstShape(in))
	if v, isConst := ok.Value(); !isConst || v == 0 {
		return nil, nil, nil, fmt.Errorf("spatial dims %v are too small for kernel %v with dilations %v, strides %v and pads %v (auto_pad %s)",
			in, w.Kernel, w.Dilations, w.Strides, w.Pads, w.AutoPad)
	}
	vals := func(ds []Dim) ([]int64, error) {
		r := make([]int64, len(ds))
		for i, d := range ds {
			v, ok := d.Value()
			if !ok || d.Err() != nil {
				return nil, fmt.Errorf("window arithmetic over %v gave %v", in, d)
			}
			r[i] = v
		}
		return r, nil
	}
	if out, err = vals(o); err != nil {
		return nil, nil, nil, err
	}
	if begin, err = vals(b); err != nil {
		return nil, nil, nil, err
	}
	if end, err = vals(e); err != nil {
		return nil, nil, nil, err
	}
	return out, begin, end, nil
}

// window parses the node's window over x's spatial dims and sets output 0 to [N, M, out...],
// checking at Bind what cannot be checked now.
func (c *ictx) window(x *Value, m Dim, kernel []int64, transpose bool) error {
	if len(x.Shape) < 3 {
		return c.errf("%s needs an input of rank 3 or more [N, C, D1, ...], has %v", c.n.OpType, x.Shape)
	}
	w, err := ParseWindow(c.n.Attrs, len(x.Shape)-2, kernel, transpose)
	if err != nil {
		return c.errf("%v", err)
	}
	out, _, _, ok := w.Out(x.Shape[2:])
	if err := c.require(ok, fmt.Sprintf("spatial dims %v hold the dilated kernel %v (an output dim under 1)", x.Shape[2:], w.Kernel)); err != nil {
		return err
	}
	c.out(0, x.DType, append(Shape{x.Shape[0], m}, out...))
	return nil
}

// weightKernel checks a weight's rank against the input's and returns its spatial dims, which
// must be constants.
func (c *ictx) weightKernel(x, w *Value) ([]int64, error) {
	if len(w.Shape) != len(x.Shape) {
		return nil, c.errf("%s weight %v has rank %d, want the input's %d", c.n.OpType, w.Shape, len(w.Shape), len(x.Shape))
	}
	k, ok := dimsConst(w.Shape[2:])
	if !ok {
		return nil, c.errf("%s weight %v has symbolic spatial dims", c.n.OpType, w.Shape)
	}
	return k, nil
}

// Conv(X [N, C, D...], W [M, C/group, K...], B [M]) -> [N, M, out...]; com.microsoft.FusedConv
// too (its Z, of the output's shape, and its activation are the kernels' to check).
func inferConv(c *ictx) error {
	x, w := c.in(0), c.in(1)
	if len(x.Shape) < 3 {
		return c.errf("Conv needs an input of rank 3 or more [N, C, D1, ...], has %v", x.Shape)
	}
	k, err := c.weightKernel(x, w)
	if err != nil {
		return err
	}
	g := c.n.Attrs.Int("group", 1)
	if g < 1 {
		return c.errf("Conv group %d, want 1 or more", g)
	}
	if err := c.eq(x.Shape[1], w.Shape[1].Mul(Const(g)), "Conv input channels against weight channels times group"); err != nil {
		return err
	}
	return c.window(x, w.Shape[0], k, false)
}

// ConvTranspose(X [N, C, D...], W [C, M/group, K...], B [M]) -> [N, M, out...].
func inferConvTranspose(c *ictx) error {
	x, w := c.in(0), c.in(1)
	if len(x.Shape) < 3 {
		return c.errf("ConvTranspose needs an input of rank 3 or more [N, C, D1, ...], has %v", x.Shape)
	}
	k, err := c.weightKernel(x, w)
	if err != nil {
		return err
	}
	g := c.n.Attrs.Int("group", 1)
	if g < 1 {
		return c.errf("ConvTranspose group %d, want 1 or more", g)
	}
	if err := c.eq(x.Shape[1], w.Shape[0], "ConvTranspose input channels against the weight's first dim"); err != nil {
		return err
	}
	return c.window(x, w.Shape[1].Mul(Const(g)), k, true)
}

// MaxPool and AveragePool keep N and C; MaxPool's optional Indices output is int64 of the
// output's shape.
func inferPool(c *ictx) error {
	x := c.in(0)
	if len(x.Shape) < 3 {
		return c.errf("%s needs an input of rank 3 or more [N, C, D1, ...], has %v", c.n.OpType, x.Shape)
	}
	if err := c.window(x, x.Shape[1], nil, false); err != nil {
		return err
	}
	if v := c.n.Output(0); v != nil {
		c.out(1, Int64, v.Shape)
	}
	return nil
}

// GlobalAveragePool and GlobalMaxPool: [N, C, 1, ...].
func inferGlobalPool(c *ictx) error {
	x := c.in(0)
	if len(x.Shape) < 3 {
		return c.errf("%s needs an input of rank 3 or more [N, C, D1, ...], has %v", c.n.OpType, x.Shape)
	}
	out := slices.Clone(x.Shape)
	for i := 2; i < len(out); i++ {
		out[i] = Const(1)
	}
	c.out(0, x.DType, out)
	return nil
}

// BatchNormalization, InstanceNormalization and GroupNormalization keep the input's shape (the
// training outputs of BatchNormalization are its kernels' refusal).
func inferChannelNorm(c *ictx) error {
	x := c.in(0)
	if len(x.Shape) < 2 {
		return c.errf("%s needs an input of rank 2 or more [N, C, ...], has %v", c.n.OpType, x.Shape)
	}
	c.out(0, x.DType, x.Shape)
	return nil
}

// PadAmounts resolves a Pad node's pads (opset 11 and later: the pads input; before: the
// attribute) over rank dims, with the opset-18 axes input: begins then ends for every dim.
// axes may be nil (every dim). Negative pads crop.
func PadAmounts(pads []int64, axes []int64, rank int) ([]int64, error) {
	if axes == nil {
		if len(pads) != 2*rank {
			return nil, fmt.Errorf("pads has %d values, want %d (begin and end of each of %d dims)", len(pads), 2*rank, rank)
		}
		return pads, nil
	}
	if len(pads) != 2*len(axes) {
		return nil, fmt.Errorf("pads has %d values, want %d (begin and end of each of axes %v)", len(pads), 2*len(axes), axes)
	}
	full := make([]int64, 2*rank)
	seen := make([]bool, rank)
	for i, a := range axes {
		ax, err := axis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[ax] {
			return nil, fmt.Errorf("axes %v repeat axis %d", axes, ax)
		}
		seen[ax] = true
		full[ax], full[rank+ax] = pads[i], pads[len(axes)+i]
	}
	return full, nil
}

func inferPad(c *ictx) error {
	x := c.in(0)
	r := len(x.Shape)
	var pads []int64
	if c.in(1) != nil {
		d, err := c.needData(1, "Pad's pads")
		if err != nil {
			return err
		}
		vals, ok := dimsConst(d)
		if !ok {
			return c.errf("Pad's pads depend on dims: %v", d)
		}
		pads = vals
	} else {
		pads = c.n.Attrs.Ints("pads")
	}
	var axes []int64
	if c.in(3) != nil {
		d, err := c.needData(3, "Pad's axes")
		if err != nil {
			return err
		}
		vals, ok := dimsConst(d)
		if !ok {
			return c.errf("Pad's axes depend on dims: %v", d)
		}
		axes = vals
	}
	full, err := PadAmounts(pads, axes, r)
	if err != nil {
		return c.errf("%v", err)
	}
	out := make(Shape, r)
	for i, d := range x.Shape {
		out[i] = d.Add(Const(full[i] + full[r+i]))
		if err := c.require(ltDim(Const(-1), out[i]), fmt.Sprintf("Pad's dim %d (%s) is at least its crop %d", i, d, -full[i]-full[r+i])); err != nil {
			return err
		}
	}
	c.out(0, x.DType, out)
	return nil
}

// floatData returns the float values of input i when they are known at load (an initializer
// or a Constant of float32, float64 or float16), nil otherwise.
func (c *ictx) floatData(i int) ([]float64, bool) {
	v := c.in(i)
	if v == nil {
		return nil, false
	}
	var t *HostTensor
	switch {
	case v.Init != nil:
		h, err := v.Init.Host()
		if err != nil {
			return nil, false
		}
		t = h
	case v.ID < len(c.m.consts) && c.m.consts[v.ID] != nil:
		t = c.m.consts[v.ID]
	default:
		return nil, false
	}
	return FloatValues(t)
}

// FloatValues decodes a float32, float64 or float16 tensor's data.
func FloatValues(t *HostTensor) ([]float64, bool) {
	sz := int(t.DType.Size())
	if sz == 0 || len(t.Data)%sz != 0 {
		return nil, false
	}
	out := make([]float64, len(t.Data)/sz)
	for i := range out {
		b := t.Data[i*sz:]
		switch t.DType {
		case Float32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case Float64:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
		default:
			return nil, false
		}
	}
	return out, true
}

// ResizeOut is Resize's (and Upsample's) output dim over input dim in: sizes' when given,
// else floor(in * scale). It is exported for the kernels' check.
func ResizeOut(in int64, scale float64) int64 { return int64(math.Floor(float64(in)*scale + 1e-9)) }

// inferResize: Resize(X, roi, scales, sizes) (opset 11 and later; opset 10: X, scales) and
// Upsample(X, scales) (or the scales attribute). The output dims are sizes, or floor(dim *
// scale) for scales known at load (a symbolic dim needs a whole scale). The opset-18 axes
// attribute names the dims scales or sizes cover.
func inferResize(c *ictx) error {
	x := c.in(0)
	r := len(x.Shape)
	si, zi := 2, 3
	if c.n.OpType == "Upsample" || c.m.Opsets[""] == 10 {
		si, zi = 1, -1
	}
	axes := c.n.Attrs.Ints("axes")
	if axes == nil {
		axes = make([]int64, r)
		for i := range axes {
			axes[i] = int64(i)
		}
	}
	for i, a := range axes {
		ax, err := axis(a, r)
		if err != nil {
			return c.errf("axes: %v", err)
		}
		axes[i] = int64(ax)
	}
	if p := c.n.Attrs.String("keep_aspect_ratio_policy", "stretch"); p != "stretch" {
		return c.errf("keep_aspect_ratio_policy %q is not supported (only stretch)", p)
	}
	out := slices.Clone(x.Shape)
	if zi >= 0 && c.in(zi) != nil {
		d, err := c.needData(zi, "Resize's sizes")
		if err != nil {
			return err
		}
		if len(d) != len(axes) {
			return c.errf("Resize's sizes has %d values, want %d", len(d), len(axes))
		}
		for i, a := range axes {
			out[a] = d[i]
		}
		c.out(0, x.DType, out)
		return nil
	}
	var scales []float64
	if c.in(si) != nil {
		s, ok := c.floatData(si)
		if !ok {
			return c.errf("%s's scales (input %d) are not known at load: want a float initializer or Constant", c.n.OpType, si)
		}
		scales = s
	} else if f := c.n.Attrs.Floats("scales"); f != nil {
		for _, v := range f {
			scales = append(scales, float64(v))
		}
	} else {
		return c.errf("%s has neither scales nor sizes", c.n.OpType)
	}
	if len(scales) != len(axes) {
		return c.errf("%s's scales has %d values, want %d", c.n.OpType, len(scales), len(axes))
	}
	for i, a := range axes {
		s := scales[i]
		if !(s > 0) {
			return c.errf("%s's scale %v for dim %d, want a positive scale", c.n.OpType, s, a)
		}
		if v, ok := out[a].Value(); ok {
			out[a] = Const(ResizeOut(v, s))
		} else if s == math.Trunc(s) {
			out[a] = out[a].Mul(Const(int64(s)))
		} else if s != 1 {
			return c.errf("%s's scale %v of symbolic dim %s: want a whole scale or sizes", c.n.OpType, s, out[a])
		}
	}
	c.out(0, x.DType, out)
	return nil
}
