package cuda

import (
	"fmt"

	"carve.dev/libs/kernels"
)

// MaxPool and AveragePool (one to three spatial dims; kernel_shape, strides, dilations, pads,
// auto_pad, ceil_mode; AveragePool's count_include_pad) and GlobalAveragePool and GlobalMaxPool
// on float32, float16 and bfloat16, with the checks of kernels.CheckPool and
// kernels.CheckGlobalPool and the CPU kernels' semantics (libs/kernels/cpu/pool.go): window taps
// outside the input skipped, an average over the taps inside the input or, with
// count_include_pad, inside the padded input (not the extra end of a ceil_mode window), a max
// that keeps NaN. One launch each, no workspace (csrc/pool.cu): carve_pool_* computes an output
// element a thread; carve_global_pool_* reduces a plane a block, so a 56 x 56 plane is spread
// over a few hundred threads. MaxPool's Indices output is refused (kernels.CheckPool).

// pool flags of carve_pool_* (csrc/pool.cu)
const (
	poolMax        = 1
	poolIncludePad = 2
)

func poolOps() []*op {
	return []*op{
		{key: kernels.Key("", "MaxPool"), tactics: direct, sel: selectPool},
		{key: kernels.Key("", "AveragePool"), tactics: direct, sel: selectPool},
		{key: kernels.Key("", "GlobalAveragePool"), tactics: direct, sel: selectGlobalPool},
		{key: kernels.Key("", "GlobalMaxPool"), tactics: direct, sel: selectGlobalPool},
	}
}

// poolDims is the most spatial dims carve_pool_* takes (the CPU's limit too).
const poolDims = 3

func selectPool(n *kernels.Node, t kernels.Target) (plan, error) {
	g, err := kernels.CheckPool(n)
	if err != nil {
		return plan{}, err
	}
	dt := n.Inputs[0].DType
	if !isFloat(dt) {
		return plan{}, errDType("the input", dt, "float32, float16 or bfloat16")
	}
	if len(g.In) > poolDims {
		return plan{}, fmt.Errorf("%d spatial dims: at most %d are supported", len(g.In), poolDims)
	}
	// the spatial dims padded in front to three: size 1, kernel 1, stride 1, dilation 1, no pads
	var in, out, k, s, d, pb, pe [poolDims]int64
	off := poolDims - len(g.In)
	for i := range poolDims {
		in[i], out[i], k[i], s[i], d[i] = 1, 1, 1, 1, 1
		if j := i - off; j >= 0 {
			in[i], out[i], k[i], s[i], d[i] = g.In[j], g.Out[j], g.Kernel[j], g.Strides[j], g.Dilations[j]
			pb[i], pe[i] = g.PadBegin[j], g.PadEnd[j]
		}
	}
	total := g.N * g.C * out[0] * out[1] * out[2]
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	// the kernel's window arithmetic is int: every coordinate it forms, iz = od*s - pb + kz*d up
	// to the padded extent, stays below 2^31
	var ints []int64
	for i := range poolDims {
		ints = append(ints, in[i], out[i], k[i], s[i], d[i], pb[i], pe[i], in[i]+pb[i]+pe[i]+(k[i]-1)*d[i]+out[i]*s[i])
	}
	if !fits32(ints...) {
		return plan{}, fmt.Errorf("window of input %v, kernel %v, strides %v, dilations %v is too large for the CUDA kernel", g.In, g.Kernel, g.Strides, g.Dilations)
	}
	flags := 0
	if n.Op == "MaxPool" {
		flags |= poolMax
	} else if n.Attrs.Int("count_include_pad", 0) != 0 {
		flags |= poolIncludePad
	}
	ps := []param{outp(0), inp(0), i64p(total), i32p(flags)}
	for _, a := range [][poolDims]int64{in, out, k, s, d, pb, pe} {
		for _, x := range a {
			ps = append(ps, i32p(int(x)))
		}
	}
	st := step{kernel: "carve_pool_" + dtName(dt), grid: grid1(total, 1, t), block: block1, params: ps}
	return plan{tactic: "direct", prog: program{st}}, nil
}

func selectGlobalPool(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckGlobalPool(n); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	if !isFloat(x.DType) {
		return plan{}, errDType("the input", x.DType, "float32, float16 or bfloat16")
	}
	planes, plane := x.Shape[0]*x.Shape[1], numel(x.Shape[2:])
	if planes == 0 {
		return plan{tactic: "direct"}, nil
	}
	st := step{kernel: "carve_global_pool_" + dtName(x.DType), grid: rowsGrid(planes, t), block: rowBlock(plane, 16/x.DType.Size()),
		params: []param{outp(0), inp(0), i64p(planes), i64p(plane), i32p(boolInt(n.Op == "GlobalMaxPool"))}}
	return plan{tactic: "direct", prog: program{st}}, nil
}
