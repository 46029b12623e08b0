package kernels

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
)

// ContribAttention is a com.microsoft.Attention node as CheckContribAttention reads it: X [B, S,
// Hin] projected by weights [Hin, HQ+HK+HV] into Heads heads of D (queries and keys) and Dv
// (values), attending over T = P + S keys (P those of the past).
type ContribAttention struct {
	B, S, Hin, Heads  int64
	Total, HQ, HK, HV int64
	D, Dv, P, T       int64
	// Bias, Past and Present report the bias input, the past input and the present output.
	Bias, Past, Present bool
}

// CheckContribAttention checks com.microsoft.Attention for every backend: the arity; no
// do_rotary, past_present_share_buffer or past_sequence_length; X [B, S, Hin] and weights
// [Hin, Total] of one float32, float16 or bfloat16 type; positive num_heads and
// qkv_hidden_sizes (three, equal for Q and K, each a multiple of the heads; Total/3 each when
// absent) summing to Total; a bias of X's type and Total elements; mask_index int32; past [2, B,
// Heads, P, D] of X's type; the output [B, S, HV] and present [2, B, Heads, T, D] (past and
// present needing equal Q/K/V sizes). The mask's and attention_bias's shapes are the backends'
// to check. It returns the node's geometry.
func CheckContribAttention(n *Node) (ContribAttention, error) {
	if err := CheckArity(n, 2, 7, 1, 2); err != nil {
		return ContribAttention{}, err
	}
	at := n.Attrs
	if at.Int("do_rotary", 0) != 0 || at.Int("past_present_share_buffer", 0) != 0 {
		return ContribAttention{}, fmt.Errorf("do_rotary and past_present_share_buffer are not supported")
	}
	if _, ok := n.Input(6); ok {
		return ContribAttention{}, fmt.Errorf("past_sequence_length is not supported")
	}
	x, w := n.Inputs[0], n.Inputs[1]
	dt := x.DType
	if !isFloatKernelType(dt) || w.DType != dt || len(x.Shape) != 3 || len(w.Shape) != 2 || w.Shape[0] != x.Shape[2] {
		return ContribAttention{}, fmt.Errorf("input %v and weights %v, want one float type, [B, S, H] and [H, 3H']", x, w)
	}
	heads := at.Int("num_heads", 0)
	if heads <= 0 {
		return ContribAttention{}, fmt.Errorf("num_heads must be positive")
	}
	g := ContribAttention{B: x.Shape[0], S: x.Shape[1], Hin: x.Shape[2], Heads: heads, Total: w.Shape[1]}
	g.HQ, g.HK, g.HV = g.Total/3, g.Total/3, g.Total/3
	if sz := at.Ints("qkv_hidden_sizes"); sz != nil {
		if len(sz) != 3 {
			return ContribAttention{}, fmt.Errorf("qkv_hidden_sizes %v", sz)
		}
		g.HQ, g.HK, g.HV = sz[0], sz[1], sz[2]
	}
	if g.HQ+g.HK+g.HV != g.Total || g.HQ != g.HK || g.HQ%heads != 0 || g.HV%heads != 0 {
		return ContribAttention{}, fmt.Errorf("hidden sizes %d/%d/%d do not fit weights %v and %d heads", g.HQ, g.HK, g.HV, w.Shape, heads)
	}
	g.D, g.Dv = g.HQ/heads, g.HV/heads
	if b, ok := n.Input(2); ok {
		if c, err := NumElements(b.Shape); err != nil || b.DType != dt || c != g.Total {
			return ContribAttention{}, fmt.Errorf("bias %v, want %v[%d]", b, dt, g.Total)
		}
		g.Bias = true
	}
	if m, ok := n.Input(3); ok && m.DType != graph.Int32 {
		return ContribAttention{}, fmt.Errorf("mask_index is %v, want int32", m.DType)
	}
	if p, ok := n.Input(4); ok {
		if len(p.Shape) != 5 {
			return ContribAttention{}, fmt.Errorf("past has %d dims, want 5", len(p.Shape))
		}
		g.P, g.Past = p.Shape[3], true
		want := []int64{2, g.B, heads, g.P, g.D}
		if p.DType != dt || !slices.Equal(p.Shape, want) || g.HV != g.HQ {
			return ContribAttention{}, fmt.Errorf("past %v, want %v%v (and equal Q/K/V sizes)", p, dt, want)
		}
	}
	g.T = g.S + g.P
	if err := CheckOutput(n, 0, dt, []int64{g.B, g.S, g.HV}); err != nil {
		return ContribAttention{}, err
	}
	if _, ok := n.Output(1); ok {
		if g.HV != g.HQ {
			return ContribAttention{}, fmt.Errorf("present needs equal Q/K/V hidden sizes")
		}
		if err := CheckOutput(n, 1, dt, []int64{2, g.B, heads, g.T, g.D}); err != nil {
			return ContribAttention{}, err
		}
		g.Present = true
	}
	return g, nil
}
