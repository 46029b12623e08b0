package graph

import "fmt"

// AttentionBand is which keys an ONNX Attention node's query sees by position, besides its
// attn_mask: query i, after P past keys, sees key j when P+i-Left <= j (if Left >= 0) and
// j <= P+i+Right (if Right >= 0); -1 leaves that side unbounded. is_causal is Right == 0;
// a sliding window of W keys (the query's own included) is Left == W-1.
type AttentionBand struct{ Left, Right int64 }

// Unbounded reports whether the band lets every query see every key.
func (b AttentionBand) Unbounded() bool { return b.Left < 0 && b.Right < 0 }

// Sees reports whether query i (after p past keys) sees key j.
func (b AttentionBand) Sees(p, i, j int64) bool {
	return (b.Left < 0 || j >= p+i-b.Left) && (b.Right < 0 || j <= p+i+b.Right)
}

// AttrWindowLeft and AttrWindowRight are carve's extension of ONNX Attention (opset 23): they
// bound the keys a query sees on each side of its diagonal (AttentionBand). carve's rewrite
// writes them for the sliding-window masks it recognises, so that no [batch, 1, seq, seq]
// mask is left; an ONNX file may carry them too.
const (
	AttrWindowLeft  = "window_left"
	AttrWindowRight = "window_right"
)

// ReadAttentionBand reads an ONNX Attention node's band for every backend: is_causal and the
// window attributes, each -1 or absent for no bound. is_causal already bounds the right side,
// so window_right beside it is refused.
func ReadAttentionBand(at Attributes) (AttentionBand, error) {
	b := AttentionBand{Left: at.Int(AttrWindowLeft, -1), Right: at.Int(AttrWindowRight, -1)}
	for _, x := range []struct {
		name string
		v    int64
	}{{AttrWindowLeft, b.Left}, {AttrWindowRight, b.Right}} {
		if x.v < -1 {
			return AttentionBand{}, fmt.Errorf("%s %d: want a number of keys >= 0, or -1 for no bound", x.name, x.v)
		}
	}
	switch c := at.Int("is_causal", 0); {
	case c != 0 && c != 1:
		return AttentionBand{}, fmt.Errorf("is_causal %d: want 0 or 1", c)
	case c == 1 && b.Right >= 0:
		return AttentionBand{}, fmt.Errorf("is_causal with %s %d: is_causal already sees no key after the query's own", AttrWindowRight, b.Right)
	case c == 1:
		b.Right = 0
	}
	return b, nil
}

// Carve's relative-position bias of ONNX Attention (opset 23): inputs past opset 24's
// nonpad_kv_seqlen (input 6), a table of terms with the index that picks one per score:
//
//	7   rel_c2p        [B or 1, Hq or 1, S, Rc], Q's type: a row of terms per query
//	8   rel_c2p_index  int32 [S + T - 1]
//	9   rel_p2c        [B or 1, Hq or 1, T, Rp], Q's type: a row of terms per key
//	10  rel_p2c_index  int32 [S + T - 1]
//
// The score of query i (of S) for key j (of T) gets, after the scale and the soft cap and with
// the attn_mask,
//
//	rel_c2p[b, h, i, rel_c2p_index[i - j + T - 1]] + rel_p2c[b, h, j, rel_p2c_index[i - j + T - 1]]
//
// each table's term where it is given; an index below 0 counts from the end of the row, as
// GatherElements's do, and one outside [-R, R) is an error. This is DeBERTa's disentangled
// attention: its content-to-position and position-to-content terms gather Q·posK^T
// [.., S, 2k] and K·posQ^T [.., T, 2k] by a relative position that depends on i - j only, so
// one index entry serves a whole diagonal. The kernels add the terms to each tile of scores:
// no [S, T] tensor is made. A table comes with its index, and a node with one has no past
// (past_key and past_value absent). carve's rewrite writes them for the gathers it recognises.
const (
	AttnRelC2P      = 7
	AttnRelC2PIndex = 8
	AttnRelP2C      = 9
	AttnRelP2CIndex = 10
)
