package tp_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/engine"
	"carve.dev/libs/engine/tp"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/shard"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/graph/testmodels/zoo"
	"carve.dev/libs/kernels"
)

// TestShardedGeneration runs onnxruntime's greedy generations of the zoo's decoders with a KV
// cache that shard splits (the GenAI form, packed or not, and the concatenating TorchScript
// export) at tp 2 and 4 on simulated devices, in lockstep: the prompt run, then a decode run of
// one token per step, each rank feeding its own present keys and values (its KV heads) back as
// its next past. The tokens are onnxruntime's, every one.
//
// The concatenating form's past starts with one masked position (carve binds no zero-size dim),
// as package generate keeps it; its first 6 tokens are checked (every step's past is a new
// pattern, planned anew on every rank).
func TestShardedGeneration(t *testing.T) {
	ctx := context.Background()
	ran := 0
	for _, fx := range zoo.Models() {
		g := fx.Generation
		if g == nil || fx.Task != "decoder" {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			if raceEnabled && fx.Exporter == "torchscript" && g.Form != testmodels.FormGQA {
				t.Skip("the TorchScript concat form's plans take minutes under the race detector; the plain run covers it")
			}
			m := fused(t, fx)
			prompt, err := g.Prompt()
			require.NoError(t, err)
			wantTokens, err := g.Tokens()
			require.NoError(t, err)
			gqa := g.Form == testmodels.FormGQA
			steps := g.Steps
			if !gqa {
				steps = min(steps, 6)
			}
			hi := g.PromptLen + g.Steps + 1
			env := engine.Envelope{"batch": {Lo: g.Batch, Hi: g.Batch}, "seq": {Lo: 1, Hi: g.PromptLen}, "total_seq": {Lo: 1, Hi: hi}}
			if gqa {
				env["max_seq"] = engine.Range{Lo: g.MaxSeq, Hi: g.MaxSeq}
			} else {
				env["past_seq"] = engine.Range{Lo: 1, Hi: hi}
			}
			for _, n := range []int{2, 4} {
				_, info, err := shard.Split(m, 0, n, shard.Options{})
				var ue *shard.UnsupportedError
				if errors.As(err, &ue) {
					t.Logf("tp %d: %v", n, err)
					return
				}
				require.NoError(t, err)
				if len(info.StateInputs) == 0 {
					t.Logf("tp %d: the attention is not split (not fused), the KV state whole", n)
					return
				}
				devs := make([]tp.Device, n)
				for r := range devs {
					devs[r] = newSim(t)
				}
				tm, err := tp.Load(ctx, m, devs, engine.RuntimeOptions{Envelope: env})
				require.NoError(t, err)
				s, err := tm.NewSession()
				require.NoError(t, err)

				// Each rank's past, by input name; the prompt's first.
				pasts := make([]map[string]kernels.Tensor, n)
				masked := int64(0) // the concatenating form's masked first position
				if !gqa {
					masked = 1
				}
				for r := range n {
					pasts[r] = map[string]kernels.Tensor{}
					for _, name := range tm.Info[r].StateInputs {
						v := tm.Ranks[r].Model.Value(name)
						shape := []int64{g.Batch, constDim(v.Shape[1]), g.MaxSeq, g.HeadDim}
						if !gqa {
							shape[2] = masked
						}
						pasts[r][name] = kernels.MustTensor(v.DType, shape...)
					}
				}
				ids := prompt.Int64
				seq, done := g.PromptLen, int64(0) // tokens fed this step, and before it
				for step := range steps {
					total := masked + done + seq
					in := map[string]kernels.Tensor{}
					x := kernels.MustTensor(graph.Int64, g.Batch, seq)
					copy(x.Int64s(), ids)
					in["input_ids"] = x
					mask := kernels.MustTensor(graph.Int64, g.Batch, total)
					for b := range g.Batch {
						for i := masked; i < total; i++ {
							mask.Int64s()[b*total+i] = 1
						}
					}
					in["attention_mask"] = mask
					if m.Value("position_ids") != nil {
						pos := kernels.MustTensor(graph.Int64, g.Batch, seq)
						for b := range g.Batch {
							for i := range seq {
								pos.Int64s()[b*seq+i] = done + i
							}
						}
						in["position_ids"] = pos
					}
					rin := make([]map[string]kernels.Tensor, n)
					for r := range n {
						rin[r] = map[string]kernels.Tensor{}
						for k, v := range in {
							rin[r][k] = v
						}
						for k, v := range pasts[r] {
							rin[r][k] = v
						}
					}
					outs, err := s.RunRanks(ctx, rin)
					require.NoError(t, err, "tp %d step %d", n, step)
					logits := outs[0][0]
					vocab := logits.Shape[2]
					next := make([]int64, g.Batch)
					for b := range g.Batch {
						row := logits.Float32s()[((b+1)*seq-1)*vocab:][:vocab]
						best := 0
						for i, v := range row {
							if v > row[best] {
								best = i
							}
						}
						next[b] = int64(best)
						require.Equal(t, wantTokens.Int64[b*g.Steps+step], next[b], "tp %d step %d row %d", n, step, b)
					}
					for r := range n {
						for i, o := range tm.Ranks[r].Model.Outputs {
							if slices.Contains(tm.Info[r].StateOutputs, o.Name) {
								// present.N.key is the next step's past_key_values.N.key.
								past := "past_key_values" + strings.TrimPrefix(o.Name, "present")
								require.Contains(t, pasts[r], past)
								pasts[r][past] = clone(outs[r][i])
							}
						}
					}
					ids, done, seq = next, done+seq, 1
				}
				t.Logf("tp %d: %d tokens of %d row(s), onnxruntime's", n, steps, g.Batch)
				ran++
				require.NoError(t, s.Close())
				require.NoError(t, tm.Close())
			}
		})
	}
	require.Positive(t, ran)
}

func constDim(d graph.Dim) int64 {
	v, _ := d.Value()
	return v
}

func clone(t kernels.Tensor) kernels.Tensor {
	c := kernels.MustTensor(t.DType, t.Shape...)
	copy(c.Data, t.Data)
	return c
}
