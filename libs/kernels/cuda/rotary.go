package cuda

import (
	"fmt"

	"carve.dev/libs/graph"
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
	ms := n.Key().Domain == kernels.DomainMicrosoft
	posIn, cosIn, sinIn := 1, 2, 3
	if ms {
		if err := kernels.CheckArity(n, 4, 4, 1, 1); err != nil {
			return plan{}, err
		}
		if n.Attrs.Int("is_packed_batching", 0) != 0 {
			return plan{}, fmt.Errorf("is_packed_batching is not supported")
		}
	} else {
		if err := kernels.CheckArity(n, 3, 4, 1, 1); err != nil {
			return plan{}, err
		}
		cosIn, sinIn, posIn = 1, 2, 3
		if _, ok := n.Input(3); !ok {
			posIn = -1
		}
	}
	x := n.Inputs[0]
	if !isFloat(x.DType) {
		return plan{}, errDType("the input", x.DType, "float32, float16 or bfloat16")
	}
	cs, sn := n.Inputs[cosIn], n.Inputs[sinIn]
	if cs.DType != x.DType || sn.DType != x.DType || !equalShape(cs.Shape, sn.Shape) || len(cs.Shape) == 0 {
		return plan{}, fmt.Errorf("cos/sin caches %v and %v for input %v", cs, sn, x.DType)
	}
	half := cs.Shape[len(cs.Shape)-1]
	heads := n.Attrs.Int("num_heads", 0)
	rot := n.Attrs.Int("rotary_embedding_dim", 0)
	var b, s, nh, d int64
	flags := 0
	switch len(x.Shape) {
	case 3:
		flags |= rotBSNH
		b, s = x.Shape[0], x.Shape[1]
		hidden := x.Shape[2]
		if heads == 0 {
			if rot != 0 {
				return plan{}, fmt.Errorf("rotary_embedding_dim needs num_heads for a 3-D input")
			}
			if half == 0 || hidden%(2*half) != 0 {
				return plan{}, fmt.Errorf("hidden size %d is not a multiple of the cache's rotary dim %d", hidden, 2*half)
			}
			heads = hidden / (2 * half)
		}
		if heads <= 0 || hidden%heads != 0 {
			return plan{}, fmt.Errorf("hidden size %d does not split into %d heads", hidden, heads)
		}
		nh, d = heads, hidden/heads
	case 4:
		b, nh, s, d = x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	default:
		return plan{}, fmt.Errorf("input shape %v, want 3-D or 4-D", x.Shape)
	}
	if rot == 0 {
		rot = d
	}
	if rot%2 != 0 || rot > d || half != rot/2 {
		return plan{}, fmt.Errorf("rotary dim %d, head size %d, cache width %d", rot, d, half)
	}
	if n.Attrs.Int("interleaved", 0) != 0 {
		flags |= rotInterleaved
	}
	maxPos := int64(0)
	pos := nullp()
	if posIn >= 0 {
		p := n.Inputs[posIn]
		if p.DType != graph.Int64 {
			return plan{}, fmt.Errorf("position_ids are %v, want int64", p.DType)
		}
		switch {
		case numel(p.Shape) == 1 && len(p.Shape) <= 1:
			flags |= rotPosScalar
		case len(p.Shape) == 2 && p.Shape[0] == b && p.Shape[1] == s:
		default:
			return plan{}, fmt.Errorf("position_ids shape %v, want [1] or [%d, %d]", p.Shape, b, s)
		}
		if len(cs.Shape) != 2 {
			return plan{}, fmt.Errorf("cos_cache shape %v, want [max_position, %d]", cs.Shape, half)
		}
		maxPos = cs.Shape[0]
		flags |= rotPos
		pos = inp(posIn)
	} else {
		if len(cs.Shape) != 3 || cs.Shape[0] != b || cs.Shape[1] != s {
			return plan{}, fmt.Errorf("without position_ids, cos_cache must be [%d, %d, %d], is %v", b, s, half, cs.Shape)
		}
		maxPos = b * s
	}
	if err := kernels.CheckOutput(n, 0, x.DType, x.Shape); err != nil {
		return plan{}, err
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
