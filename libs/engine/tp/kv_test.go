package tp_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/engine"
	"carve.dev/libs/engine/tp"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/shard"
	"carve.dev/libs/graph/testmodels/zoo"
	"carve.dev/libs/kernels"
)

// kvStep are the inputs of one decoding step with a KV cache: a chunk of seq tokens after past
// cached positions (random keys and values: the graph does not know), in both KV forms: the
// GenAI one (past buffers of max_seq positions, the mask's length the total) and the
// concatenating one (past buffers of past positions, position_ids).
func kvStep(t *testing.T, m *graph.Model, vocab int64, past, seq, maxSeq int64) (map[string]kernels.Tensor, engine.Envelope) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	dims := map[string]int64{"batch": 1, "seq": seq, "total_seq": past + seq, "past_seq": past, "max_seq": maxSeq}
	in := map[string]kernels.Tensor{}
	env := engine.Envelope{}
	for _, v := range m.Inputs {
		shape := make([]int64, len(v.Shape))
		for i, d := range v.Shape {
			if x, ok := d.Value(); ok {
				shape[i] = x
				continue
			}
			x, ok := dims[d.String()]
			require.True(t, ok, "dim %s of %s", d, v.Name)
			shape[i] = x
			env[d.String()] = engine.Range{Lo: x, Hi: x}
		}
		tn, err := kernels.NewTensor(v.DType, shape...)
		require.NoError(t, err)
		switch {
		case v.Name == "input_ids":
			for i := range tn.Int64s() {
				tn.Int64s()[i] = r.Int64N(vocab)
			}
		case v.Name == "attention_mask":
			for i := range tn.Int64s() {
				tn.Int64s()[i] = 1
			}
		case v.Name == "position_ids":
			for i := range tn.Int64s() {
				tn.Int64s()[i] = past + int64(i)
			}
		case v.DType == graph.Float32:
			for i := range tn.Float32s() {
				tn.Float32s()[i] = float32(r.NormFloat64())
			}
		default:
			t.Fatalf("input %s %s", v.Name, v.DType)
		}
		in[v.Name] = tn
	}
	return in, env
}

// heads returns the KV heads [h0, h0+n) of a [batch, kv heads, time, head] tensor, its first
// time positions.
func heads(t kernels.Tensor, h0, n, time int64) kernels.Tensor {
	b, kv, row := t.Shape[0], t.Shape[1], t.Shape[3]*t.DType.Size()
	out := kernels.MustTensor(t.DType, b, n, time, t.Shape[3])
	for i := range b {
		for h := range n {
			src := ((i*kv + h0 + h) * t.Shape[2]) * row
			dst := ((i*n + h) * time) * row
			copy(out.Data[dst:dst+time*row], t.Data[src:src+time*row])
		}
	}
	return out
}

// TestShardedKVStep runs one decoding step of the zoo's decoders with a KV cache (the GenAI form
// of GroupQueryAttention, and the concatenating form) at tp 2 and 4 where shard splits them,
// each rank given its KV heads of the past: the logits equal the unsharded step's, and each
// rank's present keys and values equal the unsharded present's heads the rank holds, within
// tolerance.
func TestShardedKVStep(t *testing.T) {
	ctx := context.Background()
	ran := 0
	for _, fx := range zoo.Models() {
		if fx.Task != "decoder" || !(fx.Exporter == "gqa_builder" || strings.Contains(fx.Name, ".kv_")) {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			m := fused(t, fx)
			for _, n := range []int{2, 4} {
				_, info, err := shard.Split(m, 0, n, shard.Options{})
				if err != nil {
					var ue *shard.UnsupportedError
					require.True(t, errors.As(err, &ue), "%v", err)
					t.Logf("tp %d: %v", n, err)
					return
				}
				vocab, _ := m.Outputs[0].Shape[2].Value()
				const past, seq = 3, 2
				in, env := kvStep(t, m, vocab, past, seq, 8)
				opts := engine.RuntimeOptions{Envelope: env}
				one := newSim(t)
				rt, err := engine.NewRuntime(ctx, m, one.Backend, one.Alloc, opts)
				require.NoError(t, err)
				s, err := rt.NewSession()
				require.NoError(t, err)
				want, err := s.Run(ctx, in)
				require.NoError(t, err)

				devs := make([]tp.Device, n)
				for r := range devs {
					devs[r] = newSim(t)
				}
				tm, err := tp.Load(ctx, m, devs, opts)
				require.NoError(t, err)
				ts, err := tm.NewSession()
				require.NoError(t, err)
				rin := make([]map[string]kernels.Tensor, n)
				for r := range rin {
					h := tm.Info[r].Heads
					rin[r] = map[string]kernels.Tensor{}
					for name, x := range in {
						if slices.Contains(tm.Info[r].StateInputs, name) {
							x = heads(x, h.KV0, h.KV, x.Shape[2])
						}
						rin[r][name] = x
					}
				}
				got, err := ts.RunRanks(ctx, rin)
				require.NoError(t, err)
				for r := range n {
					h := tm.Info[r].Heads
					for i, o := range m.Outputs {
						w, g := want[i], got[r][i]
						if slices.Contains(tm.Info[r].StateOutputs, o.Name) {
							// The positions a step wrote or kept: a GenAI-form present buffer
							// of max_seq positions holds nothing defined past the total.
							total := min(w.Shape[2], past+seq)
							w, g = heads(w, h.KV0, h.KV, total), heads(g, 0, h.KV, total)
						}
						got[r][i] = g
						require.Equal(t, w.Shape, g.Shape, "rank %d %s", r, o.Name)
						e := maxRelErr(g.Float32s(), w.Float32s())
						require.LessOrEqual(t, e, tolerance, "tp %d rank %d %s", n, r, o.Name)
					}
				}
				t.Logf("tp %d: %d state inputs per rank, %d KV head(s) a rank", n, len(info.StateInputs), info.Heads.KV)
				ran++
				require.NoError(t, ts.Close())
				require.NoError(t, tm.Close())
				require.NoError(t, s.Close())
				require.NoError(t, rt.Close())
			}
		})
	}
	require.Positive(t, ran)
}
