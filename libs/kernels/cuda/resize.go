package cuda

import (
	"fmt"

	"carve.dev/libs/kernels"
)

// Resize (opset 10 to 21) and Upsample (opset 7 to 9) on float32, float16 and bfloat16 up to 6
// dims, with the checks of kernels.CheckResize and the CPU kernel's semantics
// (libs/kernels/cpu/resize.go): modes nearest (any dim, every nearest_mode) and linear
// (bilinear over the last two dims), coordinate transformations half_pixel,
// half_pixel_symmetric, pytorch_half_pixel, align_corners and asymmetric, source coordinates
// clamped into the input. One launch of carve_resize_* (csrc/resize.cu), an output element a
// thread, no workspace. A dim's scale is the scales input's or attribute's where given and
// positive, else out/in (sizes): known at Select (the attribute, Value.Const, or out/in) it is a
// double parameter; a scales tensor without bytes at Select is read by the kernel.

// codes of carve_resize_*'s flags (csrc/resize.cu): the mode, then 4 bits each of the
// coordinate transformation and the nearest mode
var (
	resizeModes  = map[string]int{"nearest": 0, "linear": 1}
	resizeCoords = map[string]int{"half_pixel": 0, "half_pixel_symmetric": 1, "pytorch_half_pixel": 2, "align_corners": 3, "asymmetric": 4}
	resizeRounds = map[string]int{"round_prefer_floor": 0, "round_prefer_ceil": 1, "floor": 2, "ceil": 3}
)

func resizeOps() []*op {
	return []*op{
		{key: kernels.Key("", "Resize"), tactics: direct, sel: selectResize},
		{key: kernels.Key("", "Upsample"), tactics: direct, sel: selectResize},
	}
}

func selectResize(n *kernels.Node, t kernels.Target) (plan, error) {
	rs, err := kernels.CheckResize(n)
	if err != nil {
		return plan{}, err
	}
	x, out := n.Inputs[0], n.Outputs[0].Shape
	r := len(x.Shape)
	if r == 0 || r > maxRank {
		return plan{}, fmt.Errorf("rank %d; the CUDA kernel takes rank 1 to %d", r, maxRank)
	}
	if len(rs.Axes) > maxRank {
		return plan{}, fmt.Errorf("axes %v: the CUDA kernel takes at most %d", rs.Axes, maxRank)
	}
	ind, od, err := indexDims(x.Shape, out)
	if err != nil {
		return plan{}, err
	}
	total := numel(out)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	var sc [maxRank]float64
	for i := range r {
		sc[i] = float64(out[i]) / float64(max(x.Shape[i], 1))
	}
	override := func(given []float32) {
		for j, a := range rs.Axes {
			if j < len(given) && given[j] > 0 {
				sc[a] = float64(given[j])
			}
		}
	}
	scales, sidx := nullp(), int64(0)
	if i := rs.ScalesInput; i >= 0 {
		// CheckResize leaves ScalesInput >= 0 only for a present float32 input of len(Axes) values
		if v := n.Inputs[i]; int64(len(v.Const)) == 4*int64(len(rs.Axes)) {
			override(kernels.ViewAs[float32](v.Const))
		} else {
			scales = inp(i)
			for j, a := range rs.Axes {
				sidx = sidx&^(15<<(4*a)) | int64(j+1)<<(4*a) // a repeated axis takes its last scale
			}
		}
	} else if rs.AttrScales != nil {
		override(rs.AttrScales)
	}
	flags := resizeModes[rs.Mode] | resizeCoords[rs.Coord]<<4 | resizeRounds[rs.Nearest]<<8
	ps := []param{outp(0), inp(0), scales, i64p(total), i32p(r), i32p(flags),
		pack32(ind[0], ind[1]), pack32(ind[2], ind[3]), pack32(ind[4], ind[5]),
		pack32(od[0], od[1]), pack32(od[2], od[3]), pack32(od[4], od[5]), i64p(sidx)}
	for _, s := range sc {
		ps = append(ps, f64p(s))
	}
	st := step{kernel: "carve_resize_" + dtName(x.DType), grid: grid1(total, 1, t), block: block1, params: ps}
	return plan{tactic: "direct", prog: program{st}}, nil
}
