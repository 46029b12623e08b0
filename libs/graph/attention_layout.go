package graph

import (
	"fmt"
	"strings"
)

// AttrQLayout, AttrKLayout, AttrVLayout and AttrYLayout are carve's extension of ONNX Attention
// (opset 23): the layout in which the node reads Q, K and V and writes Y, so that it reads them
// where the exporter's movement ops (Transpose, Gather, Slice, Split, Reshape) took them from
// and writes Y where they put it, instead of each being copied. A layout names each axis of its
// tensor, outermost first:
//
//	b  the batch       h  the heads       s  the sequence (queries, or keys and values)
//	d  the head size: always the last axis, whose elements are contiguous
//	0-9  an axis that does not belong to this tensor: it is read at that index
//
// Each of b, h, s and d names exactly one axis. Q, K and V of nn.MultiheadAttention, views of
// one packed projection [S, B, 3, H, D], are that tensor three times with the layouts "sb0hd",
// "sb1hd" and "sb2hd"; its output [S, B, H, D] has the layout "sbhd". Y's layout has no
// digits. An absent layout is ONNX's: "bhsd" of a 4-D tensor (a 3-D one, [B, S, H*D] with
// q_num_heads and kv_num_heads, takes no layout). carve's rewrite writes them (package
// rewrite's attention-layout fusion); the kernels read a tensor through its strides.
const (
	AttrQLayout = "q_layout"
	AttrKLayout = "k_layout"
	AttrVLayout = "v_layout"
	AttrYLayout = "y_layout"
)

// AttentionLayout is one tensor's layout as ParseAttentionLayout reads it: the axes holding
// the batch, the heads, the sequence and the head size (the last), and for every axis the
// index it is read at (-1 for the four named axes).
type AttentionLayout struct {
	B, H, S, D int
	Fixed      []int64 // per axis
}

// StandardLayout is ONNX's 4-D layout, [batch, heads, sequence, head size].
const StandardLayout = "bhsd"

// Rank is the tensor's rank.
func (l AttentionLayout) Rank() int { return len(l.Fixed) }

// Dims returns the batch, heads, sequence and head size of a tensor of shape in layout l.
func (l AttentionLayout) Dims(shape Shape) (b, h, s, d Dim) {
	return shape[l.B], shape[l.H], shape[l.S], shape[l.D]
}

// String writes the layout back.
func (l AttentionLayout) String() string {
	var sb strings.Builder
	for i, f := range l.Fixed {
		switch {
		case i == l.B:
			sb.WriteByte('b')
		case i == l.H:
			sb.WriteByte('h')
		case i == l.S:
			sb.WriteByte('s')
		case i == l.D:
			sb.WriteByte('d')
		default:
			sb.WriteByte(byte('0' + f))
		}
	}
	return sb.String()
}

// ParseAttentionLayout reads a layout (AttrQLayout): b, h, s and d once each, d last, and
// digits for the axes read at one index; output layouts (AttrYLayout) take no digits.
func ParseAttentionLayout(s string, output bool) (AttentionLayout, error) {
	l := AttentionLayout{B: -1, H: -1, S: -1, D: -1, Fixed: make([]int64, len(s))}
	for i := 0; i < len(s); i++ {
		var at *int
		switch c := s[i]; {
		case c == 'b':
			at = &l.B
		case c == 'h':
			at = &l.H
		case c == 's':
			at = &l.S
		case c == 'd':
			at = &l.D
		case c >= '0' && c <= '9' && !output:
			l.Fixed[i] = int64(c - '0')
			continue
		default:
			return AttentionLayout{}, fmt.Errorf("attention layout %q: %q is not an axis (b, h, s, d%s)", s, c, map[bool]string{false: " or an index 0-9", true: ""}[output])
		}
		if *at >= 0 {
			return AttentionLayout{}, fmt.Errorf("attention layout %q names %q twice", s, s[i])
		}
		*at, l.Fixed[i] = i, -1
	}
	if l.B < 0 || l.H < 0 || l.S < 0 || l.D < 0 {
		return AttentionLayout{}, fmt.Errorf("attention layout %q must name b, h, s and d", s)
	}
	if l.D != len(s)-1 {
		return AttentionLayout{}, fmt.Errorf("attention layout %q: d (the head size) must be the last axis", s)
	}
	return l, nil
}

// AttentionLayouts reads an ONNX Attention node's layouts for every backend: those of Q, K, V
// and Y in that order, StandardLayout where absent, and whether any is given (custom). A node
// with a layout reads its inputs and writes its output by them alone: 3-D inputs then take
// none.
func AttentionLayouts(at Attributes) (ls [4]AttentionLayout, custom bool, err error) {
	for i, name := range []string{AttrQLayout, AttrKLayout, AttrVLayout, AttrYLayout} {
		s := StandardLayout
		if at.Has(name) {
			s, custom = at.String(name, ""), true
		}
		if ls[i], err = ParseAttentionLayout(s, i == 3); err != nil {
			return ls, false, fmt.Errorf("%s: %w", name, err)
		}
	}
	return ls, custom, nil
}
