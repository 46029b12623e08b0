package kernels

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
)

// RotaryNode is a RotaryEmbedding node as CheckRotary reads it.
type RotaryNode struct {
	// B, S, Heads and D are the batch, sequence, head count and head size; BSNH reports a 3-D
	// input [B, S, Heads*D] (else [B, Heads, S, D]).
	B, S, Heads, D int64
	BSNH           bool
	// Rot is the rotated part of each head (rotary_embedding_dim, the head size when 0) and
	// Half the caches' width, Rot/2.
	Rot, Half int64
	// Interleaved rotates pairs (x0, x1), (x2, x3), ... instead of the two halves.
	Interleaved bool
	// PosIn, CosIn and SinIn are the input indices of position_ids (-1: the caches are per
	// position already, [B, S, Half]) and of the caches.
	PosIn, CosIn, SinIn int
	// PosScalar reports position_ids of one element: an offset added to each row's index.
	PosScalar bool
	// MaxPos is the positions the caches hold (B*S without position_ids).
	MaxPos int64
}

// CheckRotary checks RotaryEmbedding for every backend, com.microsoft's (input, position_ids,
// cos_cache, sin_cache; is_packed_batching refused) and ONNX opset 23's (X, cos_cache,
// sin_cache, position_ids?): a float32, float16 or bfloat16 input of rank 3 or 4 whose hidden
// size splits into the heads (num_heads, or the caches' rotary dim when 0), caches of its type
// and one shape, [max_position, Half] with position_ids (int64, one element or [B, S]) and
// [B, S, Half] without, an even rotary dim within the head size of twice the caches' width, and
// the output of the input's type and shape. It returns the node's geometry.
func CheckRotary(n *Node) (RotaryNode, error) {
	r := RotaryNode{PosIn: 1, CosIn: 2, SinIn: 3}
	if n.Domain == DomainMicrosoft {
		if err := CheckArity(n, 4, 4, 1, 1); err != nil {
			return RotaryNode{}, err
		}
		if n.Attrs.Int("is_packed_batching", 0) != 0 {
			return RotaryNode{}, fmt.Errorf("is_packed_batching is not supported")
		}
	} else {
		if err := CheckArity(n, 3, 4, 1, 1); err != nil {
			return RotaryNode{}, err
		}
		r.CosIn, r.SinIn, r.PosIn = 1, 2, 3
		if _, ok := n.Input(3); !ok {
			r.PosIn = -1
		}
	}
	x := n.Inputs[0]
	if !isFloatKernelType(x.DType) {
		return RotaryNode{}, fmt.Errorf("input is %v, want float32, float16 or bfloat16", x.DType)
	}
	cs, sn := n.Inputs[r.CosIn], n.Inputs[r.SinIn]
	if cs.DType != x.DType || sn.DType != x.DType || !slices.Equal(cs.Shape, sn.Shape) || len(cs.Shape) == 0 {
		return RotaryNode{}, fmt.Errorf("cos/sin caches %v and %v for input %v", cs, sn, x.DType)
	}
	r.Half = cs.Shape[len(cs.Shape)-1]
	heads := n.Attrs.Int("num_heads", 0)
	r.Rot = n.Attrs.Int("rotary_embedding_dim", 0)
	switch len(x.Shape) {
	case 3:
		r.BSNH = true
		r.B, r.S = x.Shape[0], x.Shape[1]
		hidden := x.Shape[2]
		if heads == 0 {
			if r.Rot != 0 {
				return RotaryNode{}, fmt.Errorf("rotary_embedding_dim needs num_heads for a 3-D input")
			}
			if r.Half == 0 || hidden%(2*r.Half) != 0 {
				return RotaryNode{}, fmt.Errorf("hidden size %d is not a multiple of the cache's rotary dim %d", hidden, 2*r.Half)
			}
			heads = hidden / (2 * r.Half)
		}
		if heads <= 0 || hidden%heads != 0 {
			return RotaryNode{}, fmt.Errorf("hidden size %d does not split into %d heads", hidden, heads)
		}
		r.Heads, r.D = heads, hidden/heads
	case 4:
		r.B, r.Heads, r.S, r.D = x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	default:
		return RotaryNode{}, fmt.Errorf("input shape %v, want 3-D or 4-D", x.Shape)
	}
	if r.Rot == 0 {
		r.Rot = r.D
	}
	if r.Rot%2 != 0 || r.Rot > r.D || r.Half != r.Rot/2 {
		return RotaryNode{}, fmt.Errorf("rotary dim %d, head size %d, cache width %d", r.Rot, r.D, r.Half)
	}
	r.Interleaved = n.Attrs.Int("interleaved", 0) != 0
	if r.PosIn >= 0 {
		p := n.Inputs[r.PosIn]
		if p.DType != graph.Int64 {
			return RotaryNode{}, fmt.Errorf("position_ids are %v, want int64", p.DType)
		}
		switch {
		case len(p.Shape) == 0 || len(p.Shape) == 1 && p.Shape[0] == 1:
			r.PosScalar = true
		case len(p.Shape) == 2 && p.Shape[0] == r.B && p.Shape[1] == r.S:
		default:
			return RotaryNode{}, fmt.Errorf("position_ids shape %v, want [1] or [%d, %d]", p.Shape, r.B, r.S)
		}
		if len(cs.Shape) != 2 {
			return RotaryNode{}, fmt.Errorf("cos_cache shape %v, want [max_position, %d]", cs.Shape, r.Half)
		}
		r.MaxPos = cs.Shape[0]
	} else {
		if len(cs.Shape) != 3 || cs.Shape[0] != r.B || cs.Shape[1] != r.S {
			return RotaryNode{}, fmt.Errorf("without position_ids, cos_cache must be [%d, %d, %d], is %v", r.B, r.S, r.Half, cs.Shape)
		}
		r.MaxPos = r.B * r.S
	}
	if err := CheckOutput(n, 0, x.DType, x.Shape); err != nil {
		return RotaryNode{}, err
	}
	return r, nil
}
