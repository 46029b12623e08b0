package generate

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/graph/testmodels/zoo"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
	"carve.dev/libs/kernels/sim"
)

// fixture finds a model among the fixtures and the zoo's.
func fixture(t *testing.T, name string) testmodels.Model {
	t.Helper()
	for _, fx := range append(testmodels.Models(), zoo.Models()...) {
		if fx.Name == name {
			return fx
		}
	}
	t.Fatalf("no fixture %q", name)
	return testmodels.Model{}
}

// batchOn is a Batch of bc on the CPU over fixture name, with a Generator of batch 1 on a
// runtime of its own for reference.
type batchOn struct {
	b   *Batch
	rt  *engine.Runtime
	ref *Generator
	c   *Cache
}

func openBatch(t *testing.T, name string, bc BatchConfig, graphs bool) *batchOn {
	return openBatchOn(t, "cpu", name, bc, graphs)
}

// batchBackends open the devices openBatchOn runs on: "cpu", "sim" (the simulated discrete
// device, whose outputs stay on the device and are read a row at a time) and, in a cuda build,
// "cuda" (cuda_test.go).
var batchBackends = map[string]func() (kernels.Backend, error){
	"cpu": func() (kernels.Backend, error) { return cpu.Open(kernels.OpenOptions{Memory: 1 << 30, Workers: 2}) },
	"sim": func() (kernels.Backend, error) { return sim.Open(kernels.OpenOptions{Memory: 1 << 30, Workers: 2}) },
}

// openBatchOn is openBatch on a device of batchBackends.
func openBatchOn(t *testing.T, device, name string, bc BatchConfig, graphs bool) *batchOn {
	t.Helper()
	loaded, err := graph.Load(fixture(t, name).WriteTemp(t))
	require.NoError(t, err)
	t.Cleanup(func() { loaded.Close() })
	m, c, err := Prepare(loaded, Names{})
	require.NoError(t, err)
	open, ok := batchBackends[device]
	require.True(t, ok, "device %s", device)
	be, err := open()
	require.NoError(t, err)
	al, err := alloc.New(be.Device(), alloc.Options{})
	require.NoError(t, err)
	ro, err := c.BatchRuntimeOptions(m, bc, engine.RuntimeOptions{Options: engine.Options{Workers: 2}, Graphs: graphs})
	require.NoError(t, err)
	rt, err := engine.NewRuntime(context.Background(), m, be, al, ro)
	require.NoError(t, err)
	s, err := rt.NewSession()
	require.NoError(t, err)
	b, err := NewBatch(rt, s, c, bc)
	require.NoError(t, err)

	cfg := Config{Batch: 1, Context: bc.Context}
	rro, err := c.RuntimeOptions(m, cfg, engine.RuntimeOptions{Options: engine.Options{Workers: 2}})
	require.NoError(t, err)
	rrt, err := engine.NewRuntime(context.Background(), m, be, al, rro)
	require.NoError(t, err)
	rs, err := rrt.NewSession()
	require.NoError(t, err)
	ref, err := New(rrt, rs, c, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, rs.Close())
		require.NoError(t, rrt.Close())
		require.NoError(t, s.Close())
		require.NoError(t, rt.Close())
		require.NoError(t, al.Close())
		require.NoError(t, be.Close())
	})
	return &batchOn{b: b, rt: rt, ref: ref, c: c}
}

// arrival is a sequence of a schedule: it joins at step At (or at the first step after with a
// free row), and leaves after Cancel tokens when Cancel > 0.
type arrival struct {
	Prompt []int64
	New    int
	At     int
	Cancel int
	Seed   uint64 // > 0: sampled with TopK(8, 0.9, Seed)
}

func (a arrival) sampler() Sampler {
	if a.Seed > 0 {
		return NewTopK(8, 0.9, a.Seed)
	}
	return Greedy{}
}

// prompt is n ids below vocab, different for each seed.
func prompt(n int, seed, vocab int64) []int64 {
	p := make([]int64, n)
	for i := range p {
		p[i] = (seed*31 + int64(i)*17 + int64(i*i)) % vocab
	}
	return p
}

// runSchedule runs the arrivals on the batch and returns each one's tokens, checking the
// batch's invariants at every step: the lowest free slot is taken, busy slots are counted, a
// token's slot is the sequence's, and every sequence decoding at a step's start gets its token
// in the step, whatever prompt is fed beside it. It also counts the steps that feed a prompt
// while others decode.
func runSchedule(t testing.TB, b *Batch, arrivals []arrival) (got [][]int64, mixed int) {
	got = make([][]int64, len(arrivals))
	decoding := make([]bool, b.Config().Rows)
	rowOf := map[int]int{} // slot -> arrival
	next := 0
	waiting := []int{}
	for step := 0; next < len(arrivals) || len(waiting) > 0 || b.Busy() > 0; step++ {
		for next < len(arrivals) && arrivals[next].At <= step {
			waiting = append(waiting, next)
			next++
		}
		for len(waiting) > 0 && b.Busy() < int(b.Config().Rows) {
			a := arrivals[waiting[0]]
			lowest := 0
			for _, taken := rowOf[lowest]; taken; _, taken = rowOf[lowest] {
				lowest++
			}
			row, err := b.Join(a.Prompt, a.New, a.sampler())
			if err != nil {
				t.Fatal(err)
			}
			if row != lowest {
				t.Fatalf("step %d: joined row %d, want the lowest free, %d", step, row, lowest)
			}
			rowOf[row] = waiting[0]
			waiting = waiting[1:]
		}
		anyDecoding, feeding := false, false
		for i := range b.slots {
			decoding[i] = b.slots[i].decoding()
			anyDecoding = anyDecoding || decoding[i]
			feeding = feeding || len(b.slots[i].prompt) > 0
		}
		if anyDecoding && feeding {
			mixed++
		}
		toks, err := b.Step(context.Background())
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for _, tk := range toks {
			decoding[tk.Slot] = false
		}
		if i := slices.Index(decoding, true); i >= 0 {
			t.Fatalf("step %d: slot %d decoding got no token", step, i)
		}
		for _, tk := range toks {
			i, ok := rowOf[tk.Slot]
			if !ok {
				t.Fatalf("step %d: a token of free slot %d", step, tk.Slot)
			}
			if tk.Index != len(got[i]) {
				t.Fatalf("step %d: token %d of sequence %d, want %d", step, tk.Index, i, len(got[i]))
			}
			got[i] = append(got[i], tk.ID)
			switch {
			case tk.Last:
				delete(rowOf, tk.Slot)
			case arrivals[i].Cancel > 0 && len(got[i]) == arrivals[i].Cancel:
				b.Leave(tk.Slot)
				delete(rowOf, tk.Slot)
			}
		}
		if b.Busy() != len(rowOf) {
			t.Fatalf("step %d: %d busy rows, want %d", step, b.Busy(), len(rowOf))
		}
		if step > 10_000 {
			t.Fatal("the schedule does not end")
		}
	}
	return got, mixed
}

// schedule: prompts of different lengths (one of three chunks), sequences joining while others
// are mid-stream, more sequences than rows (the later wait for a row, which is garbage from
// the one before), a canceled sequence, a sampled one, and one that reaches the end of the
// context.
func schedule(vocab int64) []arrival {
	return []arrival{
		{Prompt: prompt(5, 1, vocab), New: 30, At: 0},
		{Prompt: prompt(37, 2, vocab), New: 12, At: 0},
		{Prompt: prompt(9, 3, vocab), New: 40, At: 2, Cancel: 6},
		{Prompt: prompt(20, 4, vocab), New: 20, At: 3},
		{Prompt: prompt(1, 5, vocab), New: 25, At: 5, Seed: 9},
		{Prompt: prompt(50, 6, vocab), New: 10, At: 8},
		{Prompt: prompt(3, 7, vocab), New: 61, At: 9},
		{Prompt: prompt(17, 8, vocab), New: 8, At: 30},
		{Prompt: prompt(30, 9, vocab), New: 4, At: 66},
		{Prompt: prompt(63, 10, vocab), New: 1, At: 70},
	}
}

// TestBatchEqualsGenerate: sequences under continuous batching make the tokens each makes alone
// on a Generator of batch 1, on GenAI-form fixtures (separate and packed QKV, a sliding window),
// on the CPU and on the simulated discrete device.
func TestBatchEqualsGenerate(t *testing.T) {
	batchEqualsGenerate(t, []batchCase{{"qwen2_gqa", "cpu", false}, {"qwen2_gqa", "sim", false}, {"llama.gqa_packed", "cpu", false}, {"mistral_sliding.gqa", "cpu", false}})
}

// batchCase is a fixture on a device, eager or with each pattern replayed as a graph.
type batchCase struct {
	name, device string
	graphs       bool
}

func batchEqualsGenerate(t *testing.T, cases []batchCase) {
	for _, tc := range cases {
		name := tc.name
		label := name + "/" + tc.device
		if tc.graphs {
			label += "/graphs"
		}
		t.Run(label, func(t *testing.T) {
			on := openBatchOn(t, tc.device, name, BatchConfig{Rows: 4, Context: 64, Chunk: 16}, tc.graphs)
			arrivals := schedule(on.c.Vocab)
			got, mixed := runSchedule(t, on.b, arrivals)
			require.Positive(t, mixed, "steps that decode beside a prefill chunk")
			for i, a := range arrivals {
				want, _, err := on.ref.Generate(context.Background(), a.Prompt, int64(len(a.Prompt)), a.New, a.sampler(), nil)
				require.NoError(t, err)
				if a.Cancel > 0 {
					want = want[:a.Cancel]
				}
				require.Equal(t, want, got[i], "sequence %d (prompt %d, %d new, joining at step %d)", i, len(a.Prompt), a.New, a.At)
			}
		})
	}
}

// TestBatchStepAllocatesNothing: after Warm, a whole schedule (joins, prefill chunks, decode
// steps, a cancel, at every batch bucket) plans no pattern, compiles no program and makes no Go
// allocation, eagerly and with each pattern replayed as a graph.
func TestBatchStepAllocatesNothing(t *testing.T) {
	for _, graphs := range []bool{false, true} {
		on := openBatch(t, "qwen2_gqa", BatchConfig{Rows: 4, Context: 64, Chunk: 16}, graphs)
		require.NoError(t, on.b.Warm(context.Background()))
		arrivals := schedule(on.c.Vocab)
		for i := range arrivals {
			arrivals[i].Seed = 0 // a TopK sampler is made per sequence
		}
		runSchedule(t, on.b, arrivals)
		before := on.rt.Stats()
		var steps int
		allocs := testing.AllocsPerRun(3, func() {
			for i := range arrivals {
				if _, err := on.b.Join(arrivals[i].Prompt, arrivals[i].New, Greedy{}); err != nil {
					if err == ErrFull {
						break
					}
					t.Fatal(err)
				}
			}
			for on.b.Busy() > 0 {
				if _, err := on.b.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
				steps++
			}
		})
		after := on.rt.Stats()
		require.Positive(t, steps)
		require.Zero(t, allocs, "graphs=%v: allocations in a schedule of steps", graphs)
		require.Equal(t, before.Patterns.Misses, after.Patterns.Misses, "graphs=%v: no pattern planned after Warm", graphs)
		require.Equal(t, before.Programs.Misses, after.Programs.Misses, "graphs=%v: no program compiled after Warm", graphs)
	}
}

// TestBatchPlan pins the calls' shapes: the decode call's batch bucket over the highest
// decoding slot's row and its mask over the lengths (the prefill row's padding claim
// included); the prefill call's width, the chunk's bucket, narrowed where it would cross the
// context (invariant 1), and its mask (invariant 2).
func TestBatchPlan(t *testing.T) {
	c := &Cache{Form: SharedBuffer, Vocab: 4}
	bc, err := c.checkBatch(BatchConfig{Rows: 8, Context: 64, Chunk: 24})
	require.NoError(t, err)
	b := &Batch{cache: c, cfg: bc, slots: make([]batchSeq, 8), lane: -1, widths: []int64{1, 16, 32}}
	set := func(i int, length int64, prompt int) {
		b.slots[i] = batchSeq{busy: true, length: length, prompt: make([]int64, prompt)}
	}
	type two [2]int64
	decode := func() two { bb, n := b.decodePlan(); return two{bb, n} }
	require.Equal(t, two{0, 0}, decode(), "nothing decodes")
	set(0, 10, 0)
	require.Equal(t, two{2, 16}, decode(), "slot 0 is row 1")
	set(2, 20, 5)
	require.Equal(t, two{2, 16}, decode(), "slot 2 waits to prefill: not in the call")
	b.lane = 2
	require.Equal(t, two{2, 32}, decode(), "the prefill row's claim, its length + 1")
	set(4, 40, 0)
	require.Equal(t, two{8, 64}, decode(), "slot 4 is row 5")
	set(7, 3, 0)
	require.Equal(t, two{9, 64}, decode(), "capped at the slots and the prefill row")

	type three [3]int64
	prefill := func(length, left int64) three { w, n, fed := b.prefillPlan(length, left); return three{w, n, fed} }
	require.Equal(t, three{32, 32, 24}, prefill(0, 40), "a chunk of 24 in width 32, past 0 (first-prompt reading)")
	require.Equal(t, three{16, 64, 5}, prefill(24, 5))
	require.Equal(t, three{16, 64, 16}, prefill(40, 20), "width 32 would cross the context")
	require.Equal(t, three{1, 64, 1}, prefill(50, 10), "only single tokens fit")
	require.EqualValues(t, 1, pow2(1))
	require.EqualValues(t, 8, pow2(5))
}

// TestBatchRefusesConcat: the concat form's rows share one length, so it has no Batch.
func TestBatchRefusesConcat(t *testing.T) {
	loaded, err := graph.Load(testmodels.MustGet("qwen2_kv").WriteTemp(t))
	require.NoError(t, err)
	defer loaded.Close()
	m, c, err := Prepare(loaded, Names{})
	require.NoError(t, err)
	_, err = c.BatchRuntimeOptions(m, BatchConfig{Rows: 2, Context: 64}, engine.RuntimeOptions{})
	var fe *FormError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, Concat, fe.Form)
}
