package rewrite

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"carve.dev/libs/graph"
)

// A mask recognised by what it computes.
//
// Exporters spell the same attention mask in many ways: Range, LessOrEqual and And; Trilu of a
// ConstantOfShape; the difference of two index grids compared with zero; a padding mask
// gathered by index, cast and expanded; Where(keep, 0, min) or (1 - keep) * min. Instead of
// matching each spelling, recogniseMask evaluates the subgraph that computes the mask (its
// cone: every node between the graph's inputs, weights and Shape nodes and the mask) on small
// probe bindings, and compares the result with the canonical masks
//
//	keep(b, i, j) = [band] -L <= j - (i + T - S) <= R  and  [padding] attention_mask[b, j] != 0
//	                                                     [and attention_mask[b, i + T - S] != 0]
//
// over queries i < S and keys j < T, each part optional and each side of the band (L keys
// before the diagonal, R after) bounded or not; padding masks keys, and may mask the padded
// queries' rows whole as well (DeBERTa's mask is the outer product of the attention mask with
// itself): causal is R = 0, a sliding window of W keys
// L = W - 1 as well, ModernBERT's local attention L = R. A masked score takes one fill value
// (-inf, or a finite minimum), a kept one 0. The fused Attention then reads is_causal, the
// window (graph.AttentionBand) and a [batch, 1, 1, T] padding mask: no [batch, 1, S, T]
// tensor is left.
//
// Why probing decides it (soundness). The cone is evaluated only if every op in it is one of
// evalOps, and the evaluator refuses position arithmetic other than adding, subtracting,
// comparing, taking the minimum or maximum of positions, lengths and constants: a product or
// quotient of a position by anything but 1 or -1 is refused, a length scaled by a constant
// records the constant in C, a batch row index may be scaled by a length (flat gathers of the
// attention mask do), an integer Range steps by 1 or -1, and a cumulative sum of a graph
// input's data is refused, so that a key's mask reads its own padding bit only.
// (A product of padding data by padding data, no position or length in either, is the And of
// their bits: DeBERTa multiplies the attention mask by itself, over keys and over queries.)
// The mask's value at (b, i, j) is then a Boolean combination of padding bits and atoms
// "u·(i, j, S, T) + c >= 0" with every coefficient in {-1, 0, 1} and |c| <= C, the largest
// constant that meets an index (recorded while evaluating). Two such combinations that
// differ, differ on a cell of the arrangement of their atoms; every cell that contains an
// integer point of the admitted region (S >= 1, T >= S, i < S, j < T) contains one with
// S, T <= 2C + 2, because the cells' vertices solve unit-coefficient systems with constants
// bounded by C. Every binding with S, T up to N = max(8, 2C + 4) is probed, at every (i, j);
// each batch row pair carries a padding pattern and its complement (a static batch of one
// takes them in turn; a static batch of more alternates them), so every (i, j) meets both padding bits, under three patterns
// (scattered, right- and left-padded); a mask found to pad the queries too is probed again
// with seven more patterns (each binary digit of the position, and every key kept), so that
// every two positions also meet all four pairs of their bits. A mask that
// matches a canonical one at every probe equals it at every binding (the band's own L and R
// count among the constants). A cone whose constants make N larger than maxProbe (a sliding
// window of 4096) is probed with its large constants taken as a parameter (probeWindow says
// how and why that is sound); one that cannot be, any cone with an op the evaluator does not
// know, and one that reads the data of a graph input other than one [batch, T] attention
// mask stay as exported, with the reason.

// plan turns a recognised mask into how the fused op reads it, over scores of type dt. A
// padding mask is read as bool [batch, 1, 1, keys] (True keeps) when its fill is -inf, else
// as the float Where(keep, 0, fill) the exported graph adds; new nodes are named after the
// attention mask input, so every fusion reading it shares them.
func (r recognised) plan(dt graph.DType, s, t graph.Dim) (maskPlan, string) {
	how := fmt.Sprintf("recognised by evaluation at %d probes", r.probes)
	causal, band := r.band.Right == 0, bandDetail(r.band)
	var window *graph.AttentionBand
	if r.band.Left >= 0 || r.band.Right > 0 {
		b := r.band
		window = &b
	}
	if band != "" && r.unequal {
		// the canonical band is aligned to the last key (T - S keys before the first query),
		// the fused Attention's, without a past, to the first: they agree only when S == T
		return maskPlan{}, fmt.Sprintf("the mask is %s over %s queries and %s keys, aligned to the last key; the fused Attention, which has no past keys, aligns it to the first", band, s, t)
	}
	if r.queries && (band != "" || r.unequal) {
		return maskPlan{}, fmt.Sprintf("the mask pads the queries as well as the keys, with %s over %s queries and %s keys; only a prompt's padding without a band is fused so", cmp.Or(band, "no band"), s, t)
	}
	if r.pad == nil {
		if band == "" {
			return maskPlan{detail: "mask always true (" + how + ")"}, ""
		}
		return maskPlan{causal: causal, window: window, detail: band + " (" + how + ")"}, ""
	}
	var p maskPlan
	am := r.pad.Name
	keep := am
	if r.pad.DType != graph.Bool {
		keep = am + "/carve.keep"
		p.add = append(p.add, graph.NodeSpec{Name: keep, OpType: "Cast", Inputs: []string{am}, Outputs: []string{keep},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Bool)})})
	}
	keep4 := keep + "/keys"
	p.inits = append(p.inits, int64Init("rewrite.[1,2]", []int64{2}, 1, 2))
	p.add = append(p.add, graph.NodeSpec{Name: keep4, OpType: "Unsqueeze", Inputs: []string{keep, "rewrite.[1,2]"}, Outputs: []string{keep4}})
	p.causal, p.window = causal, window
	parts := fmt.Sprintf("padding %s != 0 as a bool mask [batch, 1, 1, keys]", am)
	if math.IsInf(r.fill, -1) {
		p.value, p.isBool = keep4, true
	} else {
		zero, fill := p.floatConst(0, dt, r.scalars), p.floatConst(r.fill, dt, r.scalars)
		p.value = fmt.Sprintf("%s/mask(%s)", keep4, f32(r.fill))
		p.add = append(p.add, graph.NodeSpec{Name: p.value, OpType: "Where", Inputs: []string{keep4, zero, fill}, Outputs: []string{p.value}})
		parts = fmt.Sprintf("padding Where(%s != 0, 0, %s) [batch, 1, 1, keys]", am, f32(r.fill))
	}
	if band != "" {
		parts = band + ", " + parts
		if !math.IsInf(r.fill, -1) {
			p.emptyRows = keep4
			parts += ", rows with no key kept set to the mean of V"
		}
	}
	if r.queries {
		// a padded query's row keeps no key: its scores all the fill, the exported softmax
		// spreads it over every key (the mean of V); with -inf, NaN (zero, item 4 of doc.go)
		p.padQueries, p.padQueriesZero = keep4, math.IsInf(r.fill, -1)
		parts = strings.Replace(parts, "[batch, 1, 1, keys]", "[batch, 1, 1, keys] of keys and queries", 1)
		if p.padQueriesZero {
			parts += ", padded queries' rows zero"
		} else {
			parts += ", padded queries' rows set to the mean of V"
		}
	}
	p.detail = parts + " (" + how + ")"
	return p, ""
}

// bandDetail says what a band keeps, for --explain-fusion; "" for every key.
func bandDetail(b graph.AttentionBand) string {
	switch {
	case b.Left < 0 && b.Right < 0:
		return ""
	case b.Left < 0 && b.Right == 0:
		return "causal"
	case b.Right == 0:
		return fmt.Sprintf("causal sliding window of %d keys", b.Left+1)
	}
	side := func(n int64, where string) string {
		if n < 0 {
			return "every key " + where
		}
		return fmt.Sprintf("%d keys %s", n, where)
	}
	return fmt.Sprintf("a band of %s and %s the query", side(b.Left, "before"), side(b.Right, "after"))
}

// floatConst names a scalar constant x of type dt: one of the mask's own (have), else a new
// float32 initializer, cast to dt when dt is another float type.
func (p *maskPlan) floatConst(x float64, dt graph.DType, have map[float64]*graph.Value) string {
	if v, ok := have[x]; ok && v.DType == dt {
		return v.Name
	}
	name := "rewrite.float32(" + f32(x) + ")"
	p.inits = append(p.inits, float32Init(name, float32(x)))
	if dt == graph.Float32 {
		return name
	}
	cast := fmt.Sprintf("%s.%s", name, dt)
	p.add = append(p.add, graph.NodeSpec{Name: cast, OpType: "Cast", Inputs: []string{name}, Outputs: []string{cast},
		Attrs: graph.NewAttributes(graph.Attribute{Name: "to", Kind: graph.AttrInt, Int: int64(dt)})})
	return cast
}

// maxProbe bounds the probes' sequence lengths (their cost is about N^4 element evaluations).
const maxProbe = 40

// recognised is what recogniseMask found.
type recognised struct {
	// band is the positional part: causal is Right 0, a sliding window bounds Left as well
	// (and a bidirectional one both sides without causality); {-1, -1} for none.
	band graph.AttentionBand
	pad  *graph.Value // the attention mask input [batch, T] whose zeros mask keys; nil for none
	// queries: pad's zeros mask the queries' rows as well (query i's position is i + T - S)
	queries bool
	fill    float64 // the masked scores' value; -inf if no probe masked any
	probes  int     // the probe evaluations it took
	// unequal: some probe binding had more keys than queries (S and T are otherwise the same
	// length, whatever their expressions).
	unequal bool
	// scalars are the cone's float scalar constants by value, for the new nodes to read
	// instead of new initializers.
	scalars map[float64]*graph.Value
}

// The canonical masks, by their parts: a band of keys about the diagonal (d = j - (i + T - S)
// kept for -Left <= d <= Right, either side unbounded, the diagonal always kept) and padding
// present or not. candidates[p] is what the probes allow of the band with padding p (0 absent,
// 1 of the keys, 2 of the keys and the queries): the bounds within which Left and Right agree
// with every probe so far.
type candidates [3]bandFit

// bandFit is the range of bands that agree with the probes: Left in [lMin, lMax] and Right in
// [rMin, rMax], a bound of unbounded the largest int64; dead once a probe rules out every band.
type bandFit struct {
	dead                   bool
	lMin, lMax, rMin, rMax int64
}

func newCandidates() candidates {
	all := bandFit{lMax: math.MaxInt64, rMax: math.MaxInt64}
	return candidates{all, all, all}
}

// keep narrows the fit by a kept (true) or masked (false) key at offset d from the diagonal.
func (f *bandFit) keep(d int64, kept bool) {
	switch {
	case kept && d < 0:
		f.lMin = max(f.lMin, -d)
	case kept && d > 0:
		f.rMin = max(f.rMin, d)
	case !kept && d < 0:
		f.lMax = min(f.lMax, -d-1)
	case !kept && d > 0:
		f.rMax = min(f.rMax, d-1)
	case !kept: // the diagonal masked: no band
		f.dead = true
	}
	if f.lMin > f.lMax || f.rMin > f.rMax {
		f.dead = true
	}
}

// band is the one band the fit allows, or false. A side the probes never bounded is unbounded;
// a bounded side must be pinned to one value (the probes reach past it, see N).
func (f bandFit) band() (graph.AttentionBand, bool) {
	if f.dead {
		return graph.AttentionBand{}, false
	}
	side := func(lo, hi int64) (int64, bool) {
		if hi == math.MaxInt64 {
			return -1, true
		}
		return hi, lo == hi
	}
	l, ok1 := side(f.lMin, f.lMax)
	r, ok2 := side(f.rMin, f.rMax)
	return graph.AttentionBand{Left: l, Right: r}, ok1 && ok2
}

// recogniseMask evaluates the cone of the mask m added to scores [.., s, t] and returns the
// canonical mask it equals, or why it cannot tell.
func recogniseMask(m *graph.Value, s, t graph.Dim) (recognised, string) {
	c, why := coneOf(m)
	if why != "" {
		return recognised{}, why
	}
	if len(m.Shape) != 4 {
		return recognised{}, fmt.Sprintf("the mask %s has rank %d, not [batch, heads, queries, keys]", m.Name, len(m.Shape))
	}
	if len(c.inputs) > 1 {
		return recognised{}, fmt.Sprintf("the mask reads the data of %d inputs; a padding mask comes from one", len(c.inputs))
	}
	c.dims = t.Syms(s.Syms(c.dims))
	// The batch dims stay at 2 (a padding pattern and its complement); the others vary.
	batch := m.Shape[0].Syms(nil)
	if len(c.inputs) == 1 {
		in := c.inputs[0]
		if len(in.Shape) != 2 || !(isInt(in.DType) || in.DType == graph.Bool || isFloat(in.DType)) {
			return recognised{}, fmt.Sprintf("the mask reads the data of input %s, which is not a [batch, keys] attention mask", in)
		}
		batch = in.Shape[0].Syms(batch)
	}
	var dims []string
	for _, d := range c.dims {
		if !slices.Contains(batch, d) {
			dims = append(dims, d)
		}
	}
	if len(dims) > 2 {
		return recognised{}, fmt.Sprintf("the mask depends on %d dims besides the batch (%v); probing covers at most two", len(dims), dims)
	}
	return recogniseMaskCone(c, batch, dims, m, s, t)
}

// recogniseMaskCone probes cone c of mask m (its batch and other dims found).
func recogniseMaskCone(c *cone, batch, dims []string, m *graph.Value, s, t graph.Dim) (recognised, string) {
	rec, st, why := c.probe(batch, dims, m, s, t, nil)
	if why != "" && st.beyond && len(st.large) > 0 {
		rec, why = c.probeWindow(batch, dims, m, s, t, st)
	}
	if why != "" || !rec.queries || c.extended {
		return rec, why
	}
	// padded queries: again with the patterns that pair every two positions' bits every way
	c.extended = true
	return recogniseMaskCone(c, batch, dims, m, s, t)
}

// probe runs the probes to N = max(8, 2C + 4) for the largest constant C that met an index
// (par, when not nil, standing for the large ones); C is known once the cone has been
// evaluated, so a first pass at N = 8 finds it.
func (c *cone) probe(batch, dims []string, m *graph.Value, s, t graph.Dim, par *window) (recognised, probeStats, string) {
	n := 8
	for {
		rec := recognised{fill: math.NaN(), scalars: c.scalars}
		st, why := c.probeAll(&rec, batch, dims, m, s, t, n, par)
		if why != "" {
			return recognised{}, st, why
		}
		need := max(8, 2*st.bound+4)
		if need > maxProbe {
			st.beyond = true
			return recognised{}, st, fmt.Sprintf("the mask compares positions with the constant %d; deciding it takes probes of up to %d positions, beyond the %d run", st.bound, need, maxProbe)
		}
		if need <= n {
			if math.IsNaN(rec.fill) {
				rec.fill = math.Inf(-1)
			}
			return rec, st, ""
		}
		n = need
	}
}

// probeStats are the constants the probes met: the largest, the largest small one and the
// large ones.
type probeStats struct {
	bound, small int
	large        map[int64]bool
	beyond       bool // the probes were not run to the bound's N
}

// probeWindow decides a cone whose large constants (a sliding window of 4096 and its
// neighbours) are too large to probe, by taking them as a parameter P, every large constant
// P - k for a small k: the cone is then a function of (b, i, j, S, T, P) whose atoms have
// the coefficient 1 or -1 on P (the evaluator refuses anything else: a window constant
// scaled, added to another, sizing a tensor or indexing one, or made a float), so the
// argument of probing holds in one more variable. Every P from the least that keeps every
// large constant's magnitude positive, over 2C + 3 values (C the largest small constant),
// is probed as above, and each must give the same padding and fill and a band whose bounded
// sides are P plus one fixed offset each; the band at the real P follows.
func (c *cone) probeWindow(batch, dims []string, m *graph.Value, s, t graph.Dim, first probeStats) (recognised, string) {
	refused := fmt.Sprintf("the mask compares positions with the constant %d, beyond the probes", first.bound)
	var p, least int64 = 0, math.MaxInt64
	for a := range first.large {
		p, least = max(p, a), min(least, a)
	}
	if p == 0 || p-least > maxSmall {
		return recognised{}, refused + " (and it is not one window constant and its neighbours)"
	}
	w0 := 1 + p - least
	var out recognised
	var lefts, rights []int64
	for w := w0; w < w0+int64(2*first.small+3); w++ {
		rec, st, why := c.probe(batch, dims, m, s, t, &window{p: p, w: w, large: first.large})
		if why != "" {
			return recognised{}, fmt.Sprintf("%s; taken as a parameter at %d: %s", refused, w, why)
		}
		if st.small > first.small {
			return recognised{}, fmt.Sprintf("%s; taken as a parameter at %d, it meets the constant %d", refused, w, st.small)
		}
		if w > w0 && (rec.pad != out.pad || rec.fill != out.fill) {
			return recognised{}, fmt.Sprintf("%s; taken as a parameter, its padding or fill changes with it", refused)
		}
		if w == w0 {
			out = rec
		} else {
			out.probes += rec.probes
		}
		lefts, rights = append(lefts, rec.band.Left), append(rights, rec.band.Right)
	}
	// each side is unbounded, fixed, or P plus a fixed offset at every probe
	side := func(vals []int64) (int64, bool) {
		fixed, follows := true, true
		for k, v := range vals {
			fixed = fixed && v == vals[0]
			follows = follows && vals[0] >= 0 && v-int64(k) == vals[0]
		}
		switch {
		case fixed:
			return vals[0], true
		case follows:
			return p + vals[0] - w0, true
		}
		return 0, false
	}
	l, ok1 := side(lefts)
	r, ok2 := side(rights)
	if !ok1 || !ok2 {
		return recognised{}, fmt.Sprintf("%s; taken as a parameter, its band does not follow it (left %v, right %v from %d on)", refused, lefts, rights, w0)
	}
	out.band = graph.AttentionBand{Left: l, Right: r}
	return out, ""
}

// probeAll probes every binding with the batch dims at 2 and the other dims in 1..n, and
// returns the largest constant that met an index, or why the mask is no canonical one.
func (c *cone) probeAll(rec *recognised, batch, dims []string, m *graph.Value, s, t graph.Dim, n int, par *window) (probeStats, string) {
	alive := newCandidates()
	if len(c.inputs) == 0 {
		alive[1].dead, alive[2].dead = true, true
	}
	vals := make([]int64, len(dims))
	for i := range vals {
		vals[i] = 1
	}
	var st probeStats
	for {
		env := map[string]int64{}
		for _, d := range batch {
			env[d] = 2
		}
		for i, d := range dims {
			env[d] = vals[i]
		}
		S, err1 := s.Eval(env)
		T, err2 := t.Eval(env)
		if err1 == nil && err2 == nil && S >= 1 && T >= S {
			rec.unequal = rec.unequal || S != T
			kinds, patterns, rows := 1, 1, int64(2)
			if len(c.inputs) == 1 {
				kinds = padKinds
				if c.extended {
					kinds = padKindsExtended
				}
				patterns = kinds
				if shape, err := c.inputs[0].Shape.Eval(env); err == nil && len(shape) == 2 && shape[0] >= 1 {
					rows = shape[0] // a static batch
				}
				if rows == 1 {
					patterns = 2 * kinds // each pattern, then its complement
				}
			}
			for pat := 0; pat < patterns; pat++ {
				ev := &evaluator{env: env, batch: batch, memo: map[*graph.Value]*etensor{}, par: par}
				var pads *etensor
				if len(c.inputs) == 1 {
					in := c.inputs[0]
					shape, err := in.Shape.Eval(env)
					if err != nil || len(shape) != 2 || shape[0] != rows || shape[1] != T {
						return st, fmt.Sprintf("the attention mask %s %s does not span the %d keys at %v", in.Name, in.Shape, T, env)
					}
					pads = padProbe(in.DType, rows, T, pat%kinds, pat >= kinds)
					ev.inputs = map[*graph.Value]*etensor{in: pads}
				}
				got, err := ev.eval(m)
				if err != nil {
					return st, fmt.Sprintf("the mask cannot be evaluated at %v: %v", env, err)
				}
				st.bound, st.small = max(st.bound, ev.bound), max(st.small, ev.small)
				for a := range ev.large {
					if st.large == nil {
						st.large = map[int64]bool{}
					}
					st.large[a] = true
				}
				if why := compare(got, pads, rows, S, T, rec, &alive); why != "" {
					return st, fmt.Sprintf("%s at %v", why, env)
				}
				rec.probes++
			}
		}
		i := 0
		for ; i < len(vals); i++ {
			if vals[i] < int64(n) {
				vals[i]++
				break
			}
			vals[i] = 1
		}
		if i == len(vals) {
			break
		}
	}
	if rec.probes == 0 {
		return st, "no probe binding has queries and at least as many keys"
	}
	// the simpler canonical mask that agreed with every probe: without padding, else with it
	// (of the keys, else of the keys and the queries)
	for p, fit := range alive {
		if b, ok := fit.band(); ok {
			rec.band = b
			if p >= 1 {
				rec.pad, rec.queries = c.inputs[0], p == 2
			}
			// the band's own bounds are constants of the canonical mask: the probes must
			// reach past them as past the cone's
			st.bound = max(st.bound, int(b.Left), int(b.Right))
			return st, ""
		}
	}
	return st, "the mask is no band of keys about the diagonal (causal, a sliding window, or all), with or without padding"
}

// padKinds are the padding patterns of a probe; padKindsExtended those that a mask padding the
// queries too is probed with: also each binary digit of the position (six cover maxProbe) and
// every key kept.
const (
	padKinds         = 3
	padKindsExtended = padKinds + 7
)

// padProbe is the attention mask of a probe: rows rows (two, or a static batch), pattern kind
// in even rows and its complement in odd ones; swap swaps them.
func padProbe(dt graph.DType, rows, keys int64, kind int, swap bool) *etensor {
	t := &etensor{dt: dt, shape: []int64{rows, keys}, data: make([]float64, rows*keys), from: origin{dynamic: true, index: true, data: true}}
	for r := int64(0); r < rows; r++ {
		for j := int64(0); j < keys; j++ {
			var on bool
			switch {
			case kind == 0: // scattered
				on = (j*7+3)%5 < 3
			case kind == 1: // right padding
				on = j < (keys+1)/2
			case kind == 2: // left padding
				on = j >= keys/2
			case kind < padKindsExtended-1: // binary digit kind - 3
				on = j>>(kind-padKinds)&1 == 1
			default: // every key
				on = true
			}
			if on != (r%2 == 1) != swap {
				t.data[r*keys+j] = 1
			}
		}
	}
	return t
}

// compare checks the evaluated mask got, broadcast to [B, 1, S, T], against the canonical
// masks and rules out those it disagrees with. Every masked score must take one fill of at
// most -1e4.
func compare(got, pads *etensor, B, S, T int64, rec *recognised, alive *candidates) string {
	if len(got.shape) != 4 {
		return fmt.Sprintf("the mask evaluates to shape %v", got.shape)
	}
	want := []int64{B, 1, S, T}
	for a, d := range got.shape {
		if d != want[a] && d != 1 {
			return fmt.Sprintf("the mask evaluates to shape %v, which does not broadcast to [batch, 1, %d, %d] (a mask that differs across heads is a bias)", got.shape, S, T)
		}
	}
	st := strides(got.shape)
	for a, d := range got.shape {
		if d == 1 {
			st[a] = 0
		}
	}
	off := T - S
	for b := int64(0); b < B; b++ {
		for i := int64(0); i < S; i++ {
			for j := int64(0); j < T; j++ {
				x := got.data[b*st[0]+i*st[2]+j*st[3]]
				kept := x == 0
				if !kept {
					if math.IsNaN(rec.fill) {
						rec.fill = x
					}
					if x != rec.fill || !(x <= -1e4) {
						return fmt.Sprintf("the mask holds %g and %g: a masked score takes one fill of at most -1e4, a kept one 0", rec.fill, x)
					}
				}
				d := j - (i + off)
				alive[0].keep(d, kept)
				switch padded := pads != nil && pads.data[b*T+j] == 0; {
				case padded && kept:
					alive[1].dead = true
				case !padded:
					alive[1].keep(d, kept)
				}
				switch padded := pads != nil && (pads.data[b*T+j] == 0 || pads.data[b*T+i+off] == 0); {
				case padded && kept:
					alive[2].dead = true
				case !padded:
					alive[2].keep(d, kept)
				}
			}
		}
	}
	return ""
}

// ---------------------------------------------------------------- the cone

type cone struct {
	inputs   []*graph.Value // graph inputs whose data the cone reads
	dims     []string       // the named dims of the shapes it reads and of those inputs
	scalars  map[float64]*graph.Value
	extended bool // probe with padKindsExtended patterns
}

// coneOf collects what m is computed from, or says why it cannot be evaluated.
func coneOf(m *graph.Value) (*cone, string) {
	c := &cone{scalars: map[float64]*graph.Value{}}
	seen := map[*graph.Value]bool{}
	var walk func(v *graph.Value) string
	walk = func(v *graph.Value) string {
		if v == nil || seen[v] {
			return ""
		}
		seen[v] = true
		if x, ok := scalar(v); ok && isFloat(v.DType) && len(v.Shape) <= 4 && v.Shape.IsConst() {
			if _, dup := c.scalars[x]; !dup {
				c.scalars[x] = v
			}
		}
		switch v.Kind {
		case graph.KindInitializer:
			if _, ext := v.Init.External(); ext {
				return fmt.Sprintf("the mask reads the external weight %s", v.Name)
			}
			return ""
		case graph.KindInput:
			c.inputs = append(c.inputs, v)
			for _, d := range v.Shape {
				c.dims = d.Syms(c.dims)
			}
			return ""
		}
		n := v.Producer
		if n == nil {
			return fmt.Sprintf("the mask reads %s, which nothing produces", v.Name)
		}
		if n.Domain != "" || !evalOps[n.OpType] {
			return fmt.Sprintf("the mask is computed by %s (%s), an op the mask evaluator does not know", n.Name, opLabel(n))
		}
		if n.OpType == "Shape" || n.OpType == "Size" {
			for _, d := range n.Inputs[0].Shape {
				c.dims = d.Syms(c.dims)
			}
			return "" // reads a shape only
		}
		for _, in := range n.Inputs {
			if why := walk(in); why != "" {
				return why
			}
		}
		return ""
	}
	if why := walk(m); why != "" {
		return nil, why
	}
	return c, ""
}

// ---------------------------------------------------------------- the evaluator

var evalOps = map[string]bool{
	"Identity": true, "Cast": true, "CastLike": true, "Shape": true, "Size": true, "Gather": true,
	"Unsqueeze": true, "Squeeze": true, "Reshape": true, "Expand": true, "Concat": true,
	"Slice": true, "Range": true, "ConstantOfShape": true, "Constant": true, "Where": true,
	"Add": true, "Sub": true, "Mul": true, "Div": true, "Neg": true, "Abs": true,
	"Not": true, "And": true, "Or": true, "Xor": true, "Equal": true, "Less": true,
	"LessOrEqual": true, "Greater": true, "GreaterOrEqual": true, "Min": true, "Max": true,
	"Trilu": true, "Transpose": true, "Flatten": true, "GatherND": true, "CumSum": true,
	"Sqrt": true, "Reciprocal": true, "Pow": true,
}

// etensor is a dense tensor of the evaluator: every dtype held as float64 (the integers of
// masks and shapes are far below 2^53; floats are rounded to their dtype after each op).
type etensor struct {
	dt    graph.DType
	shape []int64
	data  []float64
	from  origin
}

// origin says what a tensor depends on: the binding at all (a length, an index, a padding
// bit), positions (a Range of indices, or a graph input's data, one value per position), and
// a graph input's data.
//
// param marks a value computed from a window constant taken as a parameter (see window);
// shape one computed from a length (a Shape or Size), as every position of a Range over the
// sequence is.
type origin struct{ dynamic, index, data, param, shape bool }

func (o origin) or(p origin) origin {
	return origin{o.dynamic || p.dynamic, o.index || p.index, o.data || p.data, o.param || p.param, o.shape || p.shape}
}

type evaluator struct {
	// host, when set, evaluates a cone known at load (hostScalar) instead of a probe: the
	// values graph computes on the host are read as their data before binding
	// (graph.Model.HostData), which must be constants; env is then empty.
	host   *graph.Model
	env    map[string]int64
	batch  []string // the dims probes hold at 2
	inputs map[*graph.Value]*etensor
	memo   map[*graph.Value]*etensor
	bound  int // the largest constant that met a dynamic integer
	small  int // the largest below maxSmall
	large  map[int64]bool
	par    *window // the window constants taken as a parameter; nil for none
}

// maxSmall bounds the constants probed as they are: (maxProbe - 4) / 2.
const maxSmall = (maxProbe - 4) / 2

// window takes the large integer constants of a cone (P and those a little below it, as a
// sliding window's W and W - 1) as W = P + delta with the parameter P set to w: a constant
// c of |c| = P - k evaluates as sign(c) (w - k).
type window struct {
	p, w  int64
	large map[int64]bool // the magnitudes taken
}

var errNonlinear = errors.New("index arithmetic other than sums and comparisons")

func (ev *evaluator) eval(v *graph.Value) (*etensor, error) {
	if t, ok := ev.memo[v]; ok {
		return t, nil
	}
	t, err := ev.evalValue(v)
	if err != nil {
		return nil, err
	}
	ev.memo[v] = t
	return t, nil
}

func (ev *evaluator) evalValue(v *graph.Value) (*etensor, error) {
	if ev.host != nil {
		if d, ok := ev.host.HostData(v); ok {
			return knownInts(v, d)
		}
	}
	switch v.Kind {
	case graph.KindInitializer, graph.KindConstant:
		h, ok := constData(v)
		if !ok {
			return nil, fmt.Errorf("constant %s cannot be read", v.Name)
		}
		return ev.constant(h)
	case graph.KindInput:
		t, ok := ev.inputs[v]
		if !ok {
			return nil, fmt.Errorf("input %s has no probe", v.Name)
		}
		return t, nil
	}
	n := v.Producer
	in := func(i int) (*etensor, error) {
		x := n.Input(i)
		if x == nil {
			return nil, nil
		}
		return ev.eval(x)
	}
	if n.OpType == "Shape" || n.OpType == "Size" { // reads its input's shape, not its data
		shape, err := n.Inputs[0].Shape.Eval(ev.env)
		if err != nil {
			return nil, err
		}
		if n.OpType == "Size" {
			p := int64(1)
			for _, d := range shape {
				p *= d
			}
			return &etensor{dt: graph.Int64, data: []float64{float64(p)}, from: origin{dynamic: true, shape: true}}, nil
		}
		r := int64(len(shape))
		lo, hi := clampAxis(n.Attrs.Int("start", 0), r), clampAxis(n.Attrs.Int("end", r), r)
		t := &etensor{dt: graph.Int64, shape: []int64{max(0, hi-lo)}, from: origin{dynamic: true, shape: true}}
		for _, d := range shape[lo:max(lo, hi)] {
			t.data = append(t.data, float64(d))
		}
		return t, nil
	}
	x, err := in(0)
	if err != nil {
		return nil, err
	}
	out := v.DType
	switch n.OpType {
	case "Identity":
		return x, nil
	case "Cast", "CastLike":
		if x.from.param && !isInt(out) && out != graph.Bool {
			return nil, fmt.Errorf("Cast %s to %s: %w", n.Name, out, errParam)
		}
		return x.cast(out), nil
	case "Constant":
		h, ok := constData(v)
		if !ok {
			return nil, fmt.Errorf("constant %s cannot be read", v.Name)
		}
		return ev.constant(h)
	case "Neg", "Abs", "Not":
		r := x.like(out)
		for i, a := range x.data {
			switch n.OpType {
			case "Neg":
				r.data[i] = -a
			case "Abs":
				r.data[i] = math.Abs(a)
			default:
				r.data[i] = b2f(a == 0)
			}
		}
		return r.round(), nil
	case "Sqrt", "Reciprocal":
		if err := constantOnly(n, x); err != nil {
			return nil, err
		}
		r := x.like(out)
		for i, a := range x.data {
			if n.OpType == "Sqrt" {
				r.data[i] = math.Sqrt(a)
			} else {
				r.data[i] = 1 / a
			}
		}
		return r.round(), nil
	case "Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual":
		y, err := in(1)
		if err != nil {
			return nil, err
		}
		if n.OpType == "Pow" {
			if err := constantOnly(n, x, y); err != nil {
				return nil, err
			}
		}
		return ev.binary(n.OpType, out, x, y)
	case "Min", "Max":
		r := x
		for i := 1; i < len(n.Inputs); i++ {
			y, err := in(i)
			if err != nil {
				return nil, err
			}
			if r, err = ev.binary(n.OpType, out, r, y); err != nil {
				return nil, err
			}
		}
		return r, nil
	case "Where":
		a, err := in(1)
		if err != nil {
			return nil, err
		}
		b, err := in(2)
		if err != nil {
			return nil, err
		}
		return where(out, x, a, b)
	case "Range":
		st, err := in(1)
		if err != nil {
			return nil, err
		}
		dl, err := in(2)
		if err != nil {
			return nil, err
		}
		if len(x.data) != 1 || len(st.data) != 1 || len(dl.data) != 1 {
			return nil, fmt.Errorf("Range %s takes scalars", n.Name)
		}
		if x.from.param || st.from.param || dl.from.param {
			return nil, fmt.Errorf("Range %s: %w", n.Name, errParam)
		}
		start, limit, delta := x.data[0], st.data[0], dl.data[0]
		if isInt(out) && delta != 1 && delta != -1 {
			return nil, fmt.Errorf("Range %s steps by %g: %w", n.Name, delta, errNonlinear)
		}
		if !x.from.dynamic {
			ev.record(start, false)
		}
		cnt := int64(math.Max(0, math.Ceil((limit-start)/delta)))
		if cnt > 1<<16 {
			return nil, fmt.Errorf("Range %s has %d elements", n.Name, cnt)
		}
		r := &etensor{dt: out, shape: []int64{cnt}, data: make([]float64, cnt), from: x.from.or(st.from).or(dl.from)}
		// positions, unless the range runs over the batch (a row index, as flat gathers
		// of the attention mask scale by the keys)
		r.from.index = r.from.dynamic && len(v.Shape) == 1 && slices.ContainsFunc(v.Shape[0].Syms(nil), func(d string) bool { return !slices.Contains(ev.batch, d) })
		for i := range r.data {
			r.data[i] = start + float64(i)*delta
		}
		return r.round(), nil
	case "ConstantOfShape":
		shape, err := x.ints()
		if err != nil {
			return nil, err
		}
		fill := 0.0
		if a, ok := n.Attrs.Get("value"); ok && a.Tensor != nil {
			h, err := fromHost(a.Tensor)
			if err != nil {
				return nil, err
			}
			if len(h.data) > 0 {
				fill = h.data[0]
			}
		}
		r, err := filled(out, shape, fill)
		if err != nil {
			return nil, err
		}
		r.from = x.from
		return r, nil
	case "Unsqueeze", "Squeeze", "Reshape", "Flatten":
		shape, err := ev.reshaped(n, x)
		if err != nil {
			return nil, err
		}
		return &etensor{dt: x.dt, shape: shape, data: x.data, from: x.from}, nil
	case "Expand":
		s, err := in(1)
		if err != nil {
			return nil, err
		}
		shape, err := s.ints()
		if err != nil {
			return nil, err
		}
		to, err := graph.BroadcastShapes(x.shape, shape)
		if err != nil {
			return nil, err
		}
		r := expand(x, to)
		r.from = x.from.or(s.from)
		return r, nil
	case "Concat":
		ts := []*etensor{x}
		for i := 1; i < len(n.Inputs); i++ {
			y, err := in(i)
			if err != nil {
				return nil, err
			}
			ts = append(ts, y)
		}
		return concat(ts, n.Attrs.Int("axis", 0))
	case "Gather":
		idx, err := in(1)
		if err != nil {
			return nil, err
		}
		if idx.from.param {
			return nil, fmt.Errorf("Gather %s by index: %w", n.Name, errParam)
		}
		return gather(x, idx, n.Attrs.Int("axis", 0))
	case "CumSum":
		if x.from.data {
			return nil, fmt.Errorf("CumSum %s of a graph input's data: the mask at one key would depend on others", n.Name)
		}
		ax, err := in(1)
		if err != nil {
			return nil, err
		}
		if ax == nil || len(ax.data) != 1 {
			return nil, fmt.Errorf("CumSum %s: the axis is not a scalar", n.Name)
		}
		r, err := cumsum(x, int64(ax.data[0]), n.Attrs.Int("exclusive", 0) != 0, n.Attrs.Int("reverse", 0) != 0)
		if err != nil {
			return nil, err
		}
		r.from.index = r.from.dynamic
		return r, nil
	case "GatherND":
		idx, err := in(1)
		if err != nil {
			return nil, err
		}
		return gatherND(x, idx, n.Attrs.Int("batch_dims", 0))
	case "Slice":
		var args [4]*etensor
		for i := range args {
			if args[i], err = in(i + 1); err != nil {
				return nil, err
			}
		}
		return slice(x, args)
	case "Trilu":
		k := 0.0
		if kt, err := in(1); err != nil {
			return nil, err
		} else if kt != nil {
			if len(kt.data) != 1 {
				return nil, fmt.Errorf("Trilu %s: k is not a scalar", n.Name)
			}
			k = kt.data[0]
			if !kt.from.dynamic {
				ev.record(k, kt.from.param)
			}
		}
		return trilu(x, int64(k), n.Attrs.Int("upper", 1) != 0)
	case "Transpose":
		return transpose(x, n.Attrs.Ints("perm"))
	}
	return nil, fmt.Errorf("%s (%s) is not evaluated", n.Name, opLabel(n))
}

// constantOnly refuses an op that is neither a sum nor a comparison (a square root, a
// reciprocal, a power) of anything that depends on the binding or on a window constant:
// the soundness of probing rests on positions entering only sums and comparisons.
func constantOnly(n *graph.Node, xs ...*etensor) error {
	for _, x := range xs {
		switch {
		case x.from.param:
			return fmt.Errorf("%s %s: %w", n.OpType, n.Name, errParam)
		case x.from.dynamic:
			return fmt.Errorf("%s %s of a length or a position: %w", n.OpType, n.Name, errNonlinear)
		}
	}
	return nil
}

// knownInts is the host integer value v whose data before binding is d, which must not
// depend on a named dim.
func knownInts(v *graph.Value, d []graph.Dim) (*etensor, error) {
	t := &etensor{dt: v.DType, shape: make([]int64, len(v.Shape)), data: make([]float64, len(d))}
	for i, x := range v.Shape {
		n, ok := x.Value()
		if !ok {
			return nil, fmt.Errorf("%s has the shape %s", v.Name, v.Shape)
		}
		t.shape[i] = n
	}
	var syms []string
	for _, x := range d {
		syms = x.Syms(syms)
	}
	switch len(syms) {
	case 0:
	case 1:
		return nil, fmt.Errorf("%s = %v depends on the dim %s", v.Name, d, syms[0])
	default:
		return nil, fmt.Errorf("%s = %v depends on the dims %s", v.Name, d, strings.Join(syms, ", "))
	}
	for i, x := range d {
		n, _ := x.Value()
		t.data[i] = float64(n)
	}
	return t, nil
}

// record notes a constant that meets a length or an index.
//
// A window constant taken as the parameter (param) counts in the bound only.
func (ev *evaluator) record(v float64, param bool) {
	a := math.Abs(v)
	if a < 1<<30 {
		ev.bound = max(ev.bound, int(a))
	} else {
		ev.bound = 1 << 30
	}
	if param {
		return
	}
	if a <= maxSmall {
		ev.small = max(ev.small, int(a))
	} else if a < 1<<40 {
		if ev.large == nil {
			ev.large = map[int64]bool{}
		}
		ev.large[int64(a)] = true
	}
}

// constant evaluates a constant of the cone, its large integers taken as the parameter when
// there is one.
func (ev *evaluator) constant(h *graph.HostTensor) (*etensor, error) {
	t, err := fromHost(h)
	if err != nil || ev.par == nil || !isInt(t.dt) {
		return t, err
	}
	for i, x := range t.data {
		if a := math.Abs(x); a == math.Trunc(a) && ev.par.large[int64(a)] {
			t.data[i] = math.Copysign(float64(ev.par.w-(ev.par.p-int64(a))), x)
			t.from.param = true
		}
	}
	return t, nil
}

// errParam refuses a window constant where the argument for probing the parameter does not hold.
var errParam = errors.New("the window constant is used other than added to or compared with positions")

// binary applies a broadcasting binary op, recording the constants that meet indices.
func (ev *evaluator) binary(op string, out graph.DType, x, y *etensor) (*etensor, error) {
	if x.from.param && isInt(x.dt) || y.from.param && isInt(y.dt) {
		// the parameter's coefficient stays 1 or -1: it is added to positions, lengths and
		// constants, compared, or taken the minimum or maximum of, and scaled by 1 or -1 only
		switch op {
		case "Add", "Sub":
			if x.from.param && y.from.param {
				return nil, fmt.Errorf("%s of two window constants: %w", op, errParam)
			}
		case "Mul", "Div":
			c := y
			if y.from.param {
				c = x
			}
			if c.from.param || c.from.dynamic {
				return nil, fmt.Errorf("%s of a window constant by a position or length: %w", op, errParam)
			}
			for _, v := range c.data {
				if v != 1 && v != -1 {
					return nil, fmt.Errorf("%s of a window constant by %g: %w", op, v, errParam)
				}
			}
		case "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Min", "Max":
		default:
			return nil, fmt.Errorf("%s of a window constant: %w", op, errParam)
		}
	}
	if isInt(x.dt) && isInt(y.dt) && (x.from.dynamic || y.from.dynamic) {
		switch op {
		case "Mul", "Div":
			if op == "Mul" && x.from.data && y.from.data && !x.from.shape && !y.from.shape {
				break // a product of padding bits, their And (DeBERTa's mask of keys and queries)
			}
			if x.from.index && y.from.dynamic || y.from.index && x.from.dynamic {
				return nil, fmt.Errorf("%s of an index by a length or an index: %w", op, errNonlinear)
			}
			c := x
			if x.from.dynamic {
				c = y
			}
			if c.from.dynamic {
				break // a product of two lengths, or of a row index and a length: no position
			}
			for _, v := range c.data {
				if (x.from.index || y.from.index) && v != 1 && v != -1 {
					return nil, fmt.Errorf("%s of an index by %g: %w", op, v, errNonlinear)
				}
				ev.record(v, c.from.param) // a length scaled: its atoms' coefficients grow with it
			}
		case "Add", "Sub", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Min", "Max":
			for _, c := range []*etensor{x, y} {
				if !c.from.dynamic {
					for _, v := range c.data {
						ev.record(v, c.from.param)
					}
				}
			}
		}
	}
	shape, err := graph.BroadcastShapes(x.shape, y.shape)
	if err != nil {
		return nil, err
	}
	a, b := expand(x, shape), expand(y, shape)
	r := &etensor{dt: out, shape: shape, data: make([]float64, len(a.data)), from: x.from.or(y.from)}
	for i := range r.data {
		p, q := a.data[i], b.data[i]
		var z float64
		switch op {
		case "Add":
			z = p + q
		case "Sub":
			z = p - q
		case "Mul":
			z = p * q
		case "Div":
			if isInt(out) {
				if q == 0 {
					return nil, errors.New("integer division by zero")
				}
				z = math.Trunc(p / q)
			} else {
				z = p / q
			}
		case "And":
			z = b2f(p != 0 && q != 0)
		case "Or":
			z = b2f(p != 0 || q != 0)
		case "Xor":
			z = b2f((p != 0) != (q != 0))
		case "Equal":
			z = b2f(p == q)
		case "Less":
			z = b2f(p < q)
		case "LessOrEqual":
			z = b2f(p <= q)
		case "Greater":
			z = b2f(p > q)
		case "GreaterOrEqual":
			z = b2f(p >= q)
		case "Min":
			z = math.Min(p, q)
		case "Max":
			z = math.Max(p, q)
		case "Pow":
			z = math.Pow(p, q)
		}
		r.data[i] = z
	}
	if out == graph.Bool {
		r.from.param = false // a comparison's truth carries no multiple of the parameter
	}
	return r.round(), nil
}

func where(out graph.DType, c, a, b *etensor) (*etensor, error) {
	s1, err := graph.BroadcastShapes(c.shape, a.shape)
	if err != nil {
		return nil, err
	}
	shape, err := graph.BroadcastShapes(s1, b.shape)
	if err != nil {
		return nil, err
	}
	cc, aa, bb := expand(c, shape), expand(a, shape), expand(b, shape)
	r := &etensor{dt: out, shape: shape, data: make([]float64, len(cc.data)), from: c.from.or(a.from).or(b.from)}
	for i := range r.data {
		if cc.data[i] != 0 {
			r.data[i] = aa.data[i]
		} else {
			r.data[i] = bb.data[i]
		}
	}
	return r.round(), nil
}

func (ev *evaluator) reshaped(n *graph.Node, x *etensor) ([]int64, error) {
	r := int64(len(x.shape))
	switch n.OpType {
	case "Flatten":
		a := n.Attrs.Int("axis", 1)
		if a < 0 {
			a += r
		}
		if a < 0 || a > r {
			return nil, fmt.Errorf("Flatten axis %d", a)
		}
		p, q := int64(1), int64(1)
		for i, d := range x.shape {
			if int64(i) < a {
				p *= d
			} else {
				q *= d
			}
		}
		return []int64{p, q}, nil
	case "Reshape":
		st, err := ev.eval(n.Inputs[1])
		if err != nil {
			return nil, err
		}
		want, err := st.ints()
		if err != nil {
			return nil, err
		}
		total := int64(len(x.data))
		out := make([]int64, len(want))
		infer, known := -1, int64(1)
		for i, d := range want {
			switch {
			case d == 0 && n.Attrs.Int("allowzero", 0) == 0:
				if i >= len(x.shape) {
					return nil, errors.New("Reshape copies a dim the input lacks")
				}
				out[i] = x.shape[i]
			case d == -1:
				infer = i
				continue
			default:
				out[i] = d
			}
			known *= out[i]
		}
		if infer >= 0 {
			if known == 0 {
				return nil, errors.New("Reshape infers a dim beside a zero")
			}
			out[infer] = total / known
			known *= out[infer]
		}
		if known != total {
			return nil, fmt.Errorf("Reshape of %v to %v", x.shape, want)
		}
		return out, nil
	}
	var axes []int64
	if len(n.Inputs) > 1 && n.Inputs[1] != nil {
		a, err := ev.eval(n.Inputs[1])
		if err != nil {
			return nil, err
		}
		if axes, err = a.ints(); err != nil {
			return nil, err
		}
	} else {
		axes = n.Attrs.Ints("axes")
	}
	if n.OpType == "Unsqueeze" {
		rank := r + int64(len(axes))
		set := map[int64]bool{}
		for _, a := range axes {
			if a < 0 {
				a += rank
			}
			set[a] = true
		}
		var out []int64
		k := 0
		for i := int64(0); i < rank; i++ {
			if set[i] {
				out = append(out, 1)
			} else {
				out = append(out, x.shape[k])
				k++
			}
		}
		return out, nil
	}
	set := map[int64]bool{}
	for _, a := range axes {
		if a < 0 {
			a += r
		}
		set[a] = true
	}
	var out []int64
	for i, d := range x.shape {
		if (len(axes) == 0 && d == 1) || set[int64(i)] {
			if d != 1 {
				return nil, errors.New("Squeeze of a dim that is not 1")
			}
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

// ---------------------------------------------------------------- tensor helpers

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func clampAxis(a, r int64) int64 {
	if a < 0 {
		a += r
	}
	return min(max(a, 0), r)
}

func fromHost(h *graph.HostTensor) (*etensor, error) {
	t := &etensor{dt: h.DType, shape: append([]int64{}, h.Shape...)}
	n, err := graph.NumElements(h.Shape)
	if err != nil {
		return nil, err
	}
	if n > 1<<20 {
		return nil, fmt.Errorf("a constant of %d elements", n)
	}
	if isInt(h.DType) || h.DType == graph.Bool {
		xs, err := h.Int64s()
		if err != nil {
			return nil, err
		}
		for _, x := range xs {
			t.data = append(t.data, float64(x))
		}
		return t, nil
	}
	sz := int64(h.DType.Size())
	if sz == 0 || int64(len(h.Data)) != n*sz {
		return nil, fmt.Errorf("a %s constant of %d bytes", h.DType, len(h.Data))
	}
	for i := int64(0); i < n; i++ {
		x, ok := floatAt(h.DType, h.Data[i*sz:])
		if !ok {
			return nil, fmt.Errorf("a %s constant", h.DType)
		}
		t.data = append(t.data, x)
	}
	return t, nil
}

func (t *etensor) like(dt graph.DType) *etensor {
	return &etensor{dt: dt, shape: t.shape, data: make([]float64, len(t.data)), from: t.from}
}

func (t *etensor) cast(dt graph.DType) *etensor {
	r := t.like(dt)
	for i, x := range t.data {
		switch {
		case dt == graph.Bool:
			r.data[i] = b2f(x != 0)
		case isInt(dt):
			r.data[i] = math.Trunc(x)
		default:
			r.data[i] = x
		}
	}
	return r.round()
}

// round rounds float data to the dtype's precision (float32 for every float narrower than
// float64: masks hold 0 and a fill, which float32 rounding keeps apart).
func (t *etensor) round() *etensor {
	if isFloat(t.dt) && t.dt != graph.Float64 {
		for i, x := range t.data {
			t.data[i] = float64(float32(x))
		}
	}
	return t
}

func (t *etensor) ints() ([]int64, error) {
	if !isInt(t.dt) {
		return nil, fmt.Errorf("a %s tensor where integers are needed", t.dt)
	}
	if t.from.param {
		return nil, fmt.Errorf("a shape or an axis: %w", errParam)
	}
	out := make([]int64, len(t.data))
	for i, x := range t.data {
		out[i] = int64(x)
	}
	return out, nil
}

func filled(dt graph.DType, shape []int64, v float64) (*etensor, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return nil, fmt.Errorf("shape %v", shape)
		}
		n *= d
		if n > 1<<22 {
			return nil, fmt.Errorf("a tensor of shape %v", shape)
		}
	}
	t := &etensor{dt: dt, shape: append([]int64{}, shape...), data: make([]float64, n)}
	for i := range t.data {
		t.data[i] = v
	}
	return t.round(), nil
}

func strides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	st := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = st
		st *= shape[i]
	}
	return s
}

// expand broadcasts t to shape (which broadcastTo accepted).
func expand(t *etensor, shape []int64) *etensor {
	if slices.Equal(t.shape, shape) {
		return t
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	r := &etensor{dt: t.dt, shape: shape, data: make([]float64, n), from: t.from}
	off := len(shape) - len(t.shape)
	src := strides(t.shape)
	dst := strides(shape)
	for i := int64(0); i < n; i++ {
		k := int64(0)
		for a := off; a < len(shape); a++ {
			c := (i / dst[a]) % shape[a]
			if t.shape[a-off] != 1 {
				k += c * src[a-off]
			}
		}
		r.data[i] = t.data[k]
	}
	return r
}

func concat(ts []*etensor, axis int64) (*etensor, error) {
	r := int64(len(ts[0].shape))
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return nil, fmt.Errorf("Concat axis %d", axis)
	}
	shape := append([]int64{}, ts[0].shape...)
	shape[axis] = 0
	var dyn origin
	for _, t := range ts {
		if int64(len(t.shape)) != r {
			return nil, errors.New("Concat of different ranks")
		}
		shape[axis] += t.shape[axis]
		dyn = dyn.or(t.from)
	}
	outer := int64(1)
	for _, d := range shape[:axis] {
		outer *= d
	}
	out := &etensor{dt: ts[0].dt, shape: shape, from: dyn}
	for o := int64(0); o < outer; o++ {
		for _, t := range ts {
			inner := int64(len(t.data)) / max(outer, 1)
			out.data = append(out.data, t.data[o*inner:(o+1)*inner]...)
		}
	}
	return out, nil
}

func gather(x, idx *etensor, axis int64) (*etensor, error) {
	r := int64(len(x.shape))
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return nil, fmt.Errorf("Gather axis %d of rank %d", axis, r)
	}
	shape := append(append(append([]int64{}, x.shape[:axis]...), idx.shape...), x.shape[axis+1:]...)
	outer, inner := int64(1), int64(1)
	for _, d := range x.shape[:axis] {
		outer *= d
	}
	for _, d := range x.shape[axis+1:] {
		inner *= d
	}
	dim := x.shape[axis]
	out := &etensor{dt: x.dt, shape: shape, from: x.from.or(idx.from)}
	for o := int64(0); o < outer; o++ {
		for _, fi := range idx.data {
			i := int64(fi)
			if i < 0 {
				i += dim
			}
			if i < 0 || i >= dim {
				return nil, fmt.Errorf("Gather index %d out of %d", int64(fi), dim)
			}
			base := (o*dim + i) * inner
			out.data = append(out.data, x.data[base:base+inner]...)
		}
	}
	return out, nil
}

// cumsum is ONNX CumSum along axis.
func cumsum(x *etensor, axis int64, exclusive, reverse bool) (*etensor, error) {
	r := int64(len(x.shape))
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return nil, fmt.Errorf("CumSum axis %d of rank %d", axis, r)
	}
	out := x.like(x.dt)
	st := strides(x.shape)
	d, step := x.shape[axis], st[axis]
	for i := range x.data {
		if (int64(i)/step)%d != 0 {
			continue // the first element along the axis starts each line
		}
		sum := 0.0
		for k := int64(0); k < d; k++ {
			kk := k
			if reverse {
				kk = d - 1 - k
			}
			at := int64(i) + kk*step
			if exclusive {
				out.data[at] = sum
				sum += x.data[at]
			} else {
				sum += x.data[at]
				out.data[at] = sum
			}
		}
	}
	return out.round(), nil
}

// gatherND is ONNX GatherND: each index tuple of the last axis of idx selects a slab of x,
// after batch_dims leading axes that x and idx share.
func gatherND(x, idx *etensor, bd int64) (*etensor, error) {
	r, q := int64(len(x.shape)), int64(len(idx.shape))
	if q < 1 || bd < 0 || bd >= q || bd >= r {
		return nil, errors.New("GatherND with batch_dims beyond the ranks")
	}
	m := idx.shape[q-1]
	if bd+m > r {
		return nil, errors.New("GatherND index tuples longer than the data's rank")
	}
	batch := int64(1)
	for a := int64(0); a < bd; a++ {
		if x.shape[a] != idx.shape[a] {
			return nil, errors.New("GatherND batch dims differ")
		}
		batch *= x.shape[a]
	}
	slab := int64(1)
	for _, d := range x.shape[bd+m:] {
		slab *= d
	}
	tuples := int64(len(idx.data)) / max(m, 1) / max(batch, 1)
	shape := append(append([]int64{}, idx.shape[:q-1]...), x.shape[bd+m:]...)
	out := &etensor{dt: x.dt, shape: shape, from: x.from.or(idx.from)}
	xst := strides(x.shape)
	per := int64(len(x.data)) / max(batch, 1)
	for b := int64(0); b < batch; b++ {
		for k := int64(0); k < tuples; k++ {
			base := b * per
			for a := int64(0); a < m; a++ {
				i := int64(idx.data[(b*tuples+k)*m+a])
				d := x.shape[bd+a]
				if i < 0 {
					i += d
				}
				if i < 0 || i >= d {
					return nil, fmt.Errorf("GatherND index %d out of %d", i, d)
				}
				base += i * xst[bd+a]
			}
			out.data = append(out.data, x.data[base:base+slab]...)
		}
	}
	return out, nil
}

func slice(x *etensor, args [4]*etensor) (*etensor, error) {
	if args[0] == nil || args[1] == nil {
		return nil, errors.New("Slice without starts and ends inputs")
	}
	r := int64(len(x.shape))
	starts, err := args[0].ints()
	if err != nil {
		return nil, err
	}
	ends, err := args[1].ints()
	if err != nil {
		return nil, err
	}
	axes := make([]int64, len(starts))
	for i := range axes {
		axes[i] = int64(i)
	}
	if args[2] != nil {
		if axes, err = args[2].ints(); err != nil {
			return nil, err
		}
	}
	steps := make([]int64, len(starts))
	for i := range steps {
		steps[i] = 1
	}
	if args[3] != nil {
		if steps, err = args[3].ints(); err != nil {
			return nil, err
		}
	}
	lo, step := make([]int64, r), make([]int64, r)
	shape := append([]int64{}, x.shape...)
	for a := range lo {
		step[a] = 1
	}
	for k, a := range axes {
		if a < 0 {
			a += r
		}
		if a < 0 || a >= r || steps[k] != 1 {
			return nil, errors.New("Slice with an axis or step the evaluator does not take")
		}
		d := x.shape[a]
		s, e := starts[k], ends[k]
		if s < 0 {
			s += d
		}
		if e < 0 {
			e += d
		}
		s, e = min(max(s, 0), d), min(max(e, 0), d)
		lo[a] = s
		shape[a] = max(0, e-s)
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	out := &etensor{dt: x.dt, shape: shape, data: make([]float64, n), from: x.from.or(args[0].from).or(args[1].from)}
	src, dst := strides(x.shape), strides(shape)
	for i := int64(0); i < n; i++ {
		k := int64(0)
		for a := range shape {
			k += ((i/dst[a])%shape[a] + lo[a]) * src[a]
		}
		out.data[i] = x.data[k]
	}
	return out, nil
}

func trilu(x *etensor, k int64, upper bool) (*etensor, error) {
	r := len(x.shape)
	if r < 2 {
		return nil, errors.New("Trilu of rank < 2")
	}
	rows, cols := x.shape[r-2], x.shape[r-1]
	out := x.like(x.dt)
	for i := range x.data {
		c := int64(i) % cols
		row := (int64(i) / cols) % rows
		keep := c-row >= k
		if !upper {
			keep = c-row <= k
		}
		if keep {
			out.data[i] = x.data[i]
		}
	}
	return out, nil
}

func transpose(x *etensor, perm []int64) (*etensor, error) {
	r := len(x.shape)
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != r {
		return nil, errors.New("Transpose perm of the wrong length")
	}
	shape := make([]int64, r)
	for i, p := range perm {
		shape[i] = x.shape[p]
	}
	out := x.like(x.dt)
	out.shape = shape
	src, dst := strides(x.shape), strides(shape)
	for i := range out.data {
		k := int64(0)
		for a := 0; a < r; a++ {
			k += (int64(i) / dst[a] % shape[a]) * src[perm[a]]
		}
		out.data[i] = x.data[k]
	}
	return out, nil
}
