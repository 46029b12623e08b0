package generate

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/x448/float16"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Continuous batching
//
// A Batch runs many sequences on one session whose KV state holds Rows rows (sequence slots),
// reserved at load. Sequences join (Join) and leave (Leave, or at their last token) between
// steps; each Step runs every busy row together, one call of the model.
//
// It needs the shared-buffer (GenAI GroupQueryAttention) form, where a row's new keys and
// values are written in place at its own length, read from its row of the mask
// (seqlens_k = the row's ones - 1): rows of one call may have different lengths. In the concat
// form the past is one tensor whose rows share a length, and a sequence cannot join a running
// batch; NewBatch refuses it (*FormError), and callers keep a session per sequence there.
//
// A call of width S (input_ids [batch, S]) has every row write S positions, from its length
// on. Each row claims its length plus S in the mask, whatever it has to feed:
//   - a prefilling row feeds up to S tokens of its prompt (a chunk of at most Chunk), from its
//     length on, and the rest of its S positions are padding;
//   - a decoding row feeds its last token at its length (s = 0), the rest padding; its query
//     at s = 0 sees exactly its keys 0..length (causal), so it decodes as it would alone;
//   - a free row claims S from 0 and feeds padding.
//
// Padding writes keys and values past a row's length, which nothing reads before the row
// writes them again (a row's queries see only positions below their own), and a free row's
// cache is garbage that its next sequence overwrites before reading. So decoding rows ride
// along while others prefill, and no stream stalls for a joining prompt; the price is that a
// prefill step computes S positions for every row. A step is pure decode (S = 1) when no row
// prefills.
//
// Invariants, kept by Step and checked in tests:
//  1. every row's claim (length + S) is at most the context, so nothing is written outside
//     its row; where a wide step would cross the context for some row, S steps down (to 1 at
//     worst, a prefill of one token);
//  2. the mask's length is Bucket(max claim): it equals S only when every row's length is 0,
//     where GroupQueryAttention's first-prompt reading (past 0 for every row) agrees;
//  3. sequences take the lowest free row, and a call covers rows [0, bucket), the smallest
//     power of two (capped at Rows) over the highest busy row: free rows inside it are padded,
//     not compacted, since the GQA form keeps one buffer per layer for past and present and a
//     row cannot move without a copy within it;
//  4. each (batch bucket, width, mask bucket) has its inputs made once; after Warm a step plans,
//     compiles and allocates nothing.

// BatchConfig is what a batched runtime is reserved for: Rows sequences of at most Context
// positions each (prompt and new tokens), prompts fed at most Chunk tokens a step.
type BatchConfig struct {
	Rows    int64
	Context int64
	Chunk   int64 // 0 means DefaultChunk; at most the context
}

// DefaultChunk is the prompt tokens a row prefills per step when BatchConfig.Chunk is 0.
const DefaultChunk = 64

// FormError reports a cache whose form does not admit what was asked.
type FormError struct {
	Form    Form
	Problem string
}

func (e *FormError) Error() string {
	return fmt.Sprintf("generate: the %s form: %s", e.Form, e.Problem)
}

// ErrFull is Join's error when every row is busy.
var ErrFull = errors.New("generate: every row of the batch is busy")

func (c *Cache) checkBatch(bc BatchConfig) (BatchConfig, error) {
	if c.Form != SharedBuffer {
		return bc, &FormError{Form: c.Form, Problem: "rows of one batch share one length, so sequences cannot join a running batch (keep a session per sequence)"}
	}
	if bc.Chunk == 0 {
		bc.Chunk = DefaultChunk
	}
	bc.Chunk = min(bc.Chunk, bc.Context)
	if bc.Chunk < 1 {
		return bc, &ConfigError{Problem: fmt.Sprintf("prefill chunk %d: want at least 1", bc.Chunk)}
	}
	_, err := c.check(bc.config())
	return bc, err
}

// config is the Config the batch's state and extreme patterns are sized by.
func (bc BatchConfig) config() Config {
	return Config{Batch: bc.Rows, Context: bc.Context, Prompt: max(min(bc.Chunk, bc.Context-1), 1)}
}

// maxWidth is the widest step: the chunk's bucket (1 for a chunk of 1).
func (bc BatchConfig) maxWidth() int64 {
	if bc.Chunk == 1 {
		return 1
	}
	return Bucket(bc.Chunk, bc.Context)
}

// BatchEnvelope is the range of bindings a Batch with bc runs: batch buckets up to Rows, widths
// up to the chunk's bucket, masks up to the context.
func (c *Cache) BatchEnvelope(m *graph.Model, bc BatchConfig) (engine.Envelope, error) {
	bc, err := c.checkBatch(bc)
	if err != nil {
		return nil, err
	}
	env := engine.Envelope{
		c.BatchDim: {Lo: 1, Hi: bc.Rows},
		c.SeqDim:   {Lo: 1, Hi: bc.maxWidth()},
		c.PastDim:  {Lo: bc.Context, Hi: bc.Context},
		c.MaskDim:  {Lo: 1, Hi: bc.Context},
	}
	for _, d := range m.DimNames {
		if _, ok := env[d]; !ok {
			return nil, &ConfigError{Problem: fmt.Sprintf("the model has dim %q, which generation does not set (it sets %s)", d, engine.DimList(env.Names()))}
		}
	}
	return env, nil
}

// BatchRuntimeOptions completes opts for a Batch with bc: the envelope and the state buffers of
// Rows rows.
func (c *Cache) BatchRuntimeOptions(m *graph.Model, bc BatchConfig, opts engine.RuntimeOptions) (engine.RuntimeOptions, error) {
	env, err := c.BatchEnvelope(m, bc)
	if err != nil {
		return opts, err
	}
	bc, _ = c.checkBatch(bc)
	state, err := c.State(bc.config())
	if err != nil {
		return opts, err
	}
	opts.Envelope, opts.State = env, state
	opts.External = engine.HeldValues(state)
	opts.DeviceOutputs = append(opts.DeviceOutputs, c.Logits)
	if c.Greedy != "" {
		opts.DeviceOutputs = append(opts.DeviceOutputs, c.Greedy)
	}
	return opts, nil
}

// Token is one new token of a Batch's step: the row's sequence, its index among the sequence's
// new tokens (0 for the prompt's), the id, and whether it is the last (the row is free after it).
type Token struct {
	Row   int
	Index int
	ID    int64
	Last  bool
}

// Batch runs sequences on the rows of one session of a runtime made with
// Cache.BatchRuntimeOptions. It is not safe for concurrent use: one goroutine joins, steps and
// leaves.
type Batch struct {
	rt    *engine.Runtime
	s     *engine.Session
	cache *Cache
	cfg   BatchConfig

	rows    []batchRow
	busy    int
	widths  []int64 // 1, then the chunk's buckets: the widths a step runs
	steps   map[[3]int64]*stepInputs
	out     []Token   // one step's tokens, reused
	feed    []int64   // a decoding row's token, as fill takes it
	best    []int64   // greedy ids read from the device, by row
	logits  []float32 // one row's logits, for a sampler
	rowData []byte    // rows of logits read from the device, made at the first sampled step
}

type batchRow struct {
	busy   bool
	prompt []int64 // what is left of the prompt to feed
	length int64   // positions written and valid
	next   int64   // the token to feed at length, once the prompt is fed
	made   int     // new tokens so far
	max    int
	pick   Sampler
	greedy bool
}

// NewBatch makes a batch over s, a session of rt, which must have been made with
// cache.BatchRuntimeOptions for bc.
func NewBatch(rt *engine.Runtime, s *engine.Session, cache *Cache, bc BatchConfig) (*Batch, error) {
	bc, err := cache.checkBatch(bc)
	if err != nil {
		return nil, err
	}
	if rt.StateBytes() == 0 {
		return nil, &ConfigError{Problem: "the runtime holds no cache (make it with Cache.BatchRuntimeOptions)"}
	}
	b := &Batch{rt: rt, s: s, cache: cache, cfg: bc, rows: make([]batchRow, bc.Rows),
		steps: map[[3]int64]*stepInputs{}, out: make([]Token, 0, bc.Rows), best: make([]int64, bc.Rows),
		logits: make([]float32, cache.Vocab), feed: make([]int64, 1)}
	b.widths = []int64{1}
	for w := int64(1); w < bc.maxWidth(); {
		w = Bucket(w+1, bc.Context)
		b.widths = append(b.widths, w)
	}
	return b, nil
}

// Config is the configuration the batch was made for, defaults filled in.
func (b *Batch) Config() BatchConfig { return b.cfg }

// Busy is the rows that hold a sequence.
func (b *Batch) Busy() int { return b.busy }

// Positions is the positions the busy rows hold: their prompts fed so far and tokens fed back.
func (b *Batch) Positions() int64 {
	var n int64
	for i := range b.rows {
		n += b.rows[i].length
	}
	return n
}

// Join starts a sequence on the lowest free row and returns the row: prompt (which must not
// change until the sequence has left) and maxNew new tokens chosen with pick. Its tokens come
// from the steps that follow. ErrFull if every row is busy.
func (b *Batch) Join(prompt []int64, maxNew int, pick Sampler) (int, error) {
	p := int64(len(prompt))
	if p < 1 {
		return 0, &ConfigError{Problem: "an empty prompt"}
	}
	if maxNew < 1 {
		return 0, &ConfigError{Problem: fmt.Sprintf("%d new tokens: want at least 1", maxNew)}
	}
	// The last new token needs no position: p + maxNew - 1 at most the context.
	if p >= b.cfg.Context || int64(maxNew)-1 > b.cfg.Context-p {
		return 0, &ContextError{Prompt: p, New: int64(maxNew), Context: b.cfg.Context}
	}
	for i := range b.rows {
		r := &b.rows[i]
		if r.busy {
			continue
		}
		_, greedy := pick.(Greedy)
		*r = batchRow{busy: true, prompt: prompt, max: maxNew, pick: pick, greedy: greedy}
		b.busy++
		return i, nil
	}
	return 0, ErrFull
}

// Leave frees row at once (a finished or canceled sequence); a free row is left as it is.
func (b *Batch) Leave(row int) {
	if row < 0 || row >= len(b.rows) || !b.rows[row].busy {
		return
	}
	b.rows[row] = batchRow{}
	b.busy--
}

// plan is one step's shape: its batch bucket, width and mask length.
func (b *Batch) plan() (bb, w, mask int64) {
	hi, need, longest := 0, int64(0), int64(0)
	for i := range b.rows {
		r := &b.rows[i]
		if !r.busy {
			continue
		}
		hi = i + 1
		longest = max(longest, r.length)
		if len(r.prompt) > 0 {
			need = max(need, min(int64(len(r.prompt)), b.cfg.Chunk))
		}
	}
	bb = min(pow2(int64(hi)), b.cfg.Rows)
	k := 0
	for k+1 < len(b.widths) && b.widths[k] < need {
		k++
	}
	// Invariant 1: no row's claim beyond the context.
	for k > 0 && longest+b.widths[k] > b.cfg.Context {
		k--
	}
	w = b.widths[k]
	return bb, w, Bucket(longest+w, b.cfg.Context)
}

// pow2 is the smallest power of two at least n (1 for n < 1).
func pow2(n int64) int64 {
	p := int64(1)
	for p < n && p <= math.MaxInt64/2 {
		p *= 2
	}
	return p
}

// inputs returns the inputs of the pattern (batch bb, width w, mask length n), made at its
// first use.
func (b *Batch) inputs(bb, w, n int64) (*stepInputs, error) {
	key := [3]int64{bb, w, n}
	if st, ok := b.steps[key]; ok {
		return st, nil
	}
	c, m := b.cache, b.rt.Model
	st := &stepInputs{in: map[string]kernels.Tensor{}}
	mk := func(name string, shape ...int64) (kernels.Tensor, error) {
		return kernels.NewTensor(m.Value(name).DType, shape...)
	}
	var err error
	if st.ids, err = mk(c.InputIDs, bb, w); err != nil {
		return nil, err
	}
	if st.mask, err = mk(c.Mask, bb, n); err != nil {
		return nil, err
	}
	st.in[c.InputIDs], st.in[c.Mask] = st.ids, st.mask
	if c.Positions != "" {
		if st.positions, err = mk(c.Positions, bb, w); err != nil {
			return nil, err
		}
		st.in[c.Positions] = st.positions
	}
	for _, l := range c.Layers {
		shape := []int64{bb, c.KVHeads, b.cfg.Context, c.HeadDim}
		st.in[l.PastKey] = kernels.Tensor{DType: c.DType, Shape: shape}
		st.in[l.PastValue] = kernels.Tensor{DType: c.DType, Shape: shape}
	}
	b.steps[key] = st
	return st, nil
}

// fill sets row i's inputs of a step of width w and mask length n: ids (fed tokens then
// padding), the mask (its claim, length + w, of ones) and positions.
func fill(st *stepInputs, i int, w, n int64, length int64, ids []int64) {
	for s := int64(0); s < w; s++ {
		var id int64
		if s < int64(len(ids)) {
			id = ids[s]
		}
		setIndex(st.ids, int64(i)*w+s, id)
		if st.positions.Shape != nil {
			setIndex(st.positions, int64(i)*w+s, length+s)
		}
	}
	claim := length + w
	for s := int64(0); s < n; s++ {
		var on int64
		if s < claim {
			on = 1
		}
		setIndex(st.mask, int64(i)*n+s, on)
	}
}

// Step runs one step of every busy row: a chunk of each prefilling row's prompt, a token of
// each decoding row. It returns the new tokens (valid until the next step): one for each
// decoding row, and one for each row whose prompt this step finished. A row whose sequence
// made its last token is free after the step. With no busy row it runs nothing.
func (b *Batch) Step(ctx context.Context) ([]Token, error) {
	b.out = b.out[:0]
	if b.busy == 0 {
		return b.out, nil
	}
	bb, w, n := b.plan()
	st, err := b.inputs(bb, w, n)
	if err != nil {
		return nil, err
	}
	hostLogits := false
	for i := range bb {
		r := &b.rows[i]
		switch {
		case !r.busy:
			fill(st, int(i), w, n, 0, nil)
		case len(r.prompt) > 0:
			fill(st, int(i), w, n, r.length, r.prompt[:min(int64(len(r.prompt)), w, b.cfg.Chunk)])
			hostLogits = hostLogits || (len(r.prompt) <= int(min(w, b.cfg.Chunk)) && !r.greedy)
		default:
			b.feed[0] = r.next
			fill(st, int(i), w, n, r.length, b.feed)
			hostLogits = hostLogits || !r.greedy
		}
	}
	hostLogits = hostLogits || b.cache.Greedy == ""
	outs, err := b.s.Run(ctx, st.in)
	if err != nil {
		return nil, err
	}
	for i := range bb {
		r := &b.rows[i]
		if !r.busy {
			continue
		}
		pos := int64(0) // the position of the step whose logits choose the row's token
		if len(r.prompt) > 0 {
			fed := min(int64(len(r.prompt)), w, b.cfg.Chunk)
			r.prompt, r.length = r.prompt[fed:], r.length+fed
			if len(r.prompt) > 0 {
				continue // more prompt to feed: no token yet
			}
			pos = fed - 1
		} else {
			r.length++
		}
		var tok int64
		if hostLogits {
			if err := b.rowLogits(outs, int(i), w, pos); err != nil {
				return nil, err
			}
			tok = r.pick.Pick(b.logits)
		} else if tok, err = b.greedyID(outs, int(i), w, pos); err != nil {
			return nil, err
		}
		r.next = tok
		t := Token{Row: int(i), Index: r.made, ID: tok}
		r.made++
		if r.made == r.max {
			t.Last = true
			b.Leave(int(i))
		}
		b.out = append(b.out, t)
	}
	return b.out, nil
}

// output is the runtime's output named name among outs.
func (b *Batch) output(outs []kernels.Tensor, name string) kernels.Tensor {
	for i, v := range b.rt.Model.Outputs {
		if v.Name == name {
			return outs[i]
		}
	}
	return kernels.Tensor{}
}

// greedyID reads the greedy choice of row i at position pos of a step of width w.
func (b *Batch) greedyID(outs []kernels.Tensor, i int, w, pos int64) (int64, error) {
	t := b.output(outs, b.cache.Greedy)
	if t.DType != graph.Int64 {
		return 0, fmt.Errorf("generate: output %q is %v, want int64", b.cache.Greedy, t.DType)
	}
	at := int64(i)*w + pos
	if t.Data == nil && t.Addr != 0 {
		if err := b.s.CopyOut(kernels.BytesOf(b.best[i:i+1]), t.Addr.Add(at*8)); err != nil {
			return 0, err
		}
		return b.best[i], nil
	}
	return t.Int64s()[at], nil
}

// rowLogits leaves row i's logits at position pos of a step of width w in b.logits.
func (b *Batch) rowLogits(outs []kernels.Tensor, i int, w, pos int64) error {
	t := b.output(outs, b.cache.Logits)
	v := b.cache.Vocab
	at := (int64(i)*w + pos) * v
	data := t.Data
	if data == nil && t.Addr != 0 {
		row := v * t.DType.Size()
		if int64(len(b.rowData)) < row {
			b.rowData = make([]byte, row)
		}
		if err := b.s.CopyOut(b.rowData[:row], t.Addr.Add(at*t.DType.Size())); err != nil {
			return err
		}
		data, at = b.rowData[:row], 0
	}
	switch t.DType {
	case graph.Float32:
		copy(b.logits, kernels.ViewAs[float32](data)[at:at+v])
	case graph.Float16:
		for j, u := range kernels.ViewAs[uint16](data)[at : at+v] {
			b.logits[j] = float16.Frombits(u).Float32()
		}
	case graph.BFloat16:
		for j, u := range kernels.ViewAs[uint16](data)[at : at+v] {
			b.logits[j] = math.Float32frombits(uint32(u) << 16)
		}
	default:
		return errors.New("generate: logits of dtype " + t.DType.String() + " are not supported")
	}
	return nil
}

// Warm runs every pattern a step can meet, (batch bucket, width, mask bucket), once on padding,
// so that steps after it plan and compile nothing. Every row must be free; their caches are
// left as garbage, which joining sequences overwrite before reading.
func (b *Batch) Warm(ctx context.Context) error {
	if b.busy > 0 {
		return &ConfigError{Problem: fmt.Sprintf("warm-up with %d busy rows", b.busy)}
	}
	for bb := int64(1); ; bb = min(bb*2, b.cfg.Rows) {
		for _, w := range b.widths {
			for n := Bucket(w, b.cfg.Context); ; n = Bucket(n+1, b.cfg.Context) {
				st, err := b.inputs(bb, w, n)
				if err != nil {
					return err
				}
				for i := range bb {
					fill(st, int(i), w, n, 0, nil)
				}
				if _, err := b.s.Run(ctx, st.in); err != nil {
					return fmt.Errorf("warm-up of batch %d, width %d, mask %d: %w", bb, w, n, err)
				}
				if n == b.cfg.Context {
					break
				}
			}
		}
		if bb == b.cfg.Rows {
			return nil
		}
	}
}
