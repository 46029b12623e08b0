//go:build cuda

package generate

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/graph/testmodels/zoo"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cuda"
)

// TestCUDAGenerationMatchesOnnxruntime generates from every fixture with a KV cache on the GPU,
// eager and with each bucket's program replayed as a CUDA graph: onnxruntime's greedy tokens,
// logits within 1e-3, and after a warm-up generation no plan, no compile, no graph capture and
// no device allocation.
func TestCUDAGenerationMatchesOnnxruntime(t *testing.T) {
	for _, fx := range append(testmodels.Models(), zoo.Models()...) {
		gen := fx.Generation
		if gen == nil {
			continue
		}
		for _, graphs := range []bool{false, true} {
			name := fx.Name + "/eager"
			if graphs {
				name = fx.Name + "/graphs"
			}
			t.Run(name, func(t *testing.T) {
				m, err := graph.Load(fx.WriteTemp(t))
				require.NoError(t, err)
				t.Cleanup(func() { m.Close() })
				c, err := Recognize(m, Names{})
				require.NoError(t, err)
				m, err = c.Tie(m)
				require.NoError(t, err)
				m, err = c.AddGreedy(m)
				require.NoError(t, err)
				be, err := cuda.Open(kernels.OpenOptions{})
				require.NoError(t, err)
				al, err := alloc.New(be.Device(), alloc.Options{})
				require.NoError(t, err)
				ctxLen := int64(64)
				if gen.MaxSeq > 0 {
					ctxLen = gen.MaxSeq
				}
				cfg := Config{Batch: gen.Batch, Context: ctxLen, Prompt: 16, Logits: true}
				ro, err := c.RuntimeOptions(m, cfg, engine.RuntimeOptions{Graphs: graphs})
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
				// What the estimator plans for the h200 here (estimator kv) is what the GPU reserved.
				est, err := c.RuntimeOptions(m, cfg, engine.RuntimeOptions{Options: engine.Options{Target: kernels.KnownGPUs["h200"]}})
				require.NoError(t, err)
				ep, err := engine.PlanEnvelope(context.Background(), m, est.Envelope, est.Options)
				require.NoError(t, err)
				state, err := engine.StateReservation(m, est.State)
				require.NoError(t, err)
				require.Equal(t, ep.ArenaBytes, rt.Reserve.ArenaBytes, "estimate (--target h200) == reservation: arena")
				require.Equal(t, ep.DeviceWeightBytes, rt.Reserve.DeviceWeightBytes, "estimate == reservation: weights")
				require.Equal(t, state, rt.StateBytes(), "estimate == reservation: KV state")
				require.Equal(t, ep.DeviceWeightBytes+alloc.ReservedSize(ep.ArenaBytes)+state, al.Stats().ReservedBytes,
					"the allocator holds weights + arena + KV state, as estimated")

				g, err := New(rt, s, c, cfg)
				require.NoError(t, err)
				prompt, err := gen.Prompt()
				require.NoError(t, err)
				tokens, err := gen.Tokens()
				require.NoError(t, err)
				logits, err := gen.Logits()
				require.NoError(t, err)
				var worst float64
				check := func(st Step) error {
					ref := logits.Float32[int64(st.Index)*gen.Batch*c.Vocab:][:gen.Batch*c.Vocab]
					require.Len(t, st.Logits, len(ref), "step %d's logits", st.Index)
					for i, v := range st.Logits {
						worst = math.Max(worst, math.Abs(float64(v-ref[i])))
					}
					return nil
				}
				got, _, err := g.Generate(context.Background(), prompt.Int64, gen.PromptLen, int(gen.Steps), Greedy{}, check)
				require.NoError(t, err)
				require.Equal(t, tokens.Int64, got, "greedy tokens")
				require.Less(t, worst, 1e-3, "logits")

				calls := be.Device().(alloc.CallCounter)
				before, mallocs := rt.Stats(), calls.Calls().Malloc
				worst = 0
				got, _, err = g.Generate(context.Background(), prompt.Int64, gen.PromptLen, int(gen.Steps), Greedy{}, check)
				require.NoError(t, err)
				require.Equal(t, tokens.Int64, got, "greedy tokens, second generation")
				// Greedy on the device (Config.Logits false): the same tokens from the ids alone.
				cfg.Logits = false
				require.Equal(t, tokens.Int64, greedyOnDevice(t, rt, s, c, cfg, prompt.Int64, gen.PromptLen, int(gen.Steps)),
					"greedy tokens chosen on the device")
				after := rt.Stats()
				require.Equal(t, before.Patterns.Misses, after.Patterns.Misses, "plans after warm-up")
				require.Equal(t, before.Programs.Misses, after.Programs.Misses, "compiles after warm-up")
				require.Equal(t, before.GraphCaptures, after.GraphCaptures, "captures after warm-up")
				require.Equal(t, mallocs, calls.Calls().Malloc, "device allocations after warm-up")
				if graphs {
					require.Greater(t, after.GraphReplays, before.GraphReplays)
				}
				t.Logf("%s: %d tokens identical, logits within %.2g, replays %d", name, len(got), worst, after.GraphReplays)
			})
		}
	}
}

func init() {
	batchBackends["cuda"] = func() (kernels.Backend, error) { return cuda.Open(kernels.OpenOptions{}) }
}

// TestCUDABatchEqualsGenerate is TestBatchEqualsGenerate on the GPU, eager and with each
// pattern replayed as a CUDA graph: each sequence under continuous batching makes the greedy
// (and seeded sampled) tokens a batch-1 Generator makes on the same device.
func TestCUDABatchEqualsGenerate(t *testing.T) {
	batchEqualsGenerate(t, []batchCase{{"qwen2_gqa", "cuda", false}, {"qwen2_gqa", "cuda", true}, {"llama.gqa_packed", "cuda", true}, {"mistral_sliding.gqa", "cuda", true}})
}
