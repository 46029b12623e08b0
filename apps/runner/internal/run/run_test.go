package run

import (
	"context"
	"errors"
	"testing"
	"time"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/planner"
	"github.com/stretchr/testify/require"
)

// fixture writes a fixture model into a temporary directory and returns its path.
func fixture(t testing.TB, name string) string {
	t.Helper()
	return testmodels.MustGet(name).WriteTemp(t)
}

// load loads cfg with a 1 GiB CPU device and two workers and closes the runner at the end of
// the test, checking that everything was released.
func load(t testing.TB, cfg Config) *Runner {
	t.Helper()
	if cfg.DeviceMemory == 0 {
		cfg.DeviceMemory = 1 << 30
	}
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	var final alloc.Stats
	cfg.Observe = func(stage string, st alloc.Stats) {
		if stage == "after-close" {
			final = st
		}
	}
	r, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, r.Close())
		require.Zero(t, final.BytesInUse, "bytes in use after close")
		require.Zero(t, final.ReservedBytes, "arena bytes after close")
		require.Zero(t, final.SegmentBytes.Current, "segments after close")
	})
	return r
}

func env(batch, seq engine.Range) engine.Envelope {
	return engine.Envelope{"batch": batch, "seq": seq}
}

func fixed(v int64) engine.Range { return engine.Range{Lo: v, Hi: v} }

// TestNoAllocationAfterFirstRun is the no-allocation regression test (as cuDNN frontend's):
// once a session has run a pattern, further runs of it make no device malloc or free call and
// no allocator allocation, under either workspace policy, with one session or several.
func TestNoAllocationAfterFirstRun(t *testing.T) {
	for _, tc := range []struct {
		name     string
		model    string
		policy   planner.Policy
		sessions int
	}{
		{"bundled strict", "", planner.Strict, 1},
		{"bundled fallback", "", planner.Fallback, 1},
		{"bundled strict 3 sessions", "", planner.Strict, 3},
		{"gqa fallback 2 sessions", "contrib_gqa", planner.Fallback, 2},
		{"qwen2_q4 strict", "qwen2_q4", planner.Strict, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.model != "" {
				path = fixture(t, tc.model)
			}
			r := load(t, Config{ModelPath: path, Envelope: env(engine.Range{Lo: 1, Hi: 3}, fixed(9)),
				Policy: tc.policy, Sessions: tc.sessions, Seed: 1})
			loaded := r.Counters()
			res, err := r.Run(context.Background(), 4)
			require.NoError(t, err)
			require.Equal(t, Counters{}, res.Steady, "allocations after the first run of the pattern")
			for _, l := range res.Latencies {
				require.Len(t, l, 4)
			}
			// The first runs allocate nothing on the device either: the arenas hold everything.
			require.Zero(t, r.Counters().Sub(loaded).DeviceMallocs)

			// A second Run call (same pattern) is steady from its first run on.
			before := r.Counters()
			_, err = r.Run(context.Background(), 2)
			require.NoError(t, err)
			require.Equal(t, Counters{}, r.Counters().Sub(before))

			// The counters do see allocations: one dynamic allocation shows.
			before = r.Counters()
			stream, err := r.Backend.Device().NewStream()
			require.NoError(t, err)
			a, err := r.Alloc.Alloc(stream, 1000)
			require.NoError(t, err)
			require.Equal(t, int64(1), r.Counters().Sub(before).Allocs)
			require.NoError(t, r.Alloc.Free(a))
			require.NoError(t, r.Alloc.DestroyStream(stream))

			st := r.Stats()
			require.Zero(t, st.Engine.DynamicWorkspaces, "no R > C fallback happened")
			require.Zero(t, st.Allocator.AllocatedBytes.Current, "no dynamic allocation is live")
			require.Equal(t, int64(tc.sessions), st.Allocator.NumReserves)
		})
	}
}

// TestConcurrentSessionsMatchSerial runs K sessions concurrently and checks their outputs are
// bit-identical to a single session's.
func TestConcurrentSessionsMatchSerial(t *testing.T) {
	for _, model := range []string{"", "bert", "contrib_gqa", "llama"} {
		t.Run(model, func(t *testing.T) {
			path := ""
			if model != "" {
				path = fixture(t, model)
			}
			cfg := Config{ModelPath: path, Envelope: env(fixed(2), fixed(11)), Seed: 7}
			serial := load(t, cfg)
			want, err := serial.Run(context.Background(), 1)
			require.NoError(t, err)

			cfg.Sessions = 3
			conc := load(t, cfg)
			require.Len(t, conc.Sessions, 3)
			got, err := conc.Run(context.Background(), 3)
			require.NoError(t, err)
			require.Equal(t, want.Names, got.Names)
			for i := range want.Outputs {
				require.Equal(t, want.Outputs[i].Shape, got.Outputs[i].Shape)
				require.Equal(t, want.Outputs[i].Data, got.Outputs[i].Data, "output %s", want.Names[i])
			}
		})
	}
}

func TestRandomInputs(t *testing.T) {
	m, err := graph.Parse(mustBytes(t, "gpt2"), "")
	require.NoError(t, err)
	dims := engine.Binding{"batch": 3, "seq": 40}
	a, err := RandomInputs(m, dims, 42)
	require.NoError(t, err)
	b, err := RandomInputs(m, dims, 42)
	require.NoError(t, err)
	require.Equal(t, a, b, "deterministic for a seed")
	c, err := RandomInputs(m, dims, 43)
	require.NoError(t, err)
	require.NotEqual(t, a["input_ids"].Data, c["input_ids"].Data, "the seed matters")

	ids := a["input_ids"]
	require.Equal(t, graph.Int64, ids.DType)
	require.Equal(t, []int64{3, 40}, ids.Shape)
	seen := map[int64]bool{}
	for _, v := range ids.Int64s() {
		require.GreaterOrEqual(t, v, int64(0))
		require.Less(t, v, int64(256), "ids within the vocabulary")
		seen[v] = true
	}
	require.Greater(t, len(seen), 50, "ids spread over the vocabulary")
	for _, v := range a["attention_mask"].Int64s() {
		require.Equal(t, int64(1), v)
	}
}

func mustBytes(t testing.TB, name string) []byte {
	b, err := testmodels.MustGet(name).Bytes()
	require.NoError(t, err)
	return b
}

// TestPlansAreVerified re-verifies, independently of the engine, the plans a run uses: the
// envelope's worst plan (the reservation) and the plan of the run's binding.
func TestPlansAreVerified(t *testing.T) {
	r := load(t, Config{Envelope: env(engine.Range{Lo: 1, Hi: 2}, engine.Range{Lo: 3, Hi: 17}), Seed: 3})
	w := r.Runtime.Reserve.Worst
	require.NoError(t, planner.Verify(w.Lifetimes.Problem, w.Plan))
	for _, c := range r.Runtime.Reserve.Candidates {
		p, err := engine.Plan(context.Background(), r.Model, c.Binding, engine.Options{Workers: 2})
		require.NoError(t, err)
		require.NoError(t, planner.Verify(p.Lifetimes.Problem, p.Plan), "binding %v", c.Binding)
		require.LessOrEqual(t, p.Plan.Peak, r.Reservation.ArenaBytes)
	}
	require.Equal(t, engine.Binding{"batch": 2, "seq": 17}, r.Binding, "random inputs at the envelope's maximum")
}

func TestLoadErrors(t *testing.T) {
	ids := kernels.MustTensor(graph.Int64, 2, 5)
	mask := kernels.MustTensor(graph.Int64, 2, 5)
	for _, tc := range []struct {
		name  string
		cfg   Config
		check func(t *testing.T, err error)
	}{
		{"does not fit", Config{Envelope: env(engine.Range{Lo: 1, Hi: 8}, engine.Range{Lo: 1, Hi: 512}), Limit: 1 << 20},
			func(t *testing.T, err error) {
				var re *engine.ReservationError
				require.ErrorAs(t, err, &re)
				require.Equal(t, int64(1<<20), re.Available)
				require.NotEmpty(t, re.Dim)
			}},
		{"unknown dim", Config{Envelope: engine.Envelope{"tokens": fixed(3)}}, func(t *testing.T, err error) {
			var ee *engine.EnvelopeError
			require.ErrorAs(t, err, &ee)
		}},
		{"unknown input", Config{Inputs: map[string]kernels.Tensor{"input_ids": ids, "attention_mask": mask, "pixels": ids}},
			func(t *testing.T, err error) {
				var ie *engine.InputError
				require.ErrorAs(t, err, &ie)
				require.Equal(t, engine.InputUnknown, ie.Kind)
				require.Equal(t, "pixels", ie.Input)
			}},
		{"missing input", Config{Inputs: map[string]kernels.Tensor{"input_ids": ids}}, func(t *testing.T, err error) {
			var ie *engine.InputError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, engine.InputMissing, ie.Kind)
			require.Equal(t, []string{"attention_mask"}, ie.Missing)
		}},
		{"wrong rank without dims", Config{ModelPath: fixture(t, "gpt2"), Inputs: map[string]kernels.Tensor{
			"input_ids": kernels.MustTensor(graph.Int64, 2, 5, 1), "attention_mask": kernels.MustTensor(graph.Int64, 2, 5, 1)}},
			func(t *testing.T, err error) {
				var ie *engine.InputError
				require.ErrorAs(t, err, &ie, "the rank error, not a missing dim")
				require.Equal(t, engine.InputInvalid, ie.Kind)
				require.ErrorContains(t, err, `bad input "input_ids": rank 3`)
			}},
		{"zero dim", Config{Envelope: env(fixed(0), fixed(4))}, func(t *testing.T, err error) {
			var dve *graph.DimValueError
			require.ErrorAs(t, err, &dve)
			require.Equal(t, "batch", dve.Dim)
		}},
		{"zero-size input", Config{ModelPath: fixture(t, "gpt2"), Inputs: map[string]kernels.Tensor{
			"input_ids": kernels.MustTensor(graph.Int64, 3, 0), "attention_mask": kernels.MustTensor(graph.Int64, 3, 0)}},
			func(t *testing.T, err error) {
				var dve *graph.DimValueError
				require.ErrorAs(t, err, &dve)
				require.Equal(t, "seq", dve.Dim)
			}},
		{"model is a directory", Config{ModelPath: t.TempDir()}, func(t *testing.T, err error) {
			var me *ModelError
			require.ErrorAs(t, err, &me)
			require.ErrorIs(t, err, graph.ErrNotRegularFile)
		}},
		{"wrong dtype", Config{Inputs: map[string]kernels.Tensor{"input_ids": kernels.MustTensor(graph.Int32, 2, 5), "attention_mask": mask}},
			func(t *testing.T, err error) {
				var ie *engine.InputError
				require.ErrorAs(t, err, &ie)
				require.ErrorContains(t, err, "dtype int32, want int64")
			}},
		{"outside envelope", Config{Envelope: env(fixed(2), engine.Range{Lo: 1, Hi: 4}), Inputs: map[string]kernels.Tensor{"input_ids": ids, "attention_mask": mask}},
			func(t *testing.T, err error) {
				var ie *engine.InputError
				require.ErrorAs(t, err, &ie)
				require.ErrorContains(t, err, "outside the declared envelope")
			}},
		{"cuda", Config{Device: "cuda"}, func(t *testing.T, err error) {
			var ue *UsageError
			require.ErrorAs(t, err, &ue)
			require.ErrorContains(t, err, "cuda")
		}},
		{"bad cuda ordinal", Config{Device: "cuda:x"}, func(t *testing.T, err error) {
			var ue *UsageError
			require.ErrorAs(t, err, &ue)
		}},
		{"bad device", Config{Device: "tpu"}, func(t *testing.T, err error) {
			var ue *UsageError
			require.ErrorAs(t, err, &ue)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stages []string
			var final alloc.Stats
			tc.cfg.DeviceMemory = 1 << 30
			tc.cfg.Observe = func(stage string, st alloc.Stats) {
				stages = append(stages, stage)
				require.Zero(t, st.AllocatedBytes.Current, "no dynamic allocation is live at %s", stage)
				final = st
			}
			r, err := Load(context.Background(), tc.cfg)
			require.Nil(t, r)
			require.Error(t, err)
			tc.check(t, err)
			if len(stages) > 0 {
				require.Equal(t, []string{"before-close", "after-close"}, stages)
				require.Zero(t, final.BytesInUse)
				require.Zero(t, final.NumReserves, "failed before reserving any arena")
			}
		})
	}
}

// TestBadRunLeavesNothing runs bad inputs on live sessions: the run fails before touching the
// allocator, and the runner keeps working.
func TestBadRunLeavesNothing(t *testing.T) {
	r := load(t, Config{Envelope: env(engine.Range{Lo: 1, Hi: 2}, engine.Range{Lo: 1, Hi: 8}), Seed: 5})
	good := r.Inputs
	for name, in := range map[string]map[string]kernels.Tensor{
		"wrong rank":  {"input_ids": kernels.MustTensor(graph.Int64, 2, 8, 1), "attention_mask": good["attention_mask"]},
		"wrong dtype": {"input_ids": kernels.MustTensor(graph.Float32, 2, 8), "attention_mask": good["attention_mask"]},
		"outside":     {"input_ids": kernels.MustTensor(graph.Int64, 2, 9), "attention_mask": kernels.MustTensor(graph.Int64, 2, 9)},
		"missing":     {"input_ids": good["input_ids"]},
		"short data":  {"input_ids": {DType: graph.Int64, Shape: []int64{2, 8}, Data: make([]byte, 8)}, "attention_mask": good["attention_mask"]},
	} {
		before := r.Counters()
		_, err := r.Sessions[0].Run(context.Background(), in)
		var ie *engine.InputError
		require.ErrorAs(t, err, &ie, name)
		require.Equal(t, Counters{}, r.Counters().Sub(before), name)
		require.Zero(t, r.Alloc.Stats().AllocatedBytes.Current, name)
	}
	_, err := r.Run(context.Background(), 1)
	require.NoError(t, err)
}

func TestNondeterminismError(t *testing.T) {
	err := error(&NondeterminismError{Output: "logits", Session: 2})
	var ne *NondeterminismError
	require.True(t, errors.As(err, &ne))
	require.Contains(t, err.Error(), `output "logits" of session 2`)
}

func TestPercentiles(t *testing.T) {
	var lat []time.Duration
	for i := 100; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	p := percentiles(lat)
	require.Equal(t, Latency{Min: 1, Mean: 50.5, P50: 50, P90: 90, P99: 99, Max: 100}, p)
	require.Equal(t, Latency{Min: 7, Mean: 7, P50: 7, P90: 7, P99: 7, Max: 7}, percentiles([]time.Duration{7 * time.Millisecond}))
	require.Equal(t, Latency{}, percentiles(nil))
}

func TestBench(t *testing.T) {
	r := load(t, Config{Envelope: env(fixed(1), fixed(8)), Sessions: 2, Seed: 1})
	var last int
	res, err := r.Bench(context.Background(), BenchConfig{Warmup: 1, Runs: 20, Progress: func(done int) { last = done }})
	require.NoError(t, err)
	require.Equal(t, 20, last)
	require.Equal(t, 20, res.Runs)
	require.Equal(t, 2, res.Sessions)
	require.Zero(t, res.DeviceMallocsPerRun)
	require.Zero(t, res.AllocatorAllocsPerRun)
	require.Positive(t, res.RunsPerSec)
	require.LessOrEqual(t, res.Latency.Min, res.Latency.P50)
	require.LessOrEqual(t, res.Latency.P50, res.Latency.P90)
	require.LessOrEqual(t, res.Latency.P90, res.Latency.P99)
	require.LessOrEqual(t, res.Latency.P99, res.Latency.Max)

	_, err = r.Bench(context.Background(), BenchConfig{Warmup: 0, Runs: 1})
	var ue *UsageError
	require.ErrorAs(t, err, &ue)
}
