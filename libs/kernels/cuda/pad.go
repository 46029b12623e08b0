package cuda

import (
	"fmt"
	"math"

	"github.com/x448/float16"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Pad (opset 2 to 21): modes constant, reflect, edge and wrap over any dtype of 1, 2, 4 or 8
// bytes and up to 6 dims, with the checks of kernels.CheckPad and the CPU kernel's semantics
// (libs/kernels/cpu/pad.go): negative pads crop, the constant is constant_value (input 2) or the
// value attribute (before opset 11), zero when neither is given. One launch of carve_pad_*
// (csrc/pad.cu), an output element a thread, no workspace. The pads (and the opset-18 axes) are
// parameters of the launch when known at Select (the attribute before opset 11, Value.Const
// after); otherwise the kernel reads the begin pads from the device. The output's shape was
// inferred from the same pads, so the CPU's run-time check that they agree has no counterpart
// here: a kernel cannot report it without synchronizing.

// flags of carve_pad_* (csrc/pad.cu)
const (
	padDevice = 4
	padAxes64 = 8
)

// padModes are the codes of csrc PAD_CONSTANT, PAD_REFLECT, PAD_EDGE and PAD_WRAP.
var padModes = map[string]int{"constant": 0, "reflect": 1, "edge": 2, "wrap": 3}

func padOps() []*op {
	return []*op{{key: kernels.Key("", "Pad"), tactics: direct, sel: selectPad}}
}

// knownPads is every dim's begin and end pads when Select knows them: the attribute (pd.AttrPads,
// before opset 11), or the pads input's bytes and the axes input's, if any (Value.Const).
func knownPads(n *kernels.Node, pd kernels.PadNode, rank int) ([]int64, bool, error) {
	var pads, axes []int64
	if pd.AttrPads != nil {
		pads = pd.AttrPads
	} else {
		pv, _ := n.Input(1) // checked by kernels.CheckPad: a 1-D int64 tensor
		if int64(len(pv.Const)) != pv.Shape[0]*8 {
			return nil, false, nil
		}
		pads = kernels.ViewAs[int64](pv.Const)
		if av, ok := n.Input(3); ok {
			switch {
			case av.DType == graph.Int64 && int64(len(av.Const)) == av.Shape[0]*8:
				axes = kernels.ViewAs[int64](av.Const)
			case av.DType == graph.Int32 && int64(len(av.Const)) == av.Shape[0]*4:
				for _, a := range kernels.ViewAs[int32](av.Const) {
					axes = append(axes, int64(a))
				}
			default:
				return nil, false, nil
			}
		}
	}
	full, err := graph.PadAmounts(pads, axes, rank)
	return full, err == nil, err
}

// padConstBits is the value attribute as the bits of an element of dt (zero for integer types,
// as the CPU kernel fills them).
func padConstBits(v float32, dt graph.DType) int64 {
	switch dt {
	case graph.Float32:
		return int64(math.Float32bits(v))
	case graph.Float64:
		return int64(math.Float64bits(float64(v)))
	case graph.Float16:
		return int64(float16.Fromfloat32(v).Bits())
	case graph.BFloat16:
		b := math.Float32bits(v)
		if v != v {
			return int64(b>>16 | 0x40)
		}
		return int64((b + 0x7fff + (b>>16)&1) >> 16) // nearest even
	}
	return 0
}

func selectPad(n *kernels.Node, t kernels.Target) (plan, error) {
	pd, err := kernels.CheckPad(n)
	if err != nil {
		return plan{}, err
	}
	x, out := n.Inputs[0], n.Outputs[0].Shape
	r := len(x.Shape)
	if r > maxRank {
		return plan{}, fmt.Errorf("rank %d; the CUDA kernel takes rank <= %d", r, maxRank)
	}
	es, err := elemSize(x.DType)
	if err != nil {
		return plan{}, err
	}
	ind, od, err := indexDims(x.Shape, out)
	if err != nil {
		return plan{}, err
	}
	var begin [maxRank]int64
	total := numel(out)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	flags := padModes[pd.Mode]
	pads, axes, k := nullp(), nullp(), 0
	full, known, err := knownPads(n, pd, r)
	switch {
	case err != nil:
		return plan{}, err
	case known:
		copy(begin[:], full[:r])
	default:
		flags |= padDevice
		pads = inp(1)
		if av, ok := n.Input(3); ok {
			axes, k = inp(3), int(av.Shape[0])
			if av.DType == graph.Int64 {
				flags |= padAxes64
			}
		}
	}
	cval, bits := nullp(), int64(0)
	if _, ok := n.Input(2); ok {
		cval = inp(2)
	} else {
		bits = padConstBits(n.Attrs.Float("value", 0), x.DType)
	}
	ps := []param{outp(0), inp(0), cval, pads, axes, i64p(total), i32p(r), i32p(k), i32p(flags), i64p(bits),
		pack32(ind[0], ind[1]), pack32(ind[2], ind[3]), pack32(ind[4], ind[5]),
		pack32(od[0], od[1]), pack32(od[2], od[3]), pack32(od[4], od[5])}
	for _, b := range begin {
		ps = append(ps, i64p(b))
	}
	st := step{kernel: fmt.Sprintf("carve_pad_%d", es), grid: grid1(total, 1, t), block: block1, params: ps}
	return plan{tactic: "direct", prog: program{st}}, nil
}
