package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/arch"
	"carve.dev/libs/graph/testmodels/zoo"
)

// TestZooConfigPlansAsExport builds every zoo decoder from its config.json alone (package arch,
// weights by shape only) and plans it beside its dynamo export, fused, at (8, 1024) on the CPU
// target and on the H200: the weights and the arena agree within 1%. A family arch does not
// build is skipped with its reason.
func TestZooConfigPlansAsExport(t *testing.T) {
	targets := []struct {
		name string
		opts Options
	}{{"cpu", Options{Workers: 2}}, {"h200", Options{Target: mustTarget(t, "h200")}}}
	env := Envelope{"batch": {Lo: 8, Hi: 8}, "seq": {Lo: 1024, Hi: 1024}}
	for _, zm := range zoo.Models() {
		if !strings.HasSuffix(zm.Name, ".dyn_mask") || zm.Outputs[0] != "logits" {
			continue
		}
		t.Run(zm.Family, func(t *testing.T) {
			data, err := zoo.Config(zm)
			require.NoError(t, err)
			cfg, err := arch.Parse(data)
			var ce *arch.ConfigError
			if errors.As(err, &ce) {
				t.Skipf("not built from its config: %v", err)
			}
			require.NoError(t, err)
			t.Parallel()
			for _, tg := range targets {
				exported, _ := loadZoo(t, zm, tg.opts)
				if why, ok := mergedNorms[zm.Family]; ok {
					t.Logf("the export's norms split as a checkpoint's export has them: %s", why)
					exported = splitMergedNorms(t, exported)
				}
				fo, err := FuseOptions(tg.opts)
				require.NoError(t, err)
				built, err := cfg.Build(arch.Options{Skip: fo.Skip})
				if errors.As(err, &ce) {
					t.Skipf("not built from its config: %v", err)
				}
				require.NoError(t, err)
				want, err := PlanEnvelope(context.Background(), exported, env, tg.opts)
				require.NoError(t, err)
				got, err := PlanEnvelope(context.Background(), built, env, tg.opts)
				require.NoError(t, err)
				t.Logf("%s: weights %d vs %d (%+.2f%%), device weights %d vs %d (%+.2f%%), arena %d vs %d (%+.3f%%)", tg.name,
					got.WeightBytes, want.WeightBytes, pct(got.WeightBytes, want.WeightBytes),
					got.DeviceWeightBytes, want.DeviceWeightBytes, pct(got.DeviceWeightBytes, want.DeviceWeightBytes),
					got.ArenaBytes, want.ArenaBytes, pct(got.ArenaBytes, want.ArenaBytes))
				if os.Getenv("CARVE_ARCH_DUMP") != "" {
					dumpOps(t, "/tmp/arch."+zm.Family+"."+tg.name, exported, built)
					dumpBuffers(t, "/tmp/arch."+zm.Family+"."+tg.name+".b0", want.Worst)
					dumpBuffers(t, "/tmp/arch."+zm.Family+"."+tg.name+".b1", got.Worst)
				}
				// The parameters agree to the byte, each counted once per node that reads it: an
				// export of random weights stores the norm weights (all ones) once and every norm
				// reads that one, where the checkpoint, and the config's graph, has one per norm.
				// The exporter drops a GEMM's zero bias (gpt2's Conv1D layers, opt's fc1 and fc2 in
				// an export of random weights); checkpoints have them, and so has the config's
				// graph: the GEMMs are the same, and the difference is their biases exactly.
				gb, ge := gemmBiasBytes(built), gemmBiasBytes(exported)
				require.Equal(t, ge.gemms, gb.gemms, "%s: GEMMs", tg.name)
				require.Equal(t, paramBytes(exported)+gb.bytes-ge.bytes, paramBytes(built), "%s: parameter bytes per reader", tg.name)
				// The weights within 1% of the export's as a checkpoint's export weighs them: every
				// reader of a weight the exporter shares (norms of ones, biases of zeros) with one of
				// its own, and the biases it dropped.
				asCheckpoint := want.WeightBytes + sharedBytes(exported) + gb.bytes - ge.bytes
				t.Logf("%s: weights %d vs %d as a checkpoint's export (%+.2f%%)", tg.name, got.WeightBytes, asCheckpoint, pct(got.WeightBytes, asCheckpoint))
				require.InDelta(t, 0, pct(got.WeightBytes, asCheckpoint), 1, "%s: weights", tg.name)
				// On the device each weight starts aligned, so those extra norm weights and biases
				// weigh more at this tiny size than their bytes (starcoder2's export, whose every
				// linear layer and norm has a bias, shares one among nine readers): the export as a
				// checkpoint's export weighs on the device has each reader's own copy, and the
				// biases the exporter dropped (gpt2's and opt's, whose alignment the bytes leave out).
				if want.DeviceWeightBytes > 0 {
					_, size, err := deviceWeightLayout(unshared(t, exported))
					require.NoError(t, err)
					asCheckpoint := alloc.ReservedSize(size) + gb.bytes - ge.bytes
					t.Logf("%s: device weights %d vs %d as a checkpoint's export (%+.2f%%)", tg.name, got.DeviceWeightBytes, asCheckpoint, pct(got.DeviceWeightBytes, asCheckpoint))
					require.InDelta(t, 0, pct(got.DeviceWeightBytes, asCheckpoint), 1, "%s: device weights", tg.name)
				}
				require.Equal(t, want.ArenaBytes, got.ArenaBytes, "%s: arena", tg.name)
			}
		})
	}
}

// mergedNorms are the families whose zoo export computes two norms of a layer as one: an export
// of random weights has every norm's weight ones and bias zeros, so the exporter's common
// subexpressions merge two norms of the same input. A checkpoint's export has both, and so has
// the config's graph.
var mergedNorms = map[string]string{
	"gpt_neox": "the parallel residual's input_layernorm and post_attention_layernorm read the same input",
}

// splitMergedNorms undoes the merge in a fused export: a LayerNormalization read both before its
// layer's attention and after it is computed again, with weights of its own, right before the
// first reader after the attention, which reads the copy from then on.
func splitMergedNorms(t *testing.T, m *graph.Model) *graph.Model {
	t.Helper()
	spec := m.Spec()
	inits := map[string]*graph.Tensor{}
	for _, w := range spec.Initializers {
		inits[w.Name] = w
	}
	norms := map[string]graph.NodeSpec{} // by output: the norms not yet followed by an attention
	after := map[string]graph.NodeSpec{} // by output: the norms an attention has followed
	copies := map[string]string{}
	var nodes []graph.NodeSpec
	for _, n := range spec.Nodes {
		for i, in := range n.Inputs {
			ln, ok := after[in]
			if !ok {
				continue
			}
			if copies[in] == "" {
				c := ln
				c.Name, c.Outputs = ln.Name+"/split", []string{ln.Outputs[0] + "/split"}
				c.Inputs = append([]string{}, ln.Inputs...)
				for j := 1; j < len(c.Inputs); j++ {
					w := inits[c.Inputs[j]]
					cw, err := graph.NewShapeTensor(fmt.Sprintf("%s/weight%d", c.Name, j), w.DType, w.Shape)
					require.NoError(t, err)
					spec.Initializers = append(spec.Initializers, cw)
					c.Inputs[j] = cw.Name
				}
				nodes = append(nodes, c)
				copies[in] = c.Outputs[0]
			}
			n.Inputs = append([]string{}, n.Inputs...)
			n.Inputs[i] = copies[in]
		}
		nodes = append(nodes, n)
		switch n.OpType {
		case "LayerNormalization":
			norms[n.Outputs[0]] = n
		case "Attention":
			for out, ln := range norms {
				after[out] = ln
			}
			clear(norms)
		}
	}
	spec.Nodes = nodes
	g, err := graph.Build(spec)
	require.NoError(t, err)
	return g
}

// isWeight: v is a floating-point tensor of rank 1 or more, which a checkpoint's export has one of
// per reader where an export of random weights may share one (norms of ones, biases of zeros);
// a scalar is a constant that any export may share (bloom's gelu's 0.5), and on the device each
// copy would start a block of its own.
func isWeight(v *graph.Value) bool {
	return (v.DType == graph.Float32 || v.DType == graph.Float16 || v.DType == graph.BFloat16) && len(v.Init.Shape) > 0
}

// unshared gives every reader after the first of a weight (isWeight) a weight of its own,
// declared by shape, as a checkpoint's export has them.
func unshared(t *testing.T, m *graph.Model) *graph.Model {
	t.Helper()
	spec := m.Spec()
	seen := map[string]int{}
	for i, n := range spec.Nodes {
		n.Inputs = append([]string{}, n.Inputs...)
		for j, in := range n.Inputs {
			v := m.Value(in)
			if v == nil || v.Kind != graph.KindInitializer || !isWeight(v) {
				continue
			}
			if seen[in]++; seen[in] == 1 {
				continue
			}
			w, err := graph.NewShapeTensor(fmt.Sprintf("%s/reader%d", in, seen[in]), v.DType, v.Init.Shape)
			require.NoError(t, err)
			spec.Initializers = append(spec.Initializers, w)
			n.Inputs[j] = w.Name
		}
		spec.Nodes[i] = n
	}
	g, err := graph.Build(spec)
	require.NoError(t, err)
	return g
}

// paramBytes is the bytes of the floating-point weights, each counted once per node reading it.
func paramBytes(m *graph.Model) int64 {
	var n int64
	for _, v := range m.Initializers {
		if v.DType == graph.Float32 || v.DType == graph.Float16 || v.DType == graph.BFloat16 {
			n += v.Init.Size * int64(len(v.Consumers))
		}
	}
	return n
}

// sharedBytes is what the floating-point weights read by more than one node would weigh again,
// once for every further reader.
func sharedBytes(m *graph.Model) int64 {
	var n int64
	for _, v := range m.Initializers {
		if (v.DType == graph.Float32 || v.DType == graph.Float16 || v.DType == graph.BFloat16) && len(v.Consumers) > 1 {
			n += v.Init.Size * int64(len(v.Consumers)-1)
		}
	}
	return n
}

// gemmBiasBytes counts a graph's Gemm nodes and the bytes of the biases they read.
func gemmBiasBytes(m *graph.Model) (r struct{ gemms, bytes int64 }) {
	for _, n := range m.Nodes {
		if n.OpType != "Gemm" {
			continue
		}
		r.gemms++
		if len(n.Inputs) > 2 && n.Inputs[2] != nil {
			r.bytes += n.Inputs[2].Init.Size
		}
	}
	return r
}

func pct(got, want int64) float64 {
	if want == 0 {
		return 0
	}
	return 100 * float64(got-want) / float64(want)
}

// dumpOps writes the op sequences of both graphs (kernels only: no host values, no views) for
// a diff.
func dumpOps(t *testing.T, prefix string, ms ...*graph.Model) {
	for i, m := range ms {
		var sb strings.Builder
		for _, n := range m.Nodes {
			if stepKind(n) != RunKernel {
				continue
			}
			var ins []string
			for _, v := range n.Inputs {
				if v != nil {
					ins = append(ins, v.DType.String()+v.Shape.String())
				}
			}
			fmt.Fprintf(&sb, "%s.%s(%s) -> %s%s\n", n.Domain, n.OpType, strings.Join(ins, ", "), n.Outputs[0].DType, n.Outputs[0].Shape)
		}
		require.NoError(t, os.WriteFile(fmt.Sprintf("%s.%d.txt", prefix, i), []byte(sb.String()), 0o644))
	}
}

func dumpBuffers(t *testing.T, path string, p *Planned) {
	var sb strings.Builder
	for i, bf := range p.Lifetimes.Problem.Buffers {
		o := p.Lifetimes.Owners[i]
		what := "ws"
		if len(o.Values) > 0 {
			what = o.Values[0].DType.String() + o.Values[0].Shape.String()
			if o.Values[0].Producer != nil {
				what = o.Values[0].Producer.OpType + " " + what
			} else {
				what = "input " + what
			}
		} else if o.Node != nil {
			what = "ws " + o.Node.OpType
		}
		fmt.Fprintf(&sb, "%d %d-%d %s\n", bf.Size, bf.Start, bf.End, what)
	}
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
}
