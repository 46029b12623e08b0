package cpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// attn23Case is one ai.onnx Attention test: geometry, options and the data, 4-D.
type attn23Case struct {
	b, hq, hkv, s, l, p, d, dv int
	causal                     bool
	left, right                int // window_left, window_right; 0 leaves the attribute out, else it is the value + 1 (so -1 stays unbounded)
	scale, softcap             float32
	mask                       string // "", "bool", "float"
	maskShape                  []int64
	threeD                     bool
	present                    bool
	// rel is carve's relative bias: "c2p", "p2c" or "both" tables of relR terms a row, over
	// one batch (relOne) or every one.
	rel    string
	relR   int
	relOne bool
	// lay gives carve's layouts of Q, K, V and Y (graph.AttrQLayout ...), "" for ONNX's; an
	// axis of a digit has 3 entries; packed puts Q, K and V in one tensor.
	lay    [4]string
	packed bool
}

// layShape is the shape of a tensor of dims (batch, heads, seq, width) in layout l.
func layShape(l string, dims [4]int) []int64 {
	var shape []int64
	for _, c := range l {
		switch c {
		case 'b', 'h', 's', 'd':
			shape = append(shape, int64(dims[strings.IndexRune("bhsd", c)]))
		default:
			shape = append(shape, 3)
		}
	}
	return shape
}

// layCopy copies x [B, H, S, W] (dims) to or from (back) dst of shape in layout l.
func layCopy(dst []float64, l string, dims [4]int, x []float64, back bool) {
	shape := layShape(l, dims)
	st := make([]int, len(shape))
	acc := 1
	for a := len(shape) - 1; a >= 0; a-- {
		st[a], acc = acc, acc*int(shape[a])
	}
	var base, sv [4]int
	for a, c := range l {
		if i := strings.IndexRune("bhsd", c); i >= 0 {
			sv[i] = st[a]
		} else {
			base[0] += int(c-'0') * st[a]
		}
	}
	for b := 0; b < dims[0]; b++ {
		for h := 0; h < dims[1]; h++ {
			for i := 0; i < dims[2]; i++ {
				for e := 0; e < dims[3]; e++ {
					o := base[0] + b*sv[0] + h*sv[1] + i*sv[2] + e*sv[3]
					src := ((b*dims[1]+h)*dims[2]+i)*dims[3] + e
					if back {
						x[src] = dst[o]
					} else {
						dst[o] = x[src]
					}
				}
			}
		}
	}
}

// attn23Ref is ONNX's reference computation in float64 (keys are the past then the new ones),
// with a zero row where every key is masked out.
func attn23Ref(c attn23Case, q, k, v []float64, mask func(b, h, i, j int) (keep bool, add float64)) []float64 {
	t := c.p + c.l
	scale := float64(c.scale)
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(c.d))
	}
	y := make([]float64, c.b*c.hq*c.s*c.dv)
	sc := make([]float64, t)
	for b := 0; b < c.b; b++ {
		for h := 0; h < c.hq; h++ {
			kh := h / (c.hq / c.hkv)
			for i := 0; i < c.s; i++ {
				mx := math.Inf(-1)
				for j := 0; j < t; j++ {
					var x float64
					for e := 0; e < c.d; e++ {
						x += q[((b*c.hq+h)*c.s+i)*c.d+e] * k[((b*c.hkv+kh)*t+j)*c.d+e]
					}
					x *= scale
					if c.softcap > 0 {
						x = float64(c.softcap) * math.Tanh(x/float64(c.softcap))
					}
					keep, add := mask(b, h, i, j)
					band := graph.AttentionBand{Left: int64(c.left - 1), Right: int64(c.right - 1)}
					if c.causal {
						band.Right = 0
					}
					if !keep || !band.Sees(int64(c.p), int64(i), int64(j)) {
						x = math.Inf(-1)
					}
					sc[j] = x + add
					mx = math.Max(mx, sc[j])
				}
				if math.IsInf(mx, -1) {
					continue
				}
				var sum float64
				for j := range sc {
					sc[j] = math.Exp(sc[j] - mx)
					sum += sc[j]
				}
				for j := range sc {
					for e := 0; e < c.dv; e++ {
						y[((b*c.hq+h)*c.s+i)*c.dv+e] += sc[j] / sum * v[((b*c.hkv+kh)*t+j)*c.dv+e]
					}
				}
			}
		}
	}
	return y
}

func randF64(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return x
}

// bnshToBSH transposes [B, H, S, D] to [B, S, H*D].
func bnshToBSH(x []float64, b, h, s, d int) []float64 {
	out := make([]float64, len(x))
	for bi := 0; bi < b; bi++ {
		for hi := 0; hi < h; hi++ {
			for si := 0; si < s; si++ {
				copy(out[((bi*s+si)*h+hi)*d:][:d], x[((bi*h+hi)*s+si)*d:][:d])
			}
		}
	}
	return out
}

// splitPast cuts [B, H, P+L, D] into the past [B, H, P, D] and the new [B, H, L, D].
func splitPast(x []float64, b, h, p, l, d int) (past, cur []float64) {
	for bh := 0; bh < b*h; bh++ {
		past = append(past, x[bh*(p+l)*d:][:p*d]...)
		cur = append(cur, x[(bh*(p+l)+p)*d:][:l*d]...)
	}
	return past, cur
}

func tensorOf(dt graph.DType, shape []int64, x []float64) kernels.Tensor {
	t := kernels.MustTensor(dt, shape...)
	for i, v := range x {
		switch dt {
		case graph.Float32:
			t.Float32s()[i] = float32(v)
		case graph.Float16:
			t.Uint16s()[i] = tof16(float32(v))
		case graph.BFloat16:
			t.Uint16s()[i] = tobf16(float32(v))
		}
	}
	return t
}

func float64sOf(t kernels.Tensor) []float64 {
	out := make([]float64, numel(t.Shape))
	for i := range out {
		out[i] = loadF64(t, i)
	}
	return out
}

// runAttn23 runs case c at dtype dt against the reference and returns the instance.
func runAttn23(t *testing.T, r *rand.Rand, c attn23Case, dt graph.DType, tol float64) kernels.Instance {
	t.Helper()
	tt := c.p + c.l
	q, k, v := randF64(r, c.b*c.hq*c.s*c.d), randF64(r, c.b*c.hkv*tt*c.d), randF64(r, c.b*c.hkv*tt*c.dv)
	// the inputs as the kernel's dtype sees them, so that the reference starts from the same values
	round := func(x []float64) []float64 { return float64sOf(tensorOf(dt, []int64{int64(len(x))}, x)) }
	q, k, v = round(q), round(k), round(v)
	maskFn := func(b, h, i, j int) (bool, float64) { return true, 0 }
	in := make([]kernels.Tensor, graph.AttnRelP2CIndex+1)
	if c.mask != "" {
		ms := c.maskShape
		n := numel(ms)
		mdt := dt
		if c.mask == "bool" {
			mdt = graph.Bool
		}
		mt := kernels.MustTensor(mdt, ms...)
		vals := make([]float64, n)
		for i := range vals {
			switch {
			case c.mask == "bool":
				if r.IntN(4) > 0 {
					mt.Data[i] = 1
				}
			case r.IntN(5) == 0:
				vals[i] = math.Inf(-1)
			case r.IntN(5) == 0:
				vals[i] = -math.MaxFloat32
			default:
				vals[i] = r.Float64()
			}
		}
		if c.mask == "float" {
			mt = tensorOf(dt, ms, vals)
			vals = float64sOf(mt)
		}
		in[3] = mt
		maskFn = func(b, h, i, j int) (bool, float64) {
			if j >= int(ms[len(ms)-1]) {
				return false, 0
			}
			coords := []int{b, h, i, j}
			off, stride := 0, 1
			for a := len(ms) - 1; a >= 0; a-- {
				x := coords[4-len(ms)+a]
				if ms[a] == 1 {
					x = 0
				}
				off += x * stride
				stride *= int(ms[a])
			}
			if c.mask == "bool" {
				return mt.Data[off] != 0, 0
			}
			return true, vals[off]
		}
	}
	if c.rel != "" {
		maskFn = relBias(r, c, dt, in, maskFn)
	}
	want := attn23Ref(c, q, k, v, maskFn)
	pk, kc := splitPast(k, c.b, c.hkv, c.p, c.l, c.d)
	pv, vc := splitPast(v, c.b, c.hkv, c.p, c.l, c.dv)
	attrs := []any{"is_causal", b2i(c.causal)}
	if c.scale != 0 {
		attrs = append(attrs, "scale", c.scale)
	}
	if c.softcap != 0 {
		attrs = append(attrs, "softcap", c.softcap)
	}
	if c.left != 0 {
		attrs = append(attrs, graph.AttrWindowLeft, c.left-1)
	}
	if c.right != 0 {
		attrs = append(attrs, graph.AttrWindowRight, c.right-1)
	}
	yShape := []int64{int64(c.b), int64(c.hq), int64(c.s), int64(c.dv)}
	if c.threeD {
		attrs = append(attrs, "q_num_heads", c.hq, "kv_num_heads", c.hkv)
		in[0] = tensorOf(dt, []int64{int64(c.b), int64(c.s), int64(c.hq * c.d)}, bnshToBSH(q, c.b, c.hq, c.s, c.d))
		in[1] = tensorOf(dt, []int64{int64(c.b), int64(c.l), int64(c.hkv * c.d)}, bnshToBSH(kc, c.b, c.hkv, c.l, c.d))
		in[2] = tensorOf(dt, []int64{int64(c.b), int64(c.l), int64(c.hkv * c.dv)}, bnshToBSH(vc, c.b, c.hkv, c.l, c.dv))
		yShape = []int64{int64(c.b), int64(c.s), int64(c.hq * c.dv)}
		want = bnshToBSH(want, c.b, c.hq, c.s, c.dv)
	} else if c.lay != [4]string{} {
		dims := [][4]int{{c.b, c.hq, c.s, c.d}, {c.b, c.hkv, c.l, c.d}, {c.b, c.hkv, c.l, c.dv}, {c.b, c.hq, c.s, c.dv}}
		var packed []float64
		for i, x := range [][]float64{q, kc, vc} {
			l := c.lay[i]
			if l == "" {
				l = graph.StandardLayout
			} else {
				attrs = append(attrs, []string{graph.AttrQLayout, graph.AttrKLayout, graph.AttrVLayout}[i], l)
			}
			shape := layShape(l, dims[i])
			buf := packed
			if buf == nil {
				buf = make([]float64, numel(shape))
			}
			layCopy(buf, l, dims[i], x, false)
			if c.packed {
				packed = buf
			}
			in[i] = tensorOf(dt, shape, buf)
		}
		if c.packed {
			in[0] = tensorOf(dt, in[2].Shape, packed)
			in[1], in[2] = in[0], in[0]
		}
		if l := c.lay[3]; l != "" {
			attrs = append(attrs, graph.AttrYLayout, l)
			yShape = layShape(l, dims[3])
			y := make([]float64, len(want))
			layCopy(y, l, dims[3], want, false)
			want = y
		}
	} else {
		in[0] = tensorOf(dt, []int64{int64(c.b), int64(c.hq), int64(c.s), int64(c.d)}, q)
		in[1] = tensorOf(dt, []int64{int64(c.b), int64(c.hkv), int64(c.l), int64(c.d)}, kc)
		in[2] = tensorOf(dt, []int64{int64(c.b), int64(c.hkv), int64(c.l), int64(c.dv)}, vc)
	}
	if c.p > 0 {
		in[4] = tensorOf(dt, []int64{int64(c.b), int64(c.hkv), int64(c.p), int64(c.d)}, pk)
		in[5] = tensorOf(dt, []int64{int64(c.b), int64(c.hkv), int64(c.p), int64(c.dv)}, pv)
	}
	for len(in) > 3 && in[len(in)-1].DType == graph.Undefined {
		in = in[:len(in)-1]
	}
	outs := []kernels.Value{{DType: dt, Shape: yShape}}
	if c.present {
		outs = append(outs, kernels.Value{DType: dt, Shape: []int64{int64(c.b), int64(c.hkv), int64(tt), int64(c.d)}},
			kernels.Value{DType: dt, Shape: []int64{int64(c.b), int64(c.hkv), int64(tt), int64(c.dv)}})
	}
	n := node("Attention", kernels.Attrs(attrs...), in, outs...)
	got, inst := run(t, n, in...)
	closeTo64(t, want, float64sOf(got[0]), tol, "Y")
	if c.present {
		closeTo64(t, k, float64sOf(got[1]), 0, "present_key")
		closeTo64(t, v, float64sOf(got[2]), 0, "present_value")
	}
	w, err := registry.Bound(kernels.RangeOf(n), dev)
	require.NoError(t, err)
	size, err := inst.Recipe().Size()
	require.NoError(t, err)
	require.Equal(t, w.Bytes, size, "W at a fixed shape is R")
	return inst
}

// relBias makes case c's relative-bias inputs (in[7:11]) and returns mask plus their terms,
// computed the slow way: table[b, h, row, index[i - j + T - 1]] (negative entries from the end).
func relBias(r *rand.Rand, c attn23Case, dt graph.DType, in []kernels.Tensor, mask func(b, h, i, j int) (bool, float64)) func(b, h, i, j int) (bool, float64) {
	t := c.l
	nb := c.b
	if c.relOne {
		nb = 1
	}
	var tabs [2][]float64
	var idxs [2][]int32
	rows := [2]int{c.s, t}
	for k, x := range []struct {
		on       bool
		rows     int
		tab, idx int
	}{{c.rel != "p2c", rows[0], graph.AttnRelC2P, graph.AttnRelC2PIndex}, {c.rel != "c2p", rows[1], graph.AttnRelP2C, graph.AttnRelP2CIndex}} {
		if !x.on {
			continue
		}
		shape := []int64{int64(nb), int64(c.hq), int64(x.rows), int64(c.relR)}
		in[x.tab] = tensorOf(dt, shape, randF64(r, numel(shape)))
		tabs[k] = float64sOf(in[x.tab])
		ix := kernels.MustTensor(graph.Int32, int64(c.s+t-1))
		for e := range ix.Int32s() {
			ix.Int32s()[e] = int32(r.IntN(2*c.relR) - c.relR)
		}
		in[x.idx], idxs[k] = ix, ix.Int32s()
	}
	return func(b, h, i, j int) (bool, float64) {
		keep, add := mask(b, h, i, j)
		if c.relOne {
			b = 0
		}
		for k, row := range []int{i, j} {
			if tabs[k] == nil {
				continue
			}
			e := int(idxs[k][i-j+t-1])
			if e < 0 {
				e += c.relR
			}
			add += tabs[k][((b*c.hq+h)*rows[k]+row)*c.relR+e]
		}
		return keep, add
	}
}

func closeTo64(t *testing.T, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if math.Abs(want[i]-got[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s element %d of %d: got %g, want %g (tolerance %g)", what, i, len(want), got[i], want[i], tol)
		}
	}
}

func TestONNXAttention(t *testing.T) {
	r := rng(t, 23)
	for _, tc := range []struct {
		name string
		c    attn23Case
	}{
		{"mha", attn23Case{b: 2, hq: 3, hkv: 3, s: 5, l: 5, d: 8, dv: 8}},
		{"gqa causal padding", attn23Case{b: 2, hq: 4, hkv: 2, s: 7, l: 7, d: 8, dv: 4, causal: true, mask: "bool", maskShape: []int64{2, 1, 1, 7}}},
		{"mqa float mask", attn23Case{b: 1, hq: 4, hkv: 1, s: 6, l: 6, d: 4, dv: 4, mask: "float", maskShape: []int64{1, 1, 6, 6}}},
		{"per-head mask", attn23Case{b: 2, hq: 2, hkv: 2, s: 3, l: 3, d: 4, dv: 4, mask: "bool", maskShape: []int64{2, 2, 3, 3}}},
		{"2-D mask shorter than T", attn23Case{b: 1, hq: 2, hkv: 1, s: 4, l: 6, d: 4, dv: 4, mask: "float", maskShape: []int64{4, 5}}},
		{"3-D", attn23Case{b: 2, hq: 4, hkv: 2, s: 5, l: 6, d: 8, dv: 8, threeD: true, causal: true}},
		{"past present causal", attn23Case{b: 2, hq: 2, hkv: 1, s: 3, l: 3, p: 4, d: 4, dv: 4, causal: true, present: true}},
		{"decode", attn23Case{b: 1, hq: 2, hkv: 2, s: 1, l: 1, p: 9, d: 8, dv: 8, present: true, mask: "bool", maskShape: []int64{1, 1, 1, 10}}},
		{"scale softcap", attn23Case{b: 1, hq: 2, hkv: 2, s: 4, l: 4, d: 4, dv: 4, scale: 0.7, softcap: 2}},
		{"long keys", attn23Case{b: 1, hq: 2, hkv: 1, s: 20, l: 300, d: 16, dv: 16, mask: "float", maskShape: []int64{1, 1, 20, 300}}},
		{"long causal", attn23Case{b: 1, hq: 1, hkv: 1, s: 260, l: 260, d: 8, dv: 8, causal: true}},
		{"long past", attn23Case{b: 2, hq: 2, hkv: 1, s: 70, l: 70, p: 300, d: 8, dv: 4, causal: true, present: true, mask: "bool", maskShape: []int64{2, 1, 1, 370}}},
		// windows: causal sliding (Mistral's), a band both ways (ModernBERT's local attention),
		// with padding, past keys and blocks of rows and keys the window cuts
		{"sliding window", attn23Case{b: 2, hq: 4, hkv: 2, s: 9, l: 9, d: 8, dv: 8, causal: true, left: 4}},
		{"sliding window padding", attn23Case{b: 2, hq: 2, hkv: 1, s: 9, l: 9, d: 4, dv: 4, causal: true, left: 3, mask: "bool", maskShape: []int64{2, 1, 1, 9}}},
		{"band both ways float mask", attn23Case{b: 2, hq: 2, hkv: 2, s: 11, l: 11, d: 4, dv: 4, left: 3, right: 3, mask: "float", maskShape: []int64{2, 1, 1, 11}}},
		{"right bound only", attn23Case{b: 1, hq: 2, hkv: 2, s: 6, l: 6, d: 4, dv: 4, right: 2}},
		{"window zero", attn23Case{b: 1, hq: 1, hkv: 1, s: 5, l: 5, d: 4, dv: 4, causal: true, left: 1}},
		{"long sliding window past", attn23Case{b: 1, hq: 2, hkv: 1, s: 150, l: 150, p: 200, d: 8, dv: 8, causal: true, left: 101, present: true}},
		{"long band", attn23Case{b: 1, hq: 1, hkv: 1, s: 600, l: 600, d: 8, dv: 8, left: 130, right: 70}},
		{"softcap window", attn23Case{b: 1, hq: 2, hkv: 2, s: 8, l: 8, d: 4, dv: 4, causal: true, left: 3, softcap: 3}},
		// carve's relative bias (DeBERTa's disentangled attention): blocks of rows and keys
		// that cut the diagonals, queries and keys apart, with a mask, a band and grouped heads
		{"relative bias", attn23Case{b: 2, hq: 4, hkv: 4, s: 70, l: 70, d: 8, dv: 8, rel: "both", relR: 16}},
		{"relative c2p, more keys", attn23Case{b: 1, hq: 2, hkv: 1, s: 5, l: 300, d: 8, dv: 4, rel: "c2p", relR: 7, mask: "float", maskShape: []int64{1, 1, 5, 300}}},
		{"relative p2c, fewer keys, one batch", attn23Case{b: 3, hq: 2, hkv: 2, s: 9, l: 4, d: 4, dv: 4, rel: "p2c", relR: 3, relOne: true, mask: "bool", maskShape: []int64{3, 1, 1, 4}}},
		// carve's layouts: nn.MultiheadAttention's packed projection [S, B, 3, H, D] read in
		// place and its output written [S, B, H, D]; GPT-NeoX's heads interleaved
		// [B, S, H, 3, D]; separate tensors each in its own layout, with a past
		{"packed sequence-first", attn23Case{b: 2, hq: 3, hkv: 3, s: 70, l: 70, d: 8, dv: 8, lay: [4]string{"sb0hd", "sb1hd", "sb2hd", "sbhd"}, packed: true}},
		{"packed heads interleaved", attn23Case{b: 2, hq: 2, hkv: 2, s: 5, l: 5, d: 4, dv: 4, causal: true, lay: [4]string{"bsh0d", "bsh1d", "bsh2d", "bshd"}, packed: true}},
		{"layouts apart, grouped, mask", attn23Case{b: 2, hq: 4, hkv: 2, s: 6, l: 9, d: 4, dv: 8, mask: "float", maskShape: []int64{2, 1, 6, 9},
			lay: [4]string{"", "sbhd", "2bshd", "hbsd"}}},
		{"layouts with a past", attn23Case{b: 2, hq: 2, hkv: 1, s: 3, l: 3, p: 4, d: 4, dv: 4, causal: true, present: true, lay: [4]string{"shbd", "1sbhd", "bshd", ""}}},
		{"relative bias, causal window softcap", attn23Case{b: 1, hq: 2, hkv: 2, s: 9, l: 9, d: 4, dv: 4, causal: true, left: 3, softcap: 3, rel: "both", relR: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst := runAttn23(t, r, tc.c, graph.Float32, 1e-5)
			require.Equal(t, "flash", inst.Tactic())
		})
	}
	for _, dt := range []graph.DType{graph.Float16, graph.BFloat16} {
		t.Run(dt.String(), func(t *testing.T) {
			runAttn23(t, r, attn23Case{b: 2, hq: 4, hkv: 2, s: 7, l: 7, d: 8, dv: 8, causal: true, mask: "float", maskShape: []int64{2, 1, 7, 7}}, dt, 2e-2)
			runAttn23(t, r, attn23Case{b: 1, hq: 2, hkv: 1, s: 9, l: 9, p: 3, d: 8, dv: 8, causal: true, left: 4, mask: "bool", maskShape: []int64{1, 1, 1, 12}}, dt, 2e-2)
			runAttn23(t, r, attn23Case{b: 1, hq: 2, hkv: 2, s: 9, l: 9, d: 8, dv: 8, left: 2, right: 3}, dt, 2e-2)
			runAttn23(t, r, attn23Case{b: 2, hq: 2, hkv: 1, s: 9, l: 11, d: 8, dv: 8, rel: "both", relR: 6, mask: "bool", maskShape: []int64{2, 1, 1, 11}}, dt, 2e-2)
			runAttn23(t, r, attn23Case{b: 2, hq: 2, hkv: 2, s: 9, l: 9, d: 8, dv: 8, lay: [4]string{"sb0hd", "sb1hd", "sb2hd", "sbhd"}, packed: true}, dt, 2e-2)
		})
	}
}

// TestONNXAttentionFullyMasked: a row with no visible key is zero, not NaN.
func TestONNXAttentionFullyMasked(t *testing.T) {
	q, k, v := f32([]int64{1, 1, 2, 2}, []float32{1, 2, 3, 4}), f32([]int64{1, 1, 2, 2}, []float32{1, 0, 0, 1}), f32([]int64{1, 1, 2, 2}, []float32{5, 6, 7, 8})
	m := boolT([]int64{2, 2}, []bool{false, false, true, false})
	in := []kernels.Tensor{q, k, v, m}
	got := out1(t, node("Attention", graph.Attributes{}, in, value(q)), in...)
	require.Equal(t, []float32{0, 0, 5, 6}, got.Float32s())
}

// TestONNXAttentionWorkspace: the workspace does not grow with the sequence, a short workspace
// is refused, runs do not allocate, and W bounds R over ranges.
func TestONNXAttentionWorkspace(t *testing.T) {
	at := func(s, l int64) *kernels.Node {
		q, k := kernels.Value{DType: graph.Float32, Shape: []int64{2, 4, s, 16}}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 2, l, 16}}
		m := kernels.Value{DType: graph.Bool, Shape: []int64{2, 1, 1, l}}
		return &kernels.Node{Name: "a", Op: "Attention", Attrs: kernels.Attrs("is_causal", 1), Inputs: []kernels.Value{q, k, k, m}, Outputs: []kernels.Value{q}}
	}
	sizes := map[int64]int64{}
	for _, s := range []int64{256, 2048, 32768} {
		inst, err := registry.Select(at(s, s), dev)
		require.NoError(t, err)
		sizes[s], err = inst.Recipe().Size()
		require.NoError(t, err)
	}
	require.Equal(t, sizes[256], sizes[32768], "R at S=T=256 and 32768")
	// float32: per worker, 64 x 256 scores and the products' packing (about 108 KiB)
	require.Less(t, sizes[256], int64(4*128<<10))

	r := rng(t, 7)
	q, k, v := randF32(r, 1, 2, 9, 4), randF32(r, 1, 1, 9, 4), randF32(r, 1, 1, 9, 4)
	in := []kernels.Tensor{q, k, v}
	n := node("Attention", kernels.Attrs("is_causal", 1), in, value(q))
	requireRefusesSmallWorkspace(t, n, in...)
	requireNoAllocs(t, n, in...)
	h := []kernels.Tensor{tensorOf(graph.BFloat16, q.Shape, float64sOf(q)), tensorOf(graph.BFloat16, k.Shape, float64sOf(k)), tensorOf(graph.BFloat16, v.Shape, float64sOf(v))}
	requireNoAllocs(t, node("Attention", graph.Attributes{}, h, value(h[0])), h...)

	rg := kernels.RangeOf(at(1, 1))
	for _, i := range []int{0, 1, 2, 3} {
		d := rg.Inputs[i].Dims
		d[len(d)-2].Hi = 4096
		if i == 3 {
			d[3].Hi = 4096
		}
	}
	w, err := registry.Bound(rg, dev)
	require.NoError(t, err)
	for _, s := range []int64{1, 7, 100, 4096} {
		inst, err := registry.Select(at(s, s), dev)
		require.NoError(t, err)
		size, err := inst.Recipe().Size()
		require.NoError(t, err)
		require.LessOrEqual(t, size, w.Bytes, "S=T=%d", s)
	}
}

func TestONNXAttentionErrors(t *testing.T) {
	f := func(shape ...int64) kernels.Value { return kernels.Value{DType: graph.Float32, Shape: shape} }
	q := f(1, 4, 3, 8)
	for _, tc := range []struct {
		name  string
		attrs graph.Attributes
		in    []kernels.Value
		out   []kernels.Value
		wants string
	}{
		{"dtype", graph.Attributes{}, []kernels.Value{{DType: graph.Int32, Shape: q.Shape}, q, q}, []kernels.Value{q}, "want one of float32"},
		{"ranks", graph.Attributes{}, []kernels.Value{q, f(1, 3, 32), q}, []kernels.Value{q}, "want all 4 or all 3"},
		{"heads", graph.Attributes{}, []kernels.Value{q, f(1, 3, 3, 8), f(1, 3, 3, 8)}, []kernels.Value{q}, "not a multiple"},
		{"head size", graph.Attributes{}, []kernels.Value{q, f(1, 4, 3, 4), q}, []kernels.Value{q}, "want [B, Hq, S, D]"},
		{"mask", graph.Attributes{}, []kernels.Value{q, q, q, {DType: graph.Bool, Shape: []int64{2, 1, 3, 3}}}, []kernels.Value{q}, "does not broadcast"},
		{"mask type", graph.Attributes{}, []kernels.Value{q, q, q, {DType: graph.Int64, Shape: []int64{3, 3}}}, []kernels.Value{q}, "want bool or float32"},
		{"nonpad", graph.Attributes{}, []kernels.Value{q, q, q, {}, {}, {}, {DType: graph.Int64, Shape: []int64{1}}}, []kernels.Value{q}, "nonpad_kv_seqlen"},
		{"qk output", graph.Attributes{}, []kernels.Value{q, q, q}, []kernels.Value{q, {}, {}, f(1, 4, 3, 3)}, "qk_matmul_output"},
		{"3-D heads", graph.Attributes{}, []kernels.Value{f(1, 3, 32), f(1, 3, 32), f(1, 3, 32)}, []kernels.Value{f(1, 3, 32)}, "q_num_heads"},
		{"softcap", kernels.Attrs("softcap", -1.0), []kernels.Value{q, q, q}, []kernels.Value{q}, "negative"},
		{"layout", kernels.Attrs(graph.AttrKLayout, "bhds"), []kernels.Value{q, q, q}, []kernels.Value{q}, "must be the last axis"},
		{"layout rank", kernels.Attrs(graph.AttrKLayout, "bs0hd"), []kernels.Value{q, q, q}, []kernels.Value{q}, "rank of its layout"},
		{"layout index", kernels.Attrs(graph.AttrVLayout, "bs3hd"), []kernels.Value{q, q, f(1, 3, 3, 4, 8)}, []kernels.Value{q}, "reads axis 2 at 3"},
		{"layout heads", kernels.Attrs(graph.AttrVLayout, "bshd"), []kernels.Value{q, q, f(1, 3, 2, 8)}, []kernels.Value{q}, "V's heads and length K's"},
		{"layout output", kernels.Attrs(graph.AttrYLayout, "sbhd"), []kernels.Value{q, q, q}, []kernels.Value{q}, "output 0 has shape"},
		{"output", graph.Attributes{}, []kernels.Value{q, q, q}, []kernels.Value{f(1, 4, 3, 9)}, "output 0 has shape"},
		{"relative table without index", graph.Attributes{}, []kernels.Value{q, q, q, {}, {}, {}, {}, f(1, 4, 3, 16)}, []kernels.Value{q}, "go together"},
		{"relative index length", graph.Attributes{}, []kernels.Value{q, q, q, {}, {}, {}, {}, f(1, 4, 3, 16), {DType: graph.Int32, Shape: []int64{6}}}, []kernels.Value{q}, "want int32[5]"},
		{"relative p2c rows", graph.Attributes{}, []kernels.Value{q, f(1, 4, 2, 8), f(1, 4, 2, 8), {}, {}, {}, {}, {}, {}, f(1, 1, 3, 16), {DType: graph.Int32, Shape: []int64{4}}}, []kernels.Value{q}, "rel_p2c is float32[1 1 3 16], want float32[1 or 1, 4 or 1, 2, R >= 1]"},
		{"relative bias with a past", graph.Attributes{}, []kernels.Value{q, q, q, {}, f(1, 4, 2, 8), f(1, 4, 2, 8), {}, f(1, 4, 3, 16), {DType: graph.Int32, Shape: []int64{7}}}, []kernels.Value{q}, "no past keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := registry.Select(&kernels.Node{Name: "a", Op: "Attention", Attrs: tc.attrs, Inputs: tc.in, Outputs: tc.out}, dev)
			var ne *kernels.NodeError
			require.ErrorAs(t, err, &ne)
			require.Contains(t, err.Error(), tc.wants)
		})
	}
}

// TestONNXAttentionBandAttributes: the band's attributes are checked once, for every backend.
func TestONNXAttentionBandAttributes(t *testing.T) {
	r := rng(t, 5)
	q := randF32(r, 1, 1, 3, 4)
	in := []kernels.Tensor{q, q, q}
	for _, tc := range []struct {
		attrs graph.Attributes
		want  string
	}{
		{kernels.Attrs(graph.AttrWindowLeft, -2), "window_left -2: want a number of keys >= 0, or -1 for no bound"},
		{kernels.Attrs("is_causal", 1, graph.AttrWindowRight, 2), "is_causal already sees no key after the query's own"},
		{kernels.Attrs("is_causal", 2), "is_causal 2: want 0 or 1"},
	} {
		_, err := registry.Select(node("Attention", tc.attrs, in, value(q)), dev)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestONNXAttentionRelIndexRange: an entry of a relative-bias index outside [-R, R) fails the
// run before anything is read by it.
func TestONNXAttentionRelIndexRange(t *testing.T) {
	r := rng(t, 9)
	q := randF32(r, 1, 1, 3, 4)
	in := []kernels.Tensor{q, q, q, {}, {}, {}, {}, randF32(r, 1, 1, 3, 4), kernels.MustTensor(graph.Int32, 5)}
	copy(in[8].Int32s(), []int32{0, -4, 3, 1, 2})
	out1(t, node("Attention", graph.Attributes{}, in, value(q)), in...)
	in[8].Int32s()[2] = 4
	inst, err := registry.Select(node("Attention", graph.Attributes{}, in, value(q)), dev)
	require.NoError(t, err)
	size, err := inst.Recipe().Size()
	require.NoError(t, err)
	reg, keep := region(size)
	err = kernels.Execute(inst, in, []kernels.Tensor{kernels.MustTensor(graph.Float32, q.Shape...)}, reg, 0)
	_ = keep[0]
	var re *kernels.RelIndexError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "rel_c2p index entry 2 is 4, outside [-4, 4)", re.Error())
}
