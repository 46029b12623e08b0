package cuda

import (
	"fmt"

	"carve.dev/libs/kernels"
)

// kernel flags of carve_rotary_* (csrc/rotary.cu)
const (
	rotInterleaved = 1
	rotBSNH        = 2
	rotPosScalar   = 4
	rotPos         = 8
)

// selectRotary is RotaryEmbedding: com.microsoft's (input, position_ids, cos_cache, sin_cache)
// and ONNX opset 23's (X, cos_cache, sin_cache, position_ids?). Positions outside the cache are
// clamped to it (the CPU kernel reports an error).
func selectRotary(n *kernels.Node, t kernels.Target) (plan, error) {
	g, err := kernels.CheckRotary(n)
	if err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	b, s, nh, d, rot, half, maxPos := g.B, g.S, g.Heads, g.D, g.Rot, g.Half, g.MaxPos
	posIn, cosIn, sinIn := g.PosIn, g.CosIn, g.SinIn
	flags := 0
	if g.BSNH {
		flags |= rotBSNH
	}
	if g.Interleaved {
		flags |= rotInterleaved
	}
	pos := nullp()
	if posIn >= 0 {
		flags |= rotPos
		if g.PosScalar {
			flags |= rotPosScalar
		}
		pos = inp(posIn)
	}
	if !fits32(b, s, nh, d, maxPos) {
		return plan{}, fmt.Errorf("input %v is too large for the CUDA kernel", x.Shape)
	}
	units := b * s * nh * (half + d - rot)
	if units == 0 {
		return plan{tactic: "direct"}, nil
	}
	per := int64(1)
	if flags&rotInterleaved == 0 && half%(16/x.DType.Size()) == 0 {
		per = 16 / x.DType.Size()
	}
	st := step{kernel: "carve_rotary_" + dtName(x.DType), grid: grid1(units, per, t), block: block1, params: []param{
		outp(0), inp(0), inp(cosIn), inp(sinIn), pos, pack32(b, s), pack32(nh, d), i32p(int(rot)), i32p(flags), i32p(int(maxPos)),
	}}
	return plan{tactic: "direct", prog: program{st}}, nil
}

func rotaryOps() []*op {
	return []*op{
		{key: kernels.Key(kernels.DomainMicrosoft, "RotaryEmbedding"), tactics: direct, sel: selectRotary},
		{key: kernels.Key("", "RotaryEmbedding"), tactics: direct, sel: selectRotary},
	}
}
