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

// ContribDims reads a com.microsoft.Attention node's geometry for every backend from num_heads,
// qkv_hidden_sizes and the input, weights and past dims (past nil when absent), at concrete
// shapes or at one end of their ranges: a 3-D input and 2-D weights, positive num_heads,
// qkv_hidden_sizes (three, equal for Q and K, each a multiple of the heads; Total/3 each when
// absent) summing to the weights' width, and a 5-D past.
func ContribDims(at graph.Attributes, x, w, past []int64) (ContribAttention, error) {
	if len(x) != 3 || len(w) != 2 {
		return ContribAttention{}, fmt.Errorf("input %d-D and weights %d-D, want 3-D and 2-D", len(x), len(w))
	}
	heads := at.Int("num_heads", 0)
	if heads <= 0 {
		return ContribAttention{}, fmt.Errorf("num_heads must be positive")
	}
	g := ContribAttention{B: x[0], S: x[1], Hin: x[2], Heads: heads, Total: w[1]}
	g.HQ, g.HK, g.HV = g.Total/3, g.Total/3, g.Total/3
	if sz := at.Ints("qkv_hidden_sizes"); sz != nil {
		if len(sz) != 3 {
			return ContribAttention{}, fmt.Errorf("qkv_hidden_sizes %v", sz)
		}
		g.HQ, g.HK, g.HV = sz[0], sz[1], sz[2]
	}
	if g.HQ+g.HK+g.HV != g.Total || g.HQ != g.HK || g.HQ%heads != 0 || g.HV%heads != 0 {
		return ContribAttention{}, fmt.Errorf("hidden sizes %d/%d/%d do not fit weights %v and %d heads", g.HQ, g.HK, g.HV, w, heads)
	}
	g.D, g.Dv = g.HQ/heads, g.HV/heads
	if past != nil {
		if len(past) != 5 {
			return ContribAttention{}, fmt.Errorf("past has %d dims, want 5", len(past))
		}
		g.P, g.Past = past[3], true
	}
	g.T = g.S + g.P
	return g, nil
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
	var pastShape []int64
	if p, ok := n.Input(4); ok {
		pastShape = p.Shape
	}
	g, err := ContribDims(at, x.Shape, w.Shape, pastShape)
	if err != nil {
		return ContribAttention{}, err
	}
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
		want := []int64{2, g.B, g.Heads, g.P, g.D}
		if p.DType != dt || !slices.Equal(p.Shape, want) || g.HV != g.HQ {
			return ContribAttention{}, fmt.Errorf("past %v, want %v%v (and equal Q/K/V sizes)", p, dt, want)
		}
	}
	if err := CheckOutput(n, 0, dt, []int64{g.B, g.S, g.HV}); err != nil {
		return ContribAttention{}, err
	}
	if _, ok := n.Output(1); ok {
		if g.HV != g.HQ {
			return ContribAttention{}, fmt.Errorf("present needs equal Q/K/V hidden sizes")
		}
		if err := CheckOutput(n, 1, dt, []int64{2, g.B, g.Heads, g.T, g.D}); err != nil {
			return ContribAttention{}, err
		}
		g.Present = true
	}
	return g, nil
}

// MHALayout is how a com.microsoft.MultiHeadAttention node passes its queries, keys and values.
type MHALayout uint8

const (
	MHASeparate  MHALayout = iota // Q [B, S, Hq], K [B, L, Hk], V [B, L, Hv]
	MHAPackedQKV                  // Q [B, S, N, 3, D]
	MHAPackedKV                   // K [B, L, N, 2, D]
	MHABNSH                       // K [B, N, L, D], V [B, N, L, Dv]
)

// MHAGeom is a MultiHeadAttention node's geometry: B batches of S queries in Heads heads of D
// (queries and keys) and Dv (values), attending over T = P + L keys (L new ones, P past ones).
type MHAGeom struct {
	Layout                   MHALayout
	B, S, Heads, D, Dv, L, P int64
	T                        int64
}

// MHADims reads a MultiHeadAttention node's geometry for every backend from num_heads and the
// query, key, value and past_key dims (nil when absent), at concrete shapes or at one end of
// their ranges: the layout the ranks give (a 5-D packed QKV, a 5-D packed KV, BNSH keys and
// values, or separate 3-D ones), each checked against the query and the heads, and a 4-D
// past_key (not with BNSH keys, which are the whole history).
func MHADims(at graph.Attributes, q, k, v, pk []int64) (MHAGeom, error) {
	heads := at.Int("num_heads", 0)
	if heads <= 0 {
		return MHAGeom{}, fmt.Errorf("num_heads must be positive")
	}
	g := MHAGeom{Heads: heads}
	switch {
	case len(q) == 5 && k == nil:
		if q[2] != heads || q[3] != 3 {
			return MHAGeom{}, fmt.Errorf("packed QKV %v, want [B, S, %d, 3, D]", q, heads)
		}
		g.Layout, g.B, g.S, g.D, g.Dv, g.L = MHAPackedQKV, q[0], q[1], q[4], q[4], q[1]
	case len(q) != 3:
		return MHAGeom{}, fmt.Errorf("query has %d dims, want 3 (or 5 when packed)", len(q))
	case len(k) == 5 && v == nil:
		if k[0] != q[0] || k[2] != heads || k[3] != 2 || q[2] != heads*k[4] {
			return MHAGeom{}, fmt.Errorf("packed KV %v for query %v", k, q)
		}
		g.Layout, g.B, g.S, g.D, g.Dv, g.L = MHAPackedKV, q[0], q[1], k[4], k[4], k[1]
	case len(k) == 4 && len(v) == 4:
		if k[0] != q[0] || k[1] != heads || v[1] != heads || k[2] != v[2] || q[2] != heads*k[3] {
			return MHAGeom{}, fmt.Errorf("BNSH key %v and value %v for query %v", k, v, q)
		}
		g.Layout, g.B, g.S, g.D, g.Dv, g.L = MHABNSH, q[0], q[1], k[3], v[3], k[2]
	case len(k) == 3 && len(v) == 3:
		if k[0] != q[0] || v[0] != q[0] || k[1] != v[1] || q[2] != k[2] || q[2]%heads != 0 || v[2]%heads != 0 {
			return MHAGeom{}, fmt.Errorf("query %v, key %v, value %v", q, k, v)
		}
		g.Layout, g.B, g.S, g.D, g.Dv, g.L = MHASeparate, q[0], q[1], q[2]/heads, v[2]/heads, k[1]
	default:
		return MHAGeom{}, fmt.Errorf("unsupported query/key/value layout")
	}
	if pk != nil {
		if len(pk) != 4 {
			return MHAGeom{}, fmt.Errorf("past_key has %d dims, want 4", len(pk))
		}
		if g.Layout == MHABNSH {
			return MHAGeom{}, fmt.Errorf("past_key with a BNSH key is not supported")
		}
		g.P = pk[2]
	}
	g.T = g.P + g.L
	return g, nil
}

// MHANode is a MultiHeadAttention node as CheckMHA reads it.
type MHANode struct {
	MHAGeom
	// Bias, Past, PresentK and PresentV report the bias input, past_key and past_value, and the
	// present_key and present_value outputs.
	Bias, Past, PresentK, PresentV bool
}

// CheckMHA checks com.microsoft.MultiHeadAttention for every backend: the arity; no
// past_sequence_length, cache_indirection or qk output; a float32, float16 or bfloat16 query
// and every input but key_padding_mask of its type; the geometry (MHADims); a bias only for
// separate 3-D Q, K and V, of their total width; key_padding_mask int32; past_key [B, N, P, D]
// and past_value [B, N, P, Dv] together; and the output [B, S, N*Dv] and present_key and
// present_value [B, N, T, D or Dv]. The mask's and attention_bias's shapes are the backends' to
// check. It returns the node's geometry.
func CheckMHA(n *Node) (MHANode, error) {
	if err := CheckArity(n, 1, 8, 1, 3); err != nil {
		return MHANode{}, err
	}
	for _, i := range []int{8, 9} {
		if _, ok := n.Input(i); ok {
			return MHANode{}, fmt.Errorf("input %d (past_sequence_length / cache_indirection) is not supported", i)
		}
	}
	if _, ok := n.Output(3); ok {
		return MHANode{}, fmt.Errorf("the qk output is not supported")
	}
	q := n.Inputs[0]
	dt := q.DType
	if !isFloatKernelType(dt) {
		return MHANode{}, fmt.Errorf("the query is %v, want float32, float16 or bfloat16", dt)
	}
	for i, v := range n.Inputs {
		if v.Present() && i != 4 && v.DType != dt {
			return MHANode{}, fmt.Errorf("input %d is %v, want %v", i, v.DType, dt)
		}
	}
	dims := func(i int) []int64 {
		if v, ok := n.Input(i); ok {
			return v.Shape
		}
		return nil
	}
	geom, err := MHADims(n.Attrs, q.Shape, dims(1), dims(2), dims(6))
	if err != nil {
		return MHANode{}, err
	}
	g := MHANode{MHAGeom: geom}
	N, D, Dv := g.Heads, g.D, g.Dv
	hq, hv := N*D, N*Dv
	if b, ok := n.Input(3); ok {
		if c, err := NumElements(b.Shape); err != nil || g.Layout != MHASeparate || c != hq+hq+hv {
			return MHANode{}, fmt.Errorf("bias %v is only supported for separate 3-D Q, K, V of total width %d", b, hq+hq+hv)
		}
		g.Bias = true
	}
	if mk, ok := n.Input(4); ok && mk.DType != graph.Int32 {
		return MHANode{}, fmt.Errorf("key_padding_mask is %v, want int32", mk.DType)
	}
	pk, okPK := n.Input(6)
	pv, okPV := n.Input(7)
	if okPK != okPV {
		return MHANode{}, fmt.Errorf("past_key and past_value go together")
	}
	if okPK {
		if !slices.Equal(pk.Shape, []int64{g.B, N, g.P, D}) || !slices.Equal(pv.Shape, []int64{g.B, N, g.P, Dv}) {
			return MHANode{}, fmt.Errorf("past_key %v and past_value %v, want [%d %d P %d] and [%d %d P %d]", pk.Shape, pv.Shape, g.B, N, D, g.B, N, Dv)
		}
		g.Past = true
	}
	if err := CheckOutput(n, 0, dt, []int64{g.B, g.S, hv}); err != nil {
		return MHANode{}, err
	}
	if _, ok := n.Output(1); ok {
		if err := CheckOutput(n, 1, dt, []int64{g.B, N, g.T, D}); err != nil {
			return MHANode{}, err
		}
		g.PresentK = true
	}
	if _, ok := n.Output(2); ok {
		if err := CheckOutput(n, 2, dt, []int64{g.B, N, g.T, Dv}); err != nil {
			return MHANode{}, err
		}
		g.PresentV = true
	}
	return g, nil
}

// GQAGeom is a GroupQueryAttention node's geometry: B batches of S queries in Heads heads and
// keys and values in KVHeads, all of head size D, attending over T keys (the present outputs'
// length, else the past's plus S); Packed reports keys and values packed after the queries in
// the query input.
type GQAGeom struct {
	B, S, Heads, KVHeads, D, T int64
	Packed                     bool
}

// GQADims reads a GroupQueryAttention node's geometry for every backend from num_heads,
// kv_num_heads (positive, dividing num_heads) and the query, key, past_key and present_key
// dims (nil when absent), at concrete shapes or at one end of their ranges; the query is 3-D.
func GQADims(at graph.Attributes, q, key, past, present []int64) (GQAGeom, error) {
	heads, kv := at.Int("num_heads", 0), at.Int("kv_num_heads", 0)
	if heads <= 0 || kv <= 0 || heads%kv != 0 {
		return GQAGeom{}, fmt.Errorf("num_heads %d and kv_num_heads %d: want positive, num_heads a multiple of kv_num_heads", heads, kv)
	}
	if len(q) != 3 {
		return GQAGeom{}, fmt.Errorf("query has %d dims, want 3", len(q))
	}
	g := GQAGeom{B: q[0], S: q[1], Heads: heads, KVHeads: kv, Packed: key == nil}
	g.D = q[2] / g.den()
	switch {
	case len(present) == 4:
		g.T = present[2]
	default:
		g.T = g.S
		if len(past) == 4 {
			g.T += past[2]
		}
	}
	return g, nil
}

// den is the head count the query's last dim holds: the query heads, and the key and value
// heads when packed.
func (g GQAGeom) den() int64 {
	if g.Packed {
		return g.Heads + 2*g.KVHeads
	}
	return g.Heads
}

// GQANode is a GroupQueryAttention node as CheckGQA reads it.
type GQANode struct {
	GQAGeom
	// P is the past's length; Past and Present report past_key and past_value, and
	// present_key and present_value.
	P             int64
	Past, Present bool
	// Causal is the causal attribute, Window local_window_size (-1 none) and Softcap softcap.
	Causal  bool
	Window  int64
	Softcap float32
	// Rotary is do_rotary: Rot is the rotary dim, MaxPos the caches' positions, Interleaved
	// rotary_interleaved, PosIDs the position_ids input.
	Rotary, Interleaved, PosIDs bool
	Rot, MaxPos                 int64
}

// CheckGQA checks com.microsoft.GroupQueryAttention for every backend: what it refuses or
// requires before looking at shapes (the arity, seqlens_k and total_sequence_length present,
// and none of smooth_softmax, qk_output, sliding_window_cache, quantized keys or values, inputs
// past position_ids' and attention_bias' or the output_qk output); a float32, float16 or
// bfloat16 query; key and value, past_key and past_value, present_key and present_value each
// together; the geometry (GQADims) with a query of whole heads; key and value [B, S,
// KVHeads*D] and past_key and past_value [B, KVHeads, P, D] of the query's type; int32
// seqlens_k [B] and total_sequence_length of one element; local_window_size only with causal;
// with do_rotary, cos and sin caches of the query's type [max_position, rotary_dim/2] with
// 0 < rotary_dim <= D and position_ids int64 [B, S]; and the output [B, S, Heads*D] and the
// presents [B, KVHeads, T, D], no shorter than the past. attention_bias's shape is the
// backends' to check. It returns the node's geometry and attributes.
func CheckGQA(n *Node) (GQANode, error) {
	if err := gqaRefused(n); err != nil {
		return GQANode{}, err
	}
	at := n.Attrs
	q := n.Inputs[0]
	dt := q.DType
	if !isFloatKernelType(dt) {
		return GQANode{}, fmt.Errorf("the query is %v, want float32, float16 or bfloat16", dt)
	}
	key, okK := n.Input(1)
	_, okV := n.Input(2)
	if okK != okV {
		return GQANode{}, fmt.Errorf("key and value go together")
	}
	var keyShape, pastShape, presentShape []int64
	if okK {
		keyShape = key.Shape
	}
	pk, okPK := n.Input(3)
	pv, okPV := n.Input(4)
	if okPK != okPV {
		return GQANode{}, fmt.Errorf("past_key and past_value go together")
	}
	if okPK {
		pastShape = pk.Shape
	}
	_, okOK := n.Output(1)
	_, okOV := n.Output(2)
	if okOK != okOV {
		return GQANode{}, fmt.Errorf("present_key and present_value go together")
	}
	if okOK {
		presentShape = n.Outputs[1].Shape
	}
	geom, err := GQADims(at, q.Shape, keyShape, pastShape, presentShape)
	if err != nil {
		return GQANode{}, err
	}
	g := GQANode{GQAGeom: geom, Past: okPK, Present: okOK}
	if den := g.den(); q.Shape[2]%den != 0 || g.D == 0 {
		return GQANode{}, fmt.Errorf("query %v, want [B, S, %d*head_size]", q, den)
	}
	kvW := g.KVHeads * g.D
	if !g.Packed {
		for i := 1; i <= 2; i++ {
			if v := n.Inputs[i]; v.DType != dt || !slices.Equal(v.Shape, []int64{g.B, g.S, kvW}) {
				return GQANode{}, fmt.Errorf("input %d is %v, want %v[%d %d %d]", i, v, dt, g.B, g.S, kvW)
			}
		}
	}
	if okPK {
		if pk.DType != dt || len(pk.Shape) != 4 || pk.Shape[0] != g.B || pk.Shape[1] != g.KVHeads || pk.Shape[3] != g.D || !slices.Equal(pk.Shape, pv.Shape) {
			return GQANode{}, fmt.Errorf("past_key %v and past_value %v, want %v[%d %d P %d]", pk, pv, dt, g.B, g.KVHeads, g.D)
		}
		g.P = pk.Shape[2]
	}
	for i := 5; i <= 6; i++ {
		if v := n.Inputs[i]; v.DType != graph.Int32 {
			return GQANode{}, fmt.Errorf("input %d is %v, want int32", i, v.DType)
		}
	}
	sl, err1 := NumElements(n.Inputs[5].Shape)
	tl, err2 := NumElements(n.Inputs[6].Shape)
	if err1 != nil || err2 != nil || sl != g.B || tl != 1 {
		return GQANode{}, fmt.Errorf("seqlens_k %v and total_sequence_length %v, want [%d] and a scalar", n.Inputs[5].Shape, n.Inputs[6].Shape, g.B)
	}
	g.Causal, g.Window, g.Softcap = at.Int("causal", 1) != 0, at.Int("local_window_size", -1), at.Float("softcap", 0)
	if g.Window > 0 && !g.Causal {
		return GQANode{}, fmt.Errorf("local_window_size needs causal attention")
	}
	if at.Int("do_rotary", 0) != 0 {
		g.Rotary, g.Interleaved = true, at.Int("rotary_interleaved", 0) != 0
		cs, okC := n.Input(7)
		sn, okS := n.Input(8)
		if !okC || !okS || cs.DType != dt || sn.DType != dt || len(cs.Shape) != 2 || !slices.Equal(cs.Shape, sn.Shape) {
			return GQANode{}, fmt.Errorf("do_rotary needs %v cos_cache and sin_cache [max_position, rotary_dim/2]", dt)
		}
		g.Rot, g.MaxPos = cs.Shape[1]*2, cs.Shape[0]
		if g.Rot > g.D || g.Rot == 0 {
			return GQANode{}, fmt.Errorf("rotary dim %d for head size %d", g.Rot, g.D)
		}
		if p, ok := n.Input(9); ok {
			if p.DType != graph.Int64 || !slices.Equal(p.Shape, []int64{g.B, g.S}) {
				return GQANode{}, fmt.Errorf("position_ids %v, want int64[%d %d]", p, g.B, g.S)
			}
			g.PosIDs = true
		}
	}
	if err := CheckOutput(n, 0, dt, []int64{g.B, g.S, g.Heads * g.D}); err != nil {
		return GQANode{}, err
	}
	if okOK {
		want := []int64{g.B, g.KVHeads, g.T, g.D}
		for i := 1; i <= 2; i++ {
			if err := CheckOutput(n, i, dt, want); err != nil {
				return GQANode{}, err
			}
		}
		if g.T < g.P {
			return GQANode{}, fmt.Errorf("present length %d is shorter than past length %d", g.T, g.P)
		}
	}
	return g, nil
}

// KeyMask is the format of a contrib attention op's key mask (Attention's mask_index,
// MultiHeadAttention's key_padding_mask), onnxruntime's.
type KeyMask uint8

const (
	KeyMaskNone     KeyMask = iota
	KeyMaskLengths          // [B]: key lengths
	KeyMaskStartEnd         // [2B]: key ends, then key starts
	KeyMaskRaw2             // [B, T']: 0 masks a key
	KeyMaskRaw3             // [B, S, T']: 0 masks a key for one query
)

// CheckKeyMask checks a key mask's shape for every backend, for B batches of S queries over T
// keys, and returns its format and, for the raw formats, its last dim T' (at most T).
func CheckKeyMask(v Value, b, s, t int64) (KeyMask, int64, error) {
	switch sh := v.Shape; {
	case len(sh) == 1 && sh[0] == b:
		return KeyMaskLengths, 0, nil
	case len(sh) == 1 && sh[0] == 2*b:
		return KeyMaskStartEnd, 0, nil
	case len(sh) == 2 && sh[0] == b && sh[1] <= t:
		return KeyMaskRaw2, sh[1], nil
	case len(sh) == 3 && sh[0] == b && sh[1] == s && sh[2] <= t:
		return KeyMaskRaw3, sh[2], nil
	}
	return KeyMaskNone, 0, fmt.Errorf("mask shape %v is not supported (want [B], [2B], [B, T] or [B, S, T])", v.Shape)
}

// AttentionBias is a contrib attention op's attention_bias [B or 1, N or 1, S, T'] as
// CheckAttentionBias reads it: T' and its element strides per batch and per head (0 where it
// broadcasts).
type AttentionBias struct{ T, SB, SH int64 }

// CheckAttentionBias checks a contrib attention op's attention_bias for every backend, for B
// batches of S queries in N heads over T keys: [B or 1, N or 1, S, T' <= T] of type dt.
func CheckAttentionBias(v Value, dt graph.DType, b, n, s, t int64) (AttentionBias, error) {
	sh := v.Shape
	if len(sh) != 4 || (sh[0] != 1 && sh[0] != b) || (sh[1] != 1 && sh[1] != n) || sh[2] != s || sh[3] > t {
		return AttentionBias{}, fmt.Errorf("attention_bias shape %v, want [%d or 1, %d or 1, %d, <= %d]", sh, b, n, s, t)
	}
	if v.DType != dt {
		return AttentionBias{}, fmt.Errorf("attention_bias is %v, want %v", v.DType, dt)
	}
	a := AttentionBias{T: sh[3]}
	if sh[0] != 1 {
		a.SB = sh[1] * sh[2] * sh[3]
	}
	if sh[1] != 1 {
		a.SH = sh[2] * sh[3]
	}
	return a, nil
}

// AttnView is how an ONNX Attention kernel reads Q, K or V or writes Y: rows of the head size's
// contiguous elements, the row of (batch b, head h, position i) at element
// Off + b*SB + h*SH + i*SS of its tensor.
type AttnView struct{ Off, SB, SH, SS int64 }

// At is the element offset of the row of (batch b, head h, position i).
func (v AttnView) At(b, h, i int64) int64 { return v.Off + b*v.SB + h*v.SH + i*v.SS }

// ONNXAttentionGeom is an ONNX Attention node's geometry (ai.onnx, opset 23): B batches of S
// queries in Hq heads of D, attending over L new keys in Hkv heads of D (values Dv), and the
// views of Q, K, V and Y (AttnView). ThreeD is ONNX's 3-D form ([B, S, H*D], q_num_heads and
// kv_num_heads); Layouts are carve's (graph.AttentionLayouts, custom when any is given).
type ONNXAttentionGeom struct {
	B, Hq, Hkv, S, L, D, Dv int64
	ThreeD, Custom          bool
	Layouts                 [4]graph.AttentionLayout
	Q, K, V, Y              AttnView
}

// YShape is the shape of Y.
func (g ONNXAttentionGeom) YShape() []int64 {
	switch {
	case g.ThreeD:
		return []int64{g.B, g.S, g.Hq * g.Dv}
	case g.Custom:
		l, y := g.Layouts[3], make([]int64, 4)
		y[l.B], y[l.H], y[l.S], y[l.D] = g.B, g.Hq, g.S, g.Dv
		return y
	}
	return []int64{g.B, g.Hq, g.S, g.Dv}
}

// ONNXAttentionDims reads an ONNX Attention node's geometry for every backend from its
// attributes and the dims of Q, K and V (concrete, or one end of their ranges): all 4-D
// [B, H, S|L, D|Dv], all 3-D [B, S|L, H*(D|Dv)] with positive q_num_heads and kv_num_heads, or
// each in its layout (graph.AttentionLayouts: of its rank, an axis read at one index longer
// than the index); one batch, K's head size Q's, V's heads and length K's, and Q's heads a
// multiple of K's. The views follow from the shapes (Y's from the geometry and its layout).
// The past and the present outputs are the backends' to check.
func ONNXAttentionDims(at graph.Attributes, q, k, v []int64) (ONNXAttentionGeom, error) {
	var g ONNXAttentionGeom
	ls, custom, err := graph.AttentionLayouts(at)
	if err != nil {
		return g, err
	}
	g.Layouts, g.Custom = ls, custom
	shapes := [3][]int64{q, k, v}
	switch {
	case custom:
		var dims [3][4]int64
		for i, sh := range shapes {
			l := ls[i]
			if len(sh) != l.Rank() {
				return g, fmt.Errorf("%s %v does not have the rank of its layout %q", "QKV"[i:i+1], sh, l)
			}
			for a, f := range l.Fixed {
				if f >= sh[a] {
					return g, fmt.Errorf("%s %v: its layout %q reads axis %d at %d", "QKV"[i:i+1], sh, l, a, f)
				}
			}
			dims[i] = [4]int64{sh[l.B], sh[l.H], sh[l.S], sh[l.D]}
		}
		g.B, g.Hq, g.S, g.D = dims[0][0], dims[0][1], dims[0][2], dims[0][3]
		g.Hkv, g.L, g.Dv = dims[1][1], dims[1][2], dims[2][3]
		if dims[1][0] != g.B || dims[2][0] != g.B || dims[1][3] != g.D || dims[2][1] != g.Hkv || dims[2][2] != g.L {
			return g, fmt.Errorf("Q %v, K %v and V %v in layouts %q, %q and %q: want one batch, K's head size Q's, V's heads and length K's", q, k, v, ls[0], ls[1], ls[2])
		}
	case len(q) == 4 && len(k) == 4 && len(v) == 4:
		g.B, g.Hq, g.S, g.D, g.Hkv, g.L, g.Dv = q[0], q[1], q[2], q[3], k[1], k[2], v[3]
		if k[0] != g.B || k[3] != g.D || v[0] != g.B || v[1] != g.Hkv || v[2] != g.L {
			return g, fmt.Errorf("Q %v, K %v, V %v: want [B, Hq, S, D], [B, Hkv, L, D], [B, Hkv, L, Dv]", q, k, v)
		}
	case len(q) == 3 && len(k) == 3 && len(v) == 3:
		g.ThreeD = true
		g.Hq, g.Hkv = at.Int("q_num_heads", 0), at.Int("kv_num_heads", 0)
		if g.Hq <= 0 || g.Hkv <= 0 {
			return g, fmt.Errorf("3-D inputs need positive q_num_heads and kv_num_heads, have %d and %d", g.Hq, g.Hkv)
		}
		g.B, g.S, g.D, g.L, g.Dv = q[0], q[1], q[2]/g.Hq, k[1], v[2]/g.Hkv
		if q[2] != g.Hq*g.D || k[0] != g.B || v[0] != g.B || k[2] != g.Hkv*g.D || v[1] != g.L || v[2] != g.Hkv*g.Dv {
			return g, fmt.Errorf("Q %v, K %v, V %v do not fit %d and %d heads", q, k, v, g.Hq, g.Hkv)
		}
	default:
		return g, fmt.Errorf("Q, K and V have %d, %d and %d dims, want all 4 or all 3", len(q), len(k), len(v))
	}
	if g.Hkv <= 0 || g.Hq%g.Hkv != 0 {
		return g, fmt.Errorf("%d query heads are not a multiple of %d kv heads", g.Hq, g.Hkv)
	}
	for i, dst := range []*AttnView{&g.Q, &g.K, &g.V} {
		*dst = g.view(i, shapes[i])
	}
	g.Y = g.view(3, g.YShape())
	return g, nil
}

// view is the view of tensor i (Q, K, V, Y) of the given shape.
func (g ONNXAttentionGeom) view(i int, shape []int64) AttnView {
	st := make([]int64, len(shape))
	acc := int64(1)
	for a := len(shape) - 1; a >= 0; a-- {
		st[a] = acc
		acc *= shape[a]
	}
	switch {
	case g.ThreeD: // [B, S, H*W]: a head is W columns of a row
		return AttnView{SB: st[0], SH: shape[2] / []int64{g.Hq, g.Hkv, g.Hkv, g.Hq}[i], SS: st[1]}
	case !g.Custom:
		return AttnView{SB: st[0], SH: st[1], SS: st[2]}
	}
	l := g.Layouts[i]
	v := AttnView{SB: st[l.B], SH: st[l.H], SS: st[l.S]}
	for a, f := range l.Fixed {
		if f > 0 {
			v.Off += f * st[a]
		}
	}
	return v
}
