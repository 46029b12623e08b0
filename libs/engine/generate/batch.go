package generate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/x448/float16"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Continuous batching
//
// A Batch runs many sequences on one session whose KV state holds a row for each of Rows
// sequence slots, and one more, the prefill row, all reserved at load. Sequences join (Join)
// and leave (Leave, or at their last token) between steps.
//
// It needs the shared-buffer (GenAI GroupQueryAttention) form, where a row's new keys and
// values are written in place at its own length, read from its row of the mask
// (seqlens_k = the row's ones - 1): rows of one call may have different lengths. In the concat
// form the past is one tensor whose rows share a length, and a sequence cannot join a running
// batch; NewBatch refuses it (*FormError), and callers keep a session per sequence there.
//
// A call of width S (input_ids [batch, S]) has every row of the call write S positions from its
// length on, and a call covers rows [0, batch): the kernel cannot run a chunk of S tokens for one
// row and a single token for the others. So a Step makes up to two calls:
//   - the decode call, width 1, over rows [0, bucket), the smallest power of two (capped) over the
//     highest decoding row: each decoding row feeds its last token at its length; rows inside
//     that do not decode are padded;
//   - the prefill call, batch 1 (row 0, the prefill row alone), width the bucket of the next
//     chunk of the joining prompt (at most Chunk tokens); when the prompt is fed, the sequence's
//     first token is chosen and its keys and values are copied to its slot's row (through one
//     more row-sized buffer per layer, Session.CopyRows copying between buffers), where the next
//     decode call continues it.
//
// Joining prompts wait for the prefill row in order. A step so costs one decode position per row
// of its bucket and at most one chunk: running streams get a token every step while a prompt is
// fed, and no decode pays for a prompt's width.
//
// Invariants, kept by Step and checked in tests:
//  1. a row's claim in the mask (its length + the call's width) is at most the context, so nothing
//     is written outside its row; a chunk that would cross it is narrowed (to 1 at worst);
//  2. the mask's length is Bucket(max claim): it equals the width only when every row of the
//     call has length 0, where GroupQueryAttention's first-prompt reading (past 0) agrees;
//  3. padding writes only positions no one reads before they are written again: a padded row
//     claims its length + 1 (the prefill row: the position its next chunk writes first; a slot
//     row not decoding: position 0, which the copy after its prefill overwrites);
//  4. sequences take the lowest free slot; free rows inside a call's bucket are padded, not
//     compacted (a row cannot move within one buffer without a copy);
//  5. each (batch bucket, width, mask bucket) has its inputs made once; after Warm a step plans,
//     compiles and allocates nothing.

// BatchConfig is what a batched runtime is reserved for: Rows sequence slots of at most Context
// positions each (prompt and new tokens), prompts fed at most Chunk tokens a step.
type BatchConfig struct {
	Rows    int64
	Context int64
	Chunk   int64 // 0 means DefaultChunk; at most the context
}

// DefaultChunk is the prompt tokens a step feeds when BatchConfig.Chunk is 0.
const DefaultChunk = 64

// FormError reports a cache whose form does not admit what was asked.
type FormError struct {
	Form    Form
	Problem string
}

func (e *FormError) Error() string {
	return fmt.Sprintf("generate: the %s form: %s", e.Form, e.Problem)
}

// ErrFull is Join's error when every slot is busy.
var ErrFull = errors.New("generate: every slot of the batch is busy")

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
	if bc.Rows < 1 || bc.Rows >= engine.MaxDimValue {
		return bc, &ConfigError{Problem: fmt.Sprintf("%d slots: want 1 to %d (with the prefill row, the largest dim carve admits)", bc.Rows, engine.MaxDimValue-1)}
	}
	_, err := c.check(bc.config())
	return bc, err
}

// config is the Config the batch's state is sized by: the slots' rows and the prefill row.
func (bc BatchConfig) config() Config {
	return Config{Batch: bc.Rows + 1, Context: bc.Context, Prompt: max(min(bc.Chunk, bc.Context-1), 1)}
}

// maxWidth is the widest step: the chunk's bucket (1 for a chunk of 1).
func (bc BatchConfig) maxWidth() int64 {
	if bc.Chunk == 1 {
		return 1
	}
	return Bucket(bc.Chunk, bc.Context)
}

// BatchEnvelope is the range of bindings a Batch with bc runs: batch buckets up to the slots and
// the prefill row, widths up to the chunk's bucket, masks up to the context.
func (c *Cache) BatchEnvelope(m *graph.Model, bc BatchConfig) (engine.Envelope, error) {
	bc, err := c.checkBatch(bc)
	if err != nil {
		return nil, err
	}
	env := engine.Envelope{
		c.BatchDim: {Lo: 1, Hi: bc.Rows + 1},
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

// moveSuffix names the row-sized buffer a layer's keys or values pass through from the prefill
// row to a slot's.
const moveSuffix = ".move"

// BatchState is a Batch's state buffers for bc: per layer, the keys' and the values' buffer of
// Rows + 1 rows (State's), and a buffer of one row each that a prompt's keys and values pass
// through on their way from the prefill row to their slot's.
func (c *Cache) BatchState(bc BatchConfig) ([]engine.StateBuffer, error) {
	bc, err := c.checkBatch(bc)
	if err != nil {
		return nil, err
	}
	bufs, err := c.State(bc.config())
	if err != nil {
		return nil, err
	}
	row := c.KVHeads * bc.Context * c.HeadDim * c.DType.Size() // fits: State's buffers hold Rows+1 of it
	for _, b := range slices.Clone(bufs) {
		bufs = append(bufs, engine.StateBuffer{Name: b.Name + moveSuffix, Bytes: row})
	}
	return bufs, nil
}

// BatchRuntimeOptions completes opts for a Batch with bc: the envelope and the state buffers.
func (c *Cache) BatchRuntimeOptions(m *graph.Model, bc BatchConfig, opts engine.RuntimeOptions) (engine.RuntimeOptions, error) {
	env, err := c.BatchEnvelope(m, bc)
	if err != nil {
		return opts, err
	}
	state, err := c.BatchState(bc)
	if err != nil {
		return opts, err
	}
	return c.withState(opts, env, state), nil
}

// Token is one new token of a Batch's step: the slot of its sequence, its index among the
// sequence's new tokens (0 for the prompt's), the id, and whether it is the last (the slot is
// free after it).
type Token struct {
	Slot  int
	Index int
	ID    int64
	Last  bool
}

// Batch runs sequences on the slots of one session of a runtime made with
// Cache.BatchRuntimeOptions. It is not safe for concurrent use: one goroutine joins, steps and
// leaves.
type Batch struct {
	rt    *engine.Runtime
	s     *engine.Session
	cache *Cache
	cfg   BatchConfig

	slots  []batchSeq // slot i's sequence decodes in row i+1
	busy   int
	queue  []int    // slots waiting for the prefill row, in order of joining
	lane   int      // the slot whose prompt the prefill row holds; -1 for none
	layers []string // the layers' key and value buffers
	moves  []string // and the buffers their rows move through

	widths  []int64 // 1, then the chunk's buckets: the prefill call's widths
	steps   map[[3]int64]*stepInputs
	out     []Token   // one step's tokens, reused
	decode  []bool    // by slot: decoding at the start of the step
	feed    []int64   // a decoding row's token, as fill takes it
	best    []int64   // greedy ids read from the device, by row
	logits  []float32 // one row's logits, for a sampler
	rowData []byte    // a row of logits read from the device, made at the first sampled step
}

type batchSeq struct {
	busy   bool
	prompt []int64 // what is left of the prompt to feed
	length int64   // positions written and valid
	next   int64   // the token to feed at length, once the prompt is fed
	made   int     // new tokens so far
	max    int
	pick   Sampler
	greedy bool
}

// decoding says whether the sequence has its prompt fed and decodes in its slot's row.
func (q *batchSeq) decoding() bool { return q.busy && len(q.prompt) == 0 }

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
	state, err := cache.State(bc.config())
	if err != nil {
		return nil, err
	}
	b := &Batch{rt: rt, s: s, cache: cache, cfg: bc, slots: make([]batchSeq, bc.Rows), queue: make([]int, 0, bc.Rows), lane: -1,
		steps: map[[3]int64]*stepInputs{}, out: make([]Token, 0, bc.Rows), decode: make([]bool, bc.Rows),
		best: make([]int64, bc.Rows+1), logits: make([]float32, cache.Vocab), feed: make([]int64, 1)}
	for _, buf := range state {
		b.layers, b.moves = append(b.layers, buf.Name), append(b.moves, buf.Name+moveSuffix)
	}
	b.widths = []int64{1}
	for w := int64(1); w < bc.maxWidth(); {
		w = Bucket(w+1, bc.Context)
		b.widths = append(b.widths, w)
	}
	return b, nil
}

// Config is the configuration the batch was made for, defaults filled in.
func (b *Batch) Config() BatchConfig { return b.cfg }

// Busy is the slots that hold a sequence.
func (b *Batch) Busy() int { return b.busy }

// Positions is the positions the busy slots' sequences hold: their prompts fed so far and the
// tokens fed back.
func (b *Batch) Positions() int64 {
	var n int64
	for i := range b.slots {
		n += b.slots[i].length
	}
	return n
}

// Join starts a sequence on the lowest free slot and returns the slot: prompt (which must not
// change until the sequence has left) and maxNew new tokens chosen with pick. Its prompt waits
// for the prefill row behind those that joined before; its tokens come from the steps that
// follow. ErrFull if every slot is busy.
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
	for i := range b.slots {
		q := &b.slots[i]
		if q.busy {
			continue
		}
		_, greedy := pick.(Greedy)
		*q = batchSeq{busy: true, prompt: prompt, max: maxNew, pick: pick, greedy: greedy}
		b.busy++
		b.queue = append(b.queue, i)
		return i, nil
	}
	return 0, ErrFull
}

// Leave frees slot at once (a finished or canceled sequence); a free slot is left as it is.
func (b *Batch) Leave(slot int) {
	if slot < 0 || slot >= len(b.slots) || !b.slots[slot].busy {
		return
	}
	if b.lane == slot {
		b.lane = -1
	}
	if i := slices.Index(b.queue, slot); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
	}
	b.slots[slot] = batchSeq{}
	b.busy--
}

// pow2 is the smallest power of two at least n (1 for n < 1).
func pow2(n int64) int64 {
	p := int64(1)
	for p < n && p <= math.MaxInt64/2 {
		p *= 2
	}
	return p
}

// decodePlan is the decode call's batch bucket and mask length (bb 0: no slot decodes).
func (b *Batch) decodePlan() (bb, n int64) {
	hi, longest := int64(0), int64(0)
	for i := range b.slots {
		if b.slots[i].decoding() {
			hi = int64(i) + 2 // slot i is row i+1
			longest = max(longest, b.slots[i].length)
		}
	}
	if hi == 0 {
		return 0, 0
	}
	if b.lane >= 0 {
		longest = max(longest, b.slots[b.lane].length) // the prefill row's padding claim
	}
	return min(pow2(hi), b.cfg.Rows+1), Bucket(longest+1, b.cfg.Context)
}

// prefillPlan is the prefill call's width and mask length, and the prompt tokens it feeds, for a
// prompt with left tokens to feed after length.
func (b *Batch) prefillPlan(length, left int64) (w, n, fed int64) {
	need := min(left, b.cfg.Chunk)
	k := 0
	for k+1 < len(b.widths) && b.widths[k] < need {
		k++
	}
	// Invariant 1: the claim stays inside the context.
	for k > 0 && length+b.widths[k] > b.cfg.Context {
		k--
	}
	w = b.widths[k]
	return w, Bucket(length+w, b.cfg.Context), min(need, w)
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

// fill sets row i's inputs of a call of width w and mask length n: ids (the tokens fed, then
// padding), the mask (its claim, length + w, of ones) and positions.
func fill(st *stepInputs, i, w, n, length int64, ids []int64) {
	for s := int64(0); s < w; s++ {
		var id int64
		if s < int64(len(ids)) {
			id = ids[s]
		}
		setIndex(st.ids, i*w+s, id)
		if st.positions.Shape != nil {
			setIndex(st.positions, i*w+s, length+s)
		}
	}
	claim := length + w
	for s := int64(0); s < n; s++ {
		var on int64
		if s < claim {
			on = 1
		}
		setIndex(st.mask, i*n+s, on)
	}
}

// Step runs one step: a token of every decoding sequence (the decode call), then a chunk of the
// prompt in the prefill row (the prefill call), the next waiting prompt taking the row if it is
// free. It returns the new tokens (valid until the next step): one for each sequence that
// decoded, and one for a prompt this step finished. A sequence that made its last token is
// free after the step. With no busy slot it runs nothing.
func (b *Batch) Step(ctx context.Context) ([]Token, error) {
	b.out = b.out[:0]
	if b.lane < 0 && len(b.queue) > 0 {
		b.lane = b.queue[0]
		b.queue = slices.Delete(b.queue, 0, 1)
	}
	if bb, n := b.decodePlan(); bb > 0 {
		if err := b.decodeCall(ctx, bb, n); err != nil {
			return nil, err
		}
	}
	if b.lane >= 0 {
		if err := b.prefillCall(ctx); err != nil {
			return nil, err
		}
	}
	return b.out, nil
}

// decodeCall runs rows [0, bb) with width 1 and mask length n: each decoding slot's last token;
// the prefill row and the other slots' rows padded (invariant 3).
func (b *Batch) decodeCall(ctx context.Context, bb, n int64) error {
	st, err := b.inputs(bb, 1, n)
	if err != nil {
		return err
	}
	hostLogits := b.cache.Greedy == ""
	var lane int64
	if b.lane >= 0 {
		lane = b.slots[b.lane].length
	}
	fill(st, 0, 1, n, lane, nil)
	for row := int64(1); row < bb; row++ {
		q := &b.slots[row-1]
		b.decode[row-1] = q.decoding()
		if !q.decoding() {
			fill(st, row, 1, n, 0, nil)
			continue
		}
		b.feed[0] = q.next
		fill(st, row, 1, n, q.length, b.feed)
		hostLogits = hostLogits || !q.greedy
	}
	outs, err := b.s.Run(ctx, st.in)
	if err != nil {
		return err
	}
	for row := int64(1); row < bb; row++ {
		if !b.decode[row-1] {
			continue
		}
		q := &b.slots[row-1]
		q.length++
		if err := b.choose(outs, int(row-1), row, 1, 0, hostLogits); err != nil {
			return err
		}
	}
	return nil
}

// prefillCall feeds the next chunk of the prefill row's prompt; when the prompt is fed it
// chooses the first token and moves the keys and values to the slot's row.
func (b *Batch) prefillCall(ctx context.Context) error {
	slot := b.lane
	q := &b.slots[slot]
	w, n, fed := b.prefillPlan(q.length, int64(len(q.prompt)))
	st, err := b.inputs(1, w, n)
	if err != nil {
		return err
	}
	fill(st, 0, w, n, q.length, q.prompt[:fed])
	outs, err := b.s.Run(ctx, st.in)
	if err != nil {
		return err
	}
	q.prompt, q.length = q.prompt[fed:], q.length+fed
	if len(q.prompt) > 0 {
		return nil // more to feed: no token yet
	}
	b.lane = -1
	if err := b.move(slot, q.length); err != nil {
		return err
	}
	return b.choose(outs, slot, 0, w, fed-1, b.cache.Greedy == "" || !q.greedy)
}

// move copies the first length positions of every layer's keys and values from the prefill row
// to slot's row, through the layer's move buffer.
func (b *Batch) move(slot int, length int64) error {
	c := b.cache
	pos := c.HeadDim * c.DType.Size()
	pitch := b.cfg.Context * pos
	row := c.KVHeads * pitch
	for i, buf := range b.layers {
		heads := engine.Rows{Buffer: buf, Pitch: pitch, Width: length * pos, Count: c.KVHeads}
		through := heads
		through.Buffer = b.moves[i]
		if err := b.s.CopyRows(through, heads); err != nil {
			return err
		}
		heads.Offset = int64(slot+1) * row
		if err := b.s.CopyRows(heads, through); err != nil {
			return err
		}
	}
	return nil
}

// choose picks slot's next token from row's position pos of a call of width w, and hands it on.
func (b *Batch) choose(outs []kernels.Tensor, slot int, row, w, pos int64, hostLogits bool) error {
	q := &b.slots[slot]
	var tok int64
	var err error
	if hostLogits {
		if err := b.rowLogits(outs, row, w, pos); err != nil {
			return err
		}
		tok = q.pick.Pick(b.logits)
	} else if tok, err = b.greedyID(outs, row, w, pos); err != nil {
		return err
	}
	q.next = tok
	t := Token{Slot: slot, Index: q.made, ID: tok}
	q.made++
	if q.made == q.max {
		t.Last = true
		b.Leave(slot)
	}
	b.out = append(b.out, t)
	return nil
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

// greedyID reads the greedy choice of row at position pos of a call of width w.
func (b *Batch) greedyID(outs []kernels.Tensor, row, w, pos int64) (int64, error) {
	t := b.output(outs, b.cache.Greedy)
	if t.DType != graph.Int64 {
		return 0, fmt.Errorf("generate: output %q is %v, want int64", b.cache.Greedy, t.DType)
	}
	at := row*w + pos
	if t.Data == nil && t.Addr != 0 {
		if err := b.s.CopyOut(kernels.BytesOf(b.best[row:row+1]), t.Addr.Add(at*8)); err != nil {
			return 0, err
		}
		return b.best[row], nil
	}
	return t.Int64s()[at], nil
}

// rowLogits leaves row's logits at position pos of a call of width w in b.logits.
func (b *Batch) rowLogits(outs []kernels.Tensor, row, w, pos int64) error {
	t := b.output(outs, b.cache.Logits)
	v := b.cache.Vocab
	at := (row*w + pos) * v
	data := t.Data
	if data == nil && t.Addr != 0 {
		size := v * t.DType.Size()
		if int64(len(b.rowData)) < size {
			b.rowData = make([]byte, size)
		}
		if err := b.s.CopyOut(b.rowData[:size], t.Addr.Add(at*t.DType.Size())); err != nil {
			return err
		}
		data, at = b.rowData[:size], 0
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

// Warm runs every pattern a step can meet once on padding: the decode call's (each batch bucket,
// width 1, each mask bucket) and the prefill call's (batch 1, each width, each mask bucket from
// the width's), so that steps after it plan and compile nothing. Every slot must be free; the
// rows are left as garbage, which joining sequences overwrite before reading.
func (b *Batch) Warm(ctx context.Context) error {
	if b.busy > 0 {
		return &ConfigError{Problem: fmt.Sprintf("warm-up with %d busy slots", b.busy)}
	}
	run := func(bb, w int64) error {
		for n := Bucket(w, b.cfg.Context); ; n = Bucket(n+1, b.cfg.Context) {
			st, err := b.inputs(bb, w, n)
			if err != nil {
				return err
			}
			for i := range bb {
				fill(st, i, w, n, 0, nil)
			}
			if _, err := b.s.Run(ctx, st.in); err != nil {
				return fmt.Errorf("warm-up of batch %d, width %d, mask %d: %w", bb, w, n, err)
			}
			if n == b.cfg.Context {
				return nil
			}
		}
	}
	for _, w := range b.widths {
		if err := run(1, w); err != nil {
			return err
		}
	}
	for bb := int64(2); ; bb = min(bb*2, b.cfg.Rows+1) {
		if err := run(bb, 1); err != nil {
			return err
		}
		if bb == b.cfg.Rows+1 {
			return nil
		}
	}
}
