package cpu

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
)

// refExec is a tiny reference executor for tests: it runs a bound model node by node in
// topological order, every value a plain host tensor, through the CPU kernels.
type refExec struct {
	t      testing.TB
	m      *graph.Model
	b      *graph.Binding
	values map[int]kernels.Tensor
	// maxRatio is the largest R/W seen (W computed over the node's own shapes).
	nodes int
	// steps, when record is set, are the executed nodes, ready to run again.
	record bool
	steps  []refStep
}

// refStep is one node's execution: its instance, operands and carved workspace.
type refStep struct {
	inst    kernels.Instance
	in, out []kernels.Tensor
	ws      *alloc.Workspace
	keep    []byte // the workspace's memory
}

func (e *refExec) tensorOf(v *graph.Value) kernels.Tensor {
	if t, ok := e.values[v.ID]; ok {
		return t
	}
	e.t.Fatalf("value %s has no data", v.Name)
	return kernels.Tensor{}
}

func (e *refExec) run(reg *kernels.Registry) error {
	for _, gn := range e.m.Nodes {
		n := &kernels.Node{Name: gn.Name, Op: gn.OpType, Domain: gn.Domain, Opset: e.m.Opsets[gn.Domain], Attrs: gn.Attrs}
		var in []kernels.Tensor
		for _, v := range gn.Inputs {
			if v == nil {
				n.Inputs = append(n.Inputs, kernels.Value{})
				in = append(in, kernels.Tensor{})
				continue
			}
			t := e.tensorOf(v)
			n.Inputs = append(n.Inputs, kernels.Value{DType: t.DType, Shape: t.Shape})
			in = append(in, t)
		}
		out := make([]kernels.Tensor, len(gn.Outputs))
		for i, v := range gn.Outputs {
			if v == nil {
				n.Outputs = append(n.Outputs, kernels.Value{})
				continue
			}
			shape := e.b.Shape(v)
			n.Outputs = append(n.Outputs, kernels.Value{DType: v.DType, Shape: shape})
			t, err := kernels.NewTensor(v.DType, shape...)
			if err != nil {
				return fmt.Errorf("%s: %w", gn, err)
			}
			out[i] = t
		}
		inst, err := reg.Select(n, dev)
		if err != nil {
			return fmt.Errorf("%s: %w", gn, err)
		}
		w, err := reg.Bound(kernels.RangeOf(n), dev)
		if err != nil {
			return fmt.Errorf("%s: bound: %w", gn, err)
		}
		size, err := inst.Recipe().Size()
		if err != nil {
			return err
		}
		if size > w.Bytes {
			return fmt.Errorf("%s: R %d > W %d", gn, size, w.Bytes)
		}
		reg, keep := region(size)
		if err := kernels.Execute(inst, in, out, reg, 0); err != nil {
			return fmt.Errorf("%s: %w", gn, err)
		}
		if e.record {
			st := refStep{inst: inst, in: in, out: out, keep: keep}
			if size > 0 {
				if st.ws, err = alloc.Carve(reg, inst.Recipe()); err != nil {
					return err
				}
			}
			e.steps = append(e.steps, st)
		}
		for i, v := range gn.Outputs {
			if v == nil {
				continue
			}
			e.values[v.ID] = out[i]
			// values the graph evaluated on the host at Bind must agree with the kernels
			if h, ok := e.b.Host(v); ok && v.DType != graph.Float32 {
				if string(h.Data) != string(out[i].Data) {
					return fmt.Errorf("%s: output %s: kernel %v differs from the host evaluation %v", gn, v.Name, out[i].Data, h.Data)
				}
			}
		}
		e.nodes++
	}
	return nil
}

func TestFixtureModels(t *testing.T) {
	for _, fm := range testmodels.Models() {
		if len(fm.Bindings) == 0 || fm.MissingExternalData != "" {
			continue
		}
		t.Run(fm.Name, func(t *testing.T) {
			path := fm.WriteTemp(t)
			m, err := graph.Load(path)
			require.NoError(t, err)
			defer m.Close()
			for bi, bd := range fm.Bindings {
				if bd.Error != "" {
					continue
				}
				b, err := graph.Bind(m, bd.Dims)
				require.NoError(t, err)
				e := &refExec{t: t, m: m, b: b, values: map[int]kernels.Tensor{}}
				for _, v := range m.Initializers {
					h, err := v.Init.Host()
					require.NoError(t, err)
					e.values[v.ID] = kernels.Tensor{DType: h.DType, Shape: h.Shape, Data: h.Data}
				}
				for _, v := range m.Inputs {
					a, err := testmodels.ReadArray(bd.Inputs[v.Name])
					require.NoError(t, err, v.Name)
					var tn kernels.Tensor
					switch v.DType {
					case graph.Float32:
						tn = f32(a.Shape, a.Float32)
					case graph.Int64:
						tn = i64(a.Shape, a.Int64)
					default:
						t.Fatalf("input %s is %v", v.Name, v.DType)
					}
					e.values[v.ID] = tn
				}
				start := time.Now()
				require.NoError(t, e.run(registry), "binding %d %v", bi, bd.Dims)
				t.Logf("binding %v: %d nodes in %v", bd.Dims, e.nodes, time.Since(start))
				compared := 0
				for _, v := range m.Outputs {
					file, ok := bd.Outputs[v.Name]
					if !ok {
						continue
					}
					compared++
					want, err := testmodels.ReadArray(file)
					require.NoError(t, err)
					got := e.values[v.ID]
					require.Equal(t, want.Shape, got.Shape, "output %s", v.Name)
					switch {
					case want.Float32 != nil:
						maxRel := 0.0
						for i, w := range want.Float32 {
							g := got.Float32s()[i]
							d := math.Abs(float64(g-w)) / math.Max(1, math.Abs(float64(w)))
							maxRel = math.Max(maxRel, d)
						}
						require.LessOrEqual(t, maxRel, 1e-4, "output %s binding %v", v.Name, bd.Dims)
						t.Logf("output %s: max relative difference %.2g", v.Name, maxRel)
					default:
						require.Equal(t, want.Int64, got.Int64s(), "output %s", v.Name)
					}
				}
				require.Positive(t, compared, "binding %d compares no outputs", bi)
			}
		})
	}
}

// fixtureInputs makes a fixture's inputs at any binding, by the fixtures' rule: ids (7i + 3)
// mod vocab, masks 1, token types 0, activations sin(0.37 i).
func fixtureInputs(t testing.TB, fm testmodels.Model, m *graph.Model, b *graph.Binding) map[int]kernels.Tensor {
	vals := map[int]kernels.Tensor{}
	for _, v := range m.Inputs {
		tn, err := kernels.NewTensor(v.DType, b.Shape(v)...)
		require.NoError(t, err)
		switch v.DType {
		case graph.Int64:
			for i := range tn.Int64s() {
				switch v.Name {
				case "input_ids":
					tn.Int64s()[i] = int64(7*i+3) % max(fm.Vocab, 1)
				case "attention_mask":
					tn.Int64s()[i] = 1
				}
			}
		case graph.Float32:
			for i := range tn.Float32s() {
				tn.Float32s()[i] = float32(math.Sin(0.37 * float64(i)))
			}
		default:
			t.Fatalf("input %s is %v", v.Name, v.DType)
		}
		vals[v.ID] = tn
	}
	return vals
}

// Once its instances are selected and their workspaces carved, running a whole fixture model
// allocates nothing, at the benchmark's bindings (seq 64 for the models whose position tables
// stop there).
func TestFixtureRunsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, fm := range testmodels.Models() {
		if len(fm.Bindings) == 0 || fm.MissingExternalData != "" {
			continue
		}
		t.Run(fm.Name, func(t *testing.T) {
			m, err := graph.Load(fm.WriteTemp(t))
			require.NoError(t, err)
			defer m.Close()
			for _, dims := range [][2]int64{{1, 7}, {3, 33}, {8, 64}} {
				b, err := graph.Bind(m, map[string]int64{"batch": dims[0], "seq": dims[1]})
				require.NoError(t, err)
				e := &refExec{t: t, m: m, b: b, values: fixtureInputs(t, fm, m, b), record: true}
				for _, v := range m.Initializers {
					h, err := v.Init.Host()
					require.NoError(t, err)
					e.values[v.ID] = kernels.Tensor{DType: h.DType, Shape: h.Shape, Data: h.Data}
				}
				require.NoError(t, e.run(registry), "%v", dims)
				allocs := testing.AllocsPerRun(5, func() {
					for _, st := range e.steps {
						if err := st.inst.Run(st.in, st.out, st.ws, 0); err != nil {
							t.Fatal(err)
						}
					}
				})
				require.Zero(t, allocs, "%s at (batch, seq) = %v allocates per run", fm.Name, dims)
			}
		})
	}
}
