package engine

import (
	"context"
	"math"
	"testing"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/rewrite/rewritetest"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/graph/testmodels/zoo"
	"carve.dev/libs/kernels"
	_ "carve.dev/libs/kernels/cuda" // the h200 target's kernel selection
	"carve.dev/libs/planner"
	"github.com/stretchr/testify/require"
)

// loadZoo loads a zoo model and fuses it for opts' target, as the apps do.
func loadZoo(t testing.TB, zm testmodels.Model, opts Options) (*graph.Model, *rewrite.Report) {
	t.Helper()
	m, err := graph.Load(zm.WriteTemp(t))
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	fo, err := FuseOptions(opts)
	require.NoError(t, err)
	f, rep, err := rewrite.Fuse(m, fo)
	require.NoError(t, err)
	return f, rep
}

// zooInputs decodes a zoo binding's inputs as host tensors.
func zooInputs(t testing.TB, zm testmodels.Model, m *graph.Model, b testmodels.Binding) map[string]kernels.Tensor {
	t.Helper()
	return bindingInputs(t, m, b, zm.Array)
}

// forZooPrefill runs fn as a subtest for every zoo model without a KV cache (generate's tests
// run those), skipping the models zooUnsupported names.
func forZooPrefill(t *testing.T, fn func(t *testing.T, zm testmodels.Model)) {
	for _, zm := range zoo.Models() {
		if zm.Generation != nil {
			continue
		}
		t.Run(zm.Name, func(t *testing.T) {
			if why, ok := zooUnsupported[zm.Name]; ok {
				t.Skip(why)
			}
			fn(t, zm)
		})
	}
}

// runZoo runs session s at every binding of zm and requires outputs within 1e-3 of the
// reference's range; how names the run in messages.
func runZoo(t *testing.T, zm testmodels.Model, m *graph.Model, s *Session, how string) {
	t.Helper()
	for _, b := range zm.Bindings {
		out, err := s.Run(context.Background(), zooInputs(t, zm, m, b))
		require.NoError(t, err, "%s at %v", how, b.Dims)
		for i, v := range m.Outputs {
			want, err := zm.Array(b.Outputs[v.Name])
			require.NoError(t, err)
			require.Equal(t, want.Shape, out[i].Shape)
			e := rangeErr(kernels.ViewAs[float32](out[i].Data), want.Float32)
			require.Less(t, e, 1e-3, "%s on %s at %v: error %.3g of the reference's range", v.Name, how, b.Dims, e)
			t.Logf("%s at %v: error %.2g of the reference's range", how, b.Dims, e)
		}
	}
}

// rangeErr is max |got - want| over the reference's range, max(want) - min(want).
func rangeErr(got, want []float32) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, w := range want {
		lo, hi = math.Min(lo, float64(w)), math.Max(hi, float64(w))
	}
	span := math.Max(hi-lo, 1e-30)
	var worst float64
	for i := range want {
		d := math.Abs(float64(got[i])-float64(want[i])) / span
		if d > worst || math.IsNaN(d) {
			worst = d
		}
	}
	return worst
}

// zooUnsupported are the zoo models carve cannot load yet, and why. Every other zoo model must
// load, fuse, run and match onnxruntime.
var zooUnsupported = map[string]string{
	"deberta_v2.ts_mask": "If (control flow) is not implemented",
}

// TestZooMatchesOnnxruntime runs every zoo model, fused as the runner fuses it, at both of its
// bindings (the second right-padded) on the CPU and on the simulated discrete device: outputs
// within 1e-3 of onnxruntime's over the reference's range.
func TestZooMatchesOnnxruntime(t *testing.T) {
	forZooPrefill(t, func(t *testing.T, zm testmodels.Model) {
		t.Parallel()
		m, _ := loadZoo(t, zm, Options{})
		for _, dev := range []string{kernels.BackendCPU, kernels.BackendSim} {
			be, al := newHostBackend(t, dev, 1<<30)
			_, s := newSession(t, m, be, al, RuntimeOptions{Envelope: envelopeOf(zm)})
			runZoo(t, zm, m, s, dev)
		}
	})
}

// zooQuadratic are the zoo families (or single models) whose planned arena may still grow
// with seq², and why.
var zooQuadratic = map[string]string{
	"t5_encoder": "T5's relative position bias is a [1, heads, seq, seq] input of the attention, computed per layer from buckets",
}

// TestZooSeqLinear plans every zoo model at (8, 1024) and (8, 2048), on the CPU target and on
// the H200: with its masks recognised (causal, sliding windows, padding, none), no [batch, 1, seq, seq]
// buffer is left, so the arena grows at most 2.3x when seq doubles.
func TestZooSeqLinear(t *testing.T) {
	targets := map[string]Options{"cpu": {Workers: 2}, "h200": {Target: mustTarget(t, "h200")}}
	forZooPrefill(t, func(t *testing.T, zm testmodels.Model) {
		if _, ok := zm.Bindings[0].Dims["seq"]; !ok {
			t.Skip("no seq dim: the model's image or spectrogram size is fixed")
		}
		t.Parallel()
		for name, opts := range targets {
			m, rep := loadZoo(t, zm, opts)
			a1, err := Plan(context.Background(), m, Binding{"batch": 8, "seq": 1024}, opts)
			require.NoError(t, err)
			a2, err := Plan(context.Background(), m, Binding{"batch": 8, "seq": 2048}, opts)
			require.NoError(t, err)
			ratio := float64(a2.Plan.Peak) / float64(a1.Plan.Peak)
			t.Logf("%s: arena %d MiB at (8, 2048), %.2fx (8, 1024)", name, a2.Plan.Peak>>20, ratio)
			why, ok := zooQuadratic[zm.Name]
			if !ok {
				why, ok = zooQuadratic[zm.Family]
			}
			if ok {
				t.Logf("exempt: %s", why)
				continue
			}
			if ratio > 2.3 {
				var masks []string
				for _, f := range rep.Fused {
					if f.Kind == rewrite.Attention {
						masks = append(masks, f.Detail)
					}
				}
				for _, u := range rep.Unfused {
					if u.Kind == rewrite.Attention {
						masks = append(masks, "not fused at "+u.Node+": "+u.Reason)
					}
				}
				t.Fatalf("%s: arena(8, 2048) / arena(8, 1024) = %.2f > 2.3; attention: %v", name, ratio, masks)
			}
		}
	})
}

// TestZooSequenceFirstAttention: torchvision's VisionTransformer (nn.MultiheadAttention,
// sequence-first), both exports, fused as the runner fuses it for the CPU and the H200: each
// layer's attention reads Q, K and V in place from its in-projection and writes Y where the
// out-projection reads it (rewrite's attention-layout fusion), so no Transpose or Gather is
// left around the attentions; the outputs still match onnxruntime on the CPU and the
// simulated device, and the arena at batch 64 is smaller than with the copies (on the H200 no
// larger: its peak is a GEMM's workspace).
func TestZooSequenceFirstAttention(t *testing.T) {
	n := 0
	for _, zm := range zoo.Models() {
		if zm.Family != "vit_tv" {
			continue
		}
		n++
		t.Run(zm.Name, func(t *testing.T) {
			for name, opts := range map[string]Options{"cpu": {Workers: 2}, "h200": {Target: mustTarget(t, "h200")}} {
				m, rep := loadZoo(t, zm, opts)
				require.Equal(t, 2, rep.Count(rewrite.AttentionLayout), "%s: unfused: %+v", name, rep.Unfused)
				require.Zero(t, rewritetest.CopiesAroundAttention(m), "%s: copies around the attentions", name)
				fo, err := FuseOptions(opts)
				require.NoError(t, err)
				raw, err := graph.Load(zm.WriteTemp(t))
				require.NoError(t, err)
				t.Cleanup(func() { raw.Close() })
				fo.Skip = append(fo.Skip, rewrite.AttentionLayout)
				copies, _, err := rewrite.Fuse(raw, fo)
				require.NoError(t, err)
				b := Binding{"batch": 64}
				p, err := Plan(context.Background(), m, b, opts)
				require.NoError(t, err)
				q, err := Plan(context.Background(), copies, b, opts)
				require.NoError(t, err)
				t.Logf("%s: %d nodes, arena %d bytes at batch 64; with the copies %d nodes (%d around the attentions), %d bytes",
					name, len(m.Nodes), p.ArenaBytes(), len(copies.Nodes), rewritetest.CopiesAroundAttention(copies), q.ArenaBytes())
				if name == "cpu" {
					require.Less(t, p.ArenaBytes(), q.ArenaBytes(), name)
				} else { // the peak is the in-projection's cuBLAS workspace, beside which no copy was live
					require.LessOrEqual(t, p.ArenaBytes(), q.ArenaBytes(), name)
				}
				if name == "cpu" {
					for _, dev := range []string{kernels.BackendCPU, kernels.BackendSim} {
						be, al := newHostBackend(t, dev, 1<<30)
						_, s := newSession(t, m, be, al, RuntimeOptions{Envelope: envelopeOf(zm)})
						runZoo(t, zm, m, s, dev)
					}
				}
			}
		})
	}
	require.Equal(t, 2, n, "the zoo's vit_tv exports")
}

// torchPeakDeBERTa is PyTorch eager's peak memory beyond the weights for the zoo's DeBERTa-v2
// config at (8, 2048) on an H200, in bytes: tools/zoo/torch_peaks_h200.json, deberta_v2's
// peak_extra_bytes, measured by tools/zoo/torch_peak.py.
const torchPeakDeBERTa = 3_064_102_912

// TestZooDeBERTaUnderPyTorch plans DeBERTa-v2's dynamo exports at (8, 2048) for the H200: both
// layers' attention is fused with its content-to-position and position-to-content terms read
// as the Attention's relative bias (rewrite's relbias.go), so no buffer of [seq, seq] elements
// is left (the index a gathered term read per diagonal is [2 seq - 1]) and the arena is a
// small part of PyTorch's peak.
func TestZooDeBERTaUnderPyTorch(t *testing.T) {
	opts := Options{Target: mustTarget(t, "h200")}
	const square = 8 * 2048 * 2048 // bytes of a bool [batch, 1, seq, seq], the smallest square there was
	for _, zm := range zoo.Models() {
		if zm.Family != "deberta_v2" || zm.Exporter != "dynamo" {
			continue
		}
		t.Run(zm.Name, func(t *testing.T) {
			m, rep := loadZoo(t, zm, opts)
			require.Equal(t, 2, rep.Count(rewrite.Attention), "both layers; unfused: %+v", rep.Unfused)
			for _, f := range rep.Fused {
				if f.Kind == rewrite.Attention {
					require.Contains(t, f.Detail, "content-to-position bias")
					require.Contains(t, f.Detail, "position-to-content bias")
				}
			}
			require.Zero(t, rep.Count(rewrite.ExpandedGather), "the gathers are fused")
			p, err := Plan(context.Background(), m, Binding{"batch": 8, "seq": 2048}, opts)
			require.NoError(t, err)
			t.Logf("arena %d bytes, PyTorch %d", p.Plan.Peak, int64(torchPeakDeBERTa))
			require.Less(t, 20*p.Plan.Peak, int64(torchPeakDeBERTa))
			for _, b := range p.Lifetimes.Problem.Buffers {
				if b.Kind != planner.Workspace { // cuBLASLt's take 32 MiB whatever the sequence
					require.Less(t, b.Size, int64(square), "a buffer of [batch, seq, seq] elements (%+v)", b)
				}
			}
		})
	}
}

func mustTarget(t testing.TB, spec string) kernels.Target {
	t.Helper()
	tg, err := kernels.ParseTarget(spec)
	require.NoError(t, err)
	return tg
}
