package generate

import (
	"context"
	"math"
	"testing"
	"time"

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

// TestGenerationMatchesOnnxruntime generates from every fixture with a KV cache, on the CPU and
// on the simulated discrete device: the greedy tokens are onnxruntime's, every step's logits
// within 1e-3, and the buckets are what the package promises (one prompt pattern, one per past
// bucket met).
func TestGenerationMatchesOnnxruntime(t *testing.T) {
	n := 0
	for _, fx := range append(testmodels.Models(), zoo.Models()...) {
		gen := fx.Generation
		if gen == nil {
			continue
		}
		n++
		for _, device := range []string{"cpu", "sim"} {
			t.Run(fx.Name+"/"+device, func(t *testing.T) {
				m, err := graph.Load(fx.WriteTemp(t))
				require.NoError(t, err)
				t.Cleanup(func() { m.Close() })
				c, err := Recognize(m, Names{})
				require.NoError(t, err)
				wantForm := map[string]Form{testmodels.FormConcat: Concat, testmodels.FormGQA: SharedBuffer}[gen.Form]
				require.Equal(t, wantForm, c.Form)
				require.Len(t, c.Layers, int(gen.Layers))
				require.Equal(t, gen.KVHeads, c.KVHeads)
				require.Equal(t, gen.HeadDim, c.HeadDim)
				m, err = c.Tie(m)
				require.NoError(t, err)
				m, err = c.AddGreedy(m)
				require.NoError(t, err)

				var be kernels.Backend
				if device == "cpu" {
					be, err = cpu.Open(kernels.OpenOptions{Memory: 1 << 30, Workers: 2})
				} else {
					be, err = sim.Open(kernels.OpenOptions{Memory: 1 << 30, Workers: 2})
				}
				require.NoError(t, err)
				al, err := alloc.New(be.Device(), alloc.Options{})
				require.NoError(t, err)
				context64 := int64(64)
				if gen.MaxSeq > 0 {
					context64 = gen.MaxSeq
				}
				cfg := Config{Batch: gen.Batch, Context: context64, Prompt: 16, Logits: true}
				ro, err := c.RuntimeOptions(m, cfg, engine.RuntimeOptions{Options: engine.Options{Workers: 2}})
				require.NoError(t, err)
				rt, err := engine.NewRuntime(context.Background(), m, be, al, ro)
				require.NoError(t, err)
				s, err := rt.NewSession()
				require.NoError(t, err)
				t.Cleanup(func() {
					require.NoError(t, s.Close())
					require.NoError(t, rt.Close())
					require.NoError(t, al.Close())
					require.NoError(t, be.Close())
				})
				want, err := c.StateBytes(cfg)
				require.NoError(t, err)
				require.Equal(t, alloc.ReservedSize(alignedTotal(ro.State)), rt.StateBytes())
				require.LessOrEqual(t, want, rt.StateBytes())

				g, err := New(rt, s, c, cfg)
				require.NoError(t, err)
				prompt, err := gen.Prompt()
				require.NoError(t, err)
				tokens, err := gen.Tokens()
				require.NoError(t, err)
				logits, err := gen.Logits()
				require.NoError(t, err)
				var worst float64
				got, tm, err := g.Generate(context.Background(), prompt.Int64, gen.PromptLen, int(gen.Steps), Greedy{}, func(st Step) error {
					ref := logits.Float32[int64(st.Index)*gen.Batch*c.Vocab:][:gen.Batch*c.Vocab]
					require.Len(t, st.Logits, len(ref), "step %d's logits", st.Index)
					for i, v := range st.Logits {
						worst = math.Max(worst, math.Abs(float64(v-ref[i])))
					}
					return nil
				})
				require.NoError(t, err)
				require.Equal(t, tokens.Int64, got, "greedy tokens")
				require.Less(t, worst, 1e-3, "logits")
				require.Len(t, tm.Steps, int(gen.Steps)-1)
				t.Logf("%s on %s: %d tokens identical, logits within %.2g", fx.Name, device, len(got), worst)

				var cc kernels.CopyCounters
				if device == "sim" {
					// Only the chosen logits rows leave the device: one per sequence for the prompt,
					// one copy of the batch's rows for each decode step.
					cc = be.Counters()
					require.EqualValues(t, gen.Batch+gen.Steps-1, cc.Downloads, "downloads")
					require.EqualValues(t, gen.Steps*gen.Batch*c.Vocab*4, cc.DownloadBytes, "bytes downloaded")
				}

				// Greedy on the device (Config.Logits false): the same tokens from the ids alone.
				cfg.Logits = false
				require.Equal(t, tokens.Int64, greedyOnDevice(t, rt, s, c, cfg, prompt.Int64, gen.PromptLen, int(gen.Steps)),
					"greedy tokens chosen on the device")
				if device == "sim" {
					// One id per sequence leaves the device for the prompt, one copy of the batch's
					// ids for each decode step.
					after := be.Counters()
					require.EqualValues(t, gen.Batch+gen.Steps-1, after.Downloads-cc.Downloads, "downloads, greedy on the device")
					require.EqualValues(t, gen.Steps*gen.Batch*8, after.DownloadBytes-cc.DownloadBytes, "bytes downloaded, greedy on the device")
				}
				// The prompt's bucket and the past buckets 16, 32 and 64 (7 + 32 positions).
				st := rt.Stats()
				require.EqualValues(t, 4, st.Programs.Misses, "programs compiled")

				// A count of new tokens whose sum with the prompt overflows is beyond the context,
				// not a generation of a negative length.
				for _, maxNew := range []int{math.MaxInt, math.MaxInt - int(gen.PromptLen) + 2} {
					_, _, err = g.Generate(context.Background(), prompt.Int64, gen.PromptLen, maxNew, Greedy{}, nil)
					var ce *ContextError
					require.ErrorAs(t, err, &ce, "%d new tokens", maxNew)
					require.Contains(t, err.Error(), "more positions than an int64 counts")
				}
			})
		}
	}
	require.GreaterOrEqual(t, n, 14, "fixtures and zoo decoders with a KV cache: qwen2_kv, qwen2_gqa and the zoo's six families in two export forms")
}

func alignedTotal(bufs []engine.StateBuffer) int64 {
	var n int64
	for _, b := range bufs {
		n += (b.Bytes + 255) / 256 * 256
	}
	return n
}

// TestConfigDefaults: a zero Prompt admits any prompt that leaves room for one new token.
func TestConfigDefaults(t *testing.T) {
	c := &Cache{Form: SharedBuffer}
	cfg, err := c.check(Config{Batch: 1, Context: 64})
	require.NoError(t, err)
	require.EqualValues(t, 63, cfg.Prompt)
	for _, bad := range []Config{{Batch: 0, Context: 64}, {Batch: 1, Context: 1}, {Batch: 1, Context: 64, Prompt: 64},
		{Batch: 1, Context: math.MaxInt64}, {Batch: 1, Context: engine.MaxDimValue + 1}, {Batch: engine.MaxDimValue + 1, Context: 64}} {
		_, err := c.check(bad)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce, "%+v", bad)
	}
}

// TestBucket pins the bucket ladder.
func TestBucket(t *testing.T) {
	for _, tc := range [][3]int64{{1, 64, 16}, {16, 64, 16}, {17, 64, 32}, {33, 64, 64}, {65, 64, 64}, {100, 1000, 128}, {1, 8, 8}} {
		require.Equal(t, tc[2], Bucket(tc[0], tc[1]), "Bucket(%d, %d)", tc[0], tc[1])
	}
	// Lengths whose next power of two does not fit in int64: the limit, not a doubling that
	// wraps to 0 and never ends.
	const huge = math.MaxInt64
	for _, tc := range [][3]int64{{1 << 62, huge, 1 << 62}, {1<<62 + 1, huge, huge}, {huge, huge, huge}, {huge - 1, huge, huge},
		{huge, 1 << 40, 1 << 40}, {1<<62 + 1, 1<<62 + 5, 1<<62 + 5}} {
		done := make(chan int64, 1)
		go func() { done <- Bucket(tc[0], tc[1]) }()
		select {
		case got := <-done:
			require.Equal(t, tc[2], got, "Bucket(%d, %d)", tc[0], tc[1])
		case <-time.After(10 * time.Second):
			t.Fatalf("Bucket(%d, %d) does not return", tc[0], tc[1])
		}
	}
}

// greedyOnDevice generates greedily on s with cfg (Config.Logits false: each step reads the
// chosen ids, not the logits) and returns the new tokens, checking that no step has logits.
func greedyOnDevice(t *testing.T, rt *engine.Runtime, s *engine.Session, c *Cache, cfg Config, prompt []int64, promptLen int64, steps int) []int64 {
	t.Helper()
	g, err := New(rt, s, c, cfg)
	require.NoError(t, err)
	got, _, err := g.Generate(context.Background(), prompt, promptLen, steps, Greedy{}, func(st Step) error {
		require.Nil(t, st.Logits)
		return nil
	})
	require.NoError(t, err)
	return got
}
