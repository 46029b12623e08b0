package generate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/x448/float16"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Generator generates tokens on one session of a runtime made with Cache.RuntimeOptions. It is
// not safe for concurrent use; use one Generator per session.
//
// After the first generation has met every bucket it uses, a step plans nothing, compiles
// nothing and allocates nothing: each bucket's inputs are made once and refilled in place.
type Generator struct {
	rt    *engine.Runtime
	s     *engine.Session
	cache *Cache
	cfg   Config
	slots int64

	steps  map[[2]int64]*stepInputs // by (new positions, past or mask length)
	logits []float32                // one step's chosen rows, [batch, vocab]
	rows   []byte                   // those rows as the model's dtype, read from the device
	best   []int64                  // each row's greedy choice, found while logits are filled
	// hostLogits: the generation reads logits to the host (takeLogits); otherwise only the
	// greedy choices (takeGreedy).
	hostLogits bool
	tokens     []int64 // one step's new tokens, [batch]

	// Concat form: positions of the past buffer in use (the masked first one included), and
	// the positions per row of its current layout.
	used, layout int64
	row          int64          // bytes of one position of one head
	buffers      [][2][2]string // by layer, key/value, past/present: the state buffers' names
}

type stepInputs struct {
	in                   map[string]kernels.Tensor
	ids, mask, positions kernels.Tensor
}

// ContextError reports a generation that does not fit the context the runtime was reserved for.
type ContextError struct {
	Prompt, New, Context int64
}

func (e *ContextError) Error() string {
	need := "more positions than an int64 counts"
	if n, ok := graph.CheckedAdd(e.Prompt, e.New); ok {
		need = fmt.Sprintf("%d positions", n)
	}
	return fmt.Sprintf("generate: a prompt of %d positions and %d new tokens need %s, more than the context of %d",
		e.Prompt, e.New, need, e.Context)
}

// New makes a generator over s, a session of rt, which must have been made with
// cache.RuntimeOptions for cfg.
func New(rt *engine.Runtime, s *engine.Session, cache *Cache, cfg Config) (*Generator, error) {
	cfg, err := cache.check(cfg)
	if err != nil {
		return nil, err
	}
	if rt.StateBytes() == 0 {
		return nil, &ConfigError{Problem: "the runtime holds no cache (make it with Cache.RuntimeOptions)"}
	}
	g := &Generator{rt: rt, s: s, cache: cache, cfg: cfg, slots: cache.slots(cfg),
		steps: map[[2]int64]*stepInputs{}, logits: make([]float32, cfg.Batch*cache.Vocab),
		tokens: make([]int64, cfg.Batch), best: make([]int64, cfg.Batch), row: cache.HeadDim * cache.DType.Size()}
	state, err := cache.State(cfg)
	if err != nil {
		return nil, err
	}
	if cache.Form == Concat {
		// State lists, per layer, the keys' past and present, then the values'.
		for i := 0; i+3 < len(state); i += 4 {
			g.buffers = append(g.buffers, [2][2]string{{state[i].Name, state[i+1].Name}, {state[i+2].Name, state[i+3].Name}})
		}
	}
	return g, nil
}

const (
	past    = 0
	present = 1
)

// Timing is one generation's clock: the prompt's run and first token, then each decode step.
type Timing struct {
	FirstToken time.Duration
	Steps      []time.Duration
}

// Step is what a generation reports after each new token: its index (0 for the prompt's), the
// new tokens [batch] and the logits that chose them [batch, vocab], valid until the next step
// (nil when a greedy generation leaves them on the device: Config.Logits).
type Step struct {
	Index  int
	Tokens []int64
	Logits []float32
}

// Generate runs the prompt (batch rows of promptLen token ids, row-major) and maxNew-1 decode
// steps, choosing each new token with pick, and returns the new tokens [batch, maxNew] and the
// timing. each, if not nil, sees every step; an error from it stops the generation.
func (g *Generator) Generate(ctx context.Context, prompt []int64, promptLen int64, maxNew int, pick Sampler, each func(Step) error) ([]int64, Timing, error) {
	c, cfg := g.cache, g.cfg
	var tm Timing
	if promptLen < 1 || int64(len(prompt)) != cfg.Batch*promptLen {
		return nil, tm, &ConfigError{Problem: fmt.Sprintf("prompt of %d ids is not %d rows of %d", len(prompt), cfg.Batch, promptLen)}
	}
	if maxNew < 1 {
		return nil, tm, &ConfigError{Problem: fmt.Sprintf("%d new tokens: want at least 1", maxNew)}
	}
	// The last new token needs no position: promptLen + maxNew - 1 at most the context, written
	// so that no maxNew overflows (promptLen is at most cfg.Prompt, below the context).
	if promptLen > cfg.Prompt || int64(maxNew)-1 > cfg.Context-promptLen {
		return nil, tm, &ContextError{Prompt: promptLen, New: int64(maxNew), Context: cfg.Context}
	}
	out := make([]int64, cfg.Batch*int64(maxNew))
	tm.Steps = make([]time.Duration, 0, maxNew-1)
	_, greedy := pick.(Greedy)
	g.hostLogits = cfg.Logits || !greedy || c.Greedy == ""
	var logits []float32
	if g.hostLogits {
		logits = g.logits
	}
	start := time.Now()
	if err := g.prefill(ctx, prompt, promptLen); err != nil {
		return nil, tm, err
	}
	for step := 0; step < maxNew; step++ {
		if step > 0 {
			start = time.Now()
			if err := g.decode(ctx, promptLen+int64(step)-1); err != nil {
				return nil, tm, err
			}
		}
		for b := range g.tokens {
			if greedy {
				g.tokens[b] = g.best[b] // Greedy's choice, made in the same pass as the conversion
			} else {
				g.tokens[b] = pick.Pick(g.logits[int64(b)*c.Vocab : int64(b+1)*c.Vocab])
			}
			out[int64(b)*int64(maxNew)+int64(step)] = g.tokens[b]
		}
		if step == 0 {
			tm.FirstToken = time.Since(start)
		} else {
			tm.Steps = append(tm.Steps, time.Since(start))
		}
		if each != nil {
			if err := each(Step{Index: step, Tokens: g.tokens, Logits: logits}); err != nil {
				return nil, tm, err
			}
		}
	}
	return out, tm, nil
}

// inputs returns the inputs of the pattern with seq new positions and a past (or mask) of
// length n, made at its first use.
func (g *Generator) inputs(seq, n int64) (*stepInputs, error) {
	key := [2]int64{seq, n}
	if st, ok := g.steps[key]; ok {
		return st, nil
	}
	c, b := g.cache, g.cfg.Batch
	m := g.rt.Model
	st := &stepInputs{in: map[string]kernels.Tensor{}}
	var err error
	mk := func(name string, shape ...int64) (kernels.Tensor, error) {
		v := m.Value(name)
		return kernels.NewTensor(v.DType, shape...)
	}
	if st.ids, err = mk(c.InputIDs, b, seq); err != nil {
		return nil, err
	}
	maskLen := n
	if c.Form == Concat {
		maskLen = n + seq
	}
	if st.mask, err = mk(c.Mask, b, maskLen); err != nil {
		return nil, err
	}
	st.in[c.InputIDs], st.in[c.Mask] = st.ids, st.mask
	if c.Positions != "" {
		if st.positions, err = mk(c.Positions, b, seq); err != nil {
			return nil, err
		}
		st.in[c.Positions] = st.positions
	}
	past := n
	if c.Form == SharedBuffer {
		past = g.slots
	}
	for _, l := range c.Layers {
		shape := []int64{b, c.KVHeads, past, c.HeadDim}
		st.in[l.PastKey] = kernels.Tensor{DType: c.DType, Shape: shape}
		st.in[l.PastValue] = kernels.Tensor{DType: c.DType, Shape: shape}
	}
	g.steps[key] = st
	return st, nil
}

// prefill runs the prompt, right-padded to its bucket, and leaves the last prompt position's
// logits in g.logits.
func (g *Generator) prefill(ctx context.Context, prompt []int64, p int64) error {
	c, b := g.cache, g.cfg.Batch
	seq := Bucket(p, g.cfg.Context)
	n := int64(1) // the concat form's past: its masked first position
	if c.Form == SharedBuffer {
		n = seq // the mask covers the prompt
	}
	st, err := g.inputs(seq, n)
	if err != nil {
		return err
	}
	for i := int64(0); i < b; i++ {
		for s := int64(0); s < seq; s++ {
			var id, on int64
			if s < p {
				id, on = prompt[i*p+s], 1
			}
			setIndex(st.ids, i*seq+s, id)
			if c.Form == Concat {
				setIndex(st.mask, i*(seq+1)+1+s, on)
			} else {
				setIndex(st.mask, i*seq+s, on)
			}
			if c.Positions != "" {
				setIndex(st.positions, i*seq+s, s)
			}
		}
		if c.Form == Concat {
			setIndex(st.mask, i*(seq+1), 0)
		}
	}
	outs, err := g.s.Run(ctx, st.in)
	if err != nil {
		return err
	}
	if err := g.take(outs, seq, p-1); err != nil {
		return err
	}
	if c.Form == Concat {
		// The prompt's keys and values are the present's first 1+p positions (laid out for 1+seq);
		// lay them out for the first decode bucket.
		g.used = 1 + p
		g.layout = Bucket(g.used+1, g.slots)
		return g.copyLayers(past, g.layout, 0, present, 1+seq, 0, g.used)
	}
	return nil
}

// decode runs one new token per sequence (g.tokens) at position pos and leaves its logits in
// g.logits.
func (g *Generator) decode(ctx context.Context, pos int64) error {
	c, b := g.cache, g.cfg.Batch
	var st *stepInputs
	var err error
	switch c.Form {
	case Concat:
		if g.used+1 > g.layout {
			next := Bucket(g.used+1, g.slots)
			if g.used+1 > next {
				return &ContextError{Prompt: pos, New: 1, Context: g.cfg.Context}
			}
			// Lay the past out again for the larger bucket, through the present buffer.
			if err := g.copyLayers(present, next, 0, past, g.layout, 0, g.used); err != nil {
				return err
			}
			if err := g.copyLayers(past, next, 0, present, next, 0, g.used); err != nil {
				return err
			}
			g.layout = next
		}
		n := g.layout
		if st, err = g.inputs(1, n); err != nil {
			return err
		}
		for i := int64(0); i < b; i++ {
			setIndex(st.ids, i, g.tokens[i])
			setIndex(st.positions, i, pos)
			row := i * (n + 1)
			for s := int64(0); s <= n; s++ {
				var on int64
				if (s >= 1 && s < g.used) || s == n {
					on = 1
				}
				setIndex(st.mask, row+s, on)
			}
		}
	case SharedBuffer:
		if pos+1 > g.slots {
			return &ContextError{Prompt: pos, New: 1, Context: g.cfg.Context}
		}
		n := Bucket(pos+1, g.slots)
		if st, err = g.inputs(1, n); err != nil {
			return err
		}
		for i := int64(0); i < b; i++ {
			setIndex(st.ids, i, g.tokens[i])
			if c.Positions != "" {
				setIndex(st.positions, i, pos)
			}
			for s := int64(0); s < n; s++ {
				var on int64
				if s <= pos {
					on = 1
				}
				setIndex(st.mask, i*n+s, on)
			}
		}
	}
	outs, err := g.s.Run(ctx, st.in)
	if err != nil {
		return err
	}
	if err := g.take(outs, 1, 0); err != nil {
		return err
	}
	if c.Form == Concat {
		// The new position is the present's last; it joins the past at g.used.
		if err := g.copyLayers(past, g.layout, g.used, present, g.layout+1, g.layout, 1); err != nil {
			return err
		}
		g.used++
	}
	return nil
}

// copyLayers copies count positions of every layer's keys and values, from the src buffers
// (past or present), laid out with srcLayout positions per head and starting at position srcAt,
// to the dst buffers laid out with dstLayout positions from position dstAt.
func (g *Generator) copyLayers(dst int, dstLayout, dstAt int64, src int, srcLayout, srcAt, count int64) error {
	rows := g.cfg.Batch * g.cache.KVHeads
	for _, layer := range g.buffers {
		for _, kv := range layer {
			err := g.s.CopyRows(
				engine.Rows{Buffer: kv[dst], Offset: dstAt * g.row, Pitch: dstLayout * g.row, Width: count * g.row, Count: rows},
				engine.Rows{Buffer: kv[src], Offset: srcAt * g.row, Pitch: srcLayout * g.row, Width: count * g.row, Count: rows})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// take leaves each sequence's choice at position pos (of seq positions) in g.best, and its
// logits in g.logits when the generation reads them.
func (g *Generator) take(outs []kernels.Tensor, seq, pos int64) error {
	if g.hostLogits {
		return g.takeLogits(outs, seq, pos)
	}
	return g.takeGreedy(outs, seq, pos)
}

// takeGreedy copies each sequence's greedy choice at position pos (of seq positions) from the
// Greedy output into g.best.
func (g *Generator) takeGreedy(outs []kernels.Tensor, seq, pos int64) error {
	t := g.output(outs, g.cache.Greedy)
	if t.DType != graph.Int64 {
		return fmt.Errorf("generate: output %q is %v, want int64", g.cache.Greedy, t.DType)
	}
	if t.Data == nil && t.Addr != 0 {
		// Left on the device (RuntimeOptions.DeviceOutputs): read the chosen ids only.
		return g.readChosen(kernels.BytesOf(g.best), t, 8, seq, pos)
	}
	ids := t.Int64s()
	for b := int64(0); b < g.cfg.Batch; b++ {
		g.best[b] = ids[b*seq+pos]
	}
	return nil
}

// readChosen copies position pos (of seq positions) of each sequence's rows of row bytes in t, an
// output left on the device, into dst ([batch] rows): one copy when they are contiguous (a decode
// step), one per sequence otherwise (a prompt).
func (g *Generator) readChosen(dst []byte, t kernels.Tensor, row, seq, pos int64) error {
	if seq == 1 {
		return g.s.CopyOut(dst[:g.cfg.Batch*row], t.Addr.Add(pos*row))
	}
	for b := int64(0); b < g.cfg.Batch; b++ {
		if err := g.s.CopyOut(dst[b*row:(b+1)*row], t.Addr.Add((b*seq+pos)*row)); err != nil {
			return err
		}
	}
	return nil
}

// output is the runtime's output named name among outs.
func (g *Generator) output(outs []kernels.Tensor, name string) kernels.Tensor {
	for i, v := range g.rt.Model.Outputs {
		if v.Name == name {
			return outs[i]
		}
	}
	return kernels.Tensor{}
}

// takeLogits copies position pos of each sequence's logits (of seq positions) into g.logits as
// float32, and each row's greedy choice (Greedy.Pick's) into g.best: one pass over the logits,
// which at a large vocabulary and batch is most of a step's host time.
func (g *Generator) takeLogits(outs []kernels.Tensor, seq, pos int64) error {
	c := g.cache
	t := g.output(outs, c.Logits)
	v := c.Vocab
	if t.Data == nil && t.Addr != 0 {
		// Left on the device (RuntimeOptions.DeviceOutputs): read the chosen rows only, one copy
		// when they are contiguous (a decode step), one per sequence otherwise (a prompt).
		row := v * t.DType.Size()
		if cap(g.rows) < int(g.cfg.Batch*row) {
			g.rows = make([]byte, g.cfg.Batch*row)
		}
		rows := g.rows[:g.cfg.Batch*row]
		if err := g.readChosen(rows, t, row, seq, pos); err != nil {
			return err
		}
		t.Data, seq, pos = rows, 1, 0
	}
	for b := int64(0); b < g.cfg.Batch; b++ {
		at := (b*seq + pos) * v
		dst := g.logits[b*v : (b+1)*v]
		switch t.DType {
		case graph.Float32:
			copy(dst, t.Float32s()[at:at+v])
			g.best[b] = Greedy{}.Pick(dst)
		case graph.Float16:
			src := t.Uint16s()[at : at+v]
			dst = dst[:len(src)]
			best, top := 0, float32(0)
			for j, u := range src {
				x := float16.Frombits(u).Float32()
				dst[j] = x
				if j == 0 || x > top {
					best, top = j, x
				}
			}
			g.best[b] = int64(best)
		case graph.BFloat16:
			src := t.Uint16s()[at : at+v]
			dst = dst[:len(src)]
			best, top := 0, float32(0)
			for j, u := range src {
				x := math.Float32frombits(uint32(u) << 16)
				dst[j] = x
				if j == 0 || x > top {
					best, top = j, x
				}
			}
			g.best[b] = int64(best)
		default:
			return errors.New("generate: logits of dtype " + t.DType.String() + " are not supported")
		}
	}
	return nil
}

// setIndex stores v at element i of an int64 or int32 tensor.
func setIndex(t kernels.Tensor, i, v int64) {
	if t.DType == graph.Int32 {
		t.Int32s()[i] = int32(v)
		return
	}
	t.Int64s()[i] = v
}
