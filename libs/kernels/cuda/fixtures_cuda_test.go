//go:build cuda

package cuda

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
)

// TestFixtureModelsOnGPU runs every fixture model with data, node by node, through the CUDA
// kernels (every value its own device buffer; host-evaluated values uploaded) and compares the
// outputs with onnxruntime's, as the CPU backend's fixture test does (max relative difference
// 1e-4 against max(1, |want|) for float32, exact for int64).
func TestFixtureModelsOnGPU(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	reg, err := Registry()
	require.NoError(t, err)
	put := func(dt graph.DType, shape []int64, raw []byte) kernels.Tensor {
		p := devBuf(t, b.dev, int64(len(raw)))
		if len(raw) > 0 {
			require.NoError(t, b.CopyIn(p, raw, s))
		}
		tn := kernels.Tensor{DType: dt, Shape: shape}
		b.Bind(&tn, p, int64(len(raw)))
		return tn
	}
	for _, fm := range testmodels.Models() {
		if len(fm.Bindings) == 0 || fm.MissingExternalData != "" {
			continue
		}
		t.Run(fm.Name, func(t *testing.T) {
			m, err := graph.Load(fm.WriteTemp(t))
			require.NoError(t, err)
			defer m.Close()
			for bi, bd := range fm.Bindings {
				if bd.Error != "" {
					continue
				}
				bind, err := graph.Bind(m, bd.Dims)
				require.NoError(t, err)
				vals := map[int]kernels.Tensor{}
				for _, v := range m.Initializers {
					h, err := v.Init.Host()
					require.NoError(t, err)
					vals[v.ID] = put(h.DType, h.Shape, h.Data)
				}
				for _, v := range m.Inputs {
					a, err := testmodels.ReadArray(bd.Inputs[v.Name])
					require.NoError(t, err, v.Name)
					switch v.DType {
					case graph.Float32:
						vals[v.ID] = put(v.DType, a.Shape, kernels.BytesOf(a.Float32))
					case graph.Int64:
						vals[v.ID] = put(v.DType, a.Shape, kernels.BytesOf(a.Int64))
					default:
						t.Fatalf("input %s is %v", v.Name, v.DType)
					}
				}
				kernelsRun := 0
				for _, gn := range m.Nodes {
					host := true
					for _, o := range gn.Outputs {
						if o != nil {
							if _, ok := bind.Host(o); !ok {
								host = false
							}
						}
					}
					if host {
						for _, o := range gn.Outputs {
							if o != nil {
								h, _ := bind.Host(o)
								vals[o.ID] = put(h.DType, h.Shape, h.Data)
							}
						}
						continue
					}
					n := &kernels.Node{Name: gn.Name, Op: gn.OpType, Domain: gn.Domain, Opset: m.Opsets[gn.Domain], Attrs: gn.Attrs}
					in := make([]kernels.Tensor, len(gn.Inputs))
					for i, v := range gn.Inputs {
						if v == nil {
							n.Inputs = append(n.Inputs, kernels.Value{})
							continue
						}
						tn, ok := vals[v.ID]
						require.True(t, ok, "%s: input %s has no value", gn, v.Name)
						in[i] = tn
						n.Inputs = append(n.Inputs, kernels.Value{DType: tn.DType, Shape: tn.Shape})
					}
					out := make([]kernels.Tensor, len(gn.Outputs))
					for i, v := range gn.Outputs {
						if v == nil {
							n.Outputs = append(n.Outputs, kernels.Value{})
							continue
						}
						shape := bind.Shape(v)
						n.Outputs = append(n.Outputs, kernels.Value{DType: v.DType, Shape: shape})
						size, err := kernels.ByteSize(v.DType, shape)
						require.NoError(t, err)
						out[i] = kernels.Tensor{DType: v.DType, Shape: shape}
						b.Bind(&out[i], devBuf(t, b.dev, size), size)
					}
					inst, err := reg.Select(n, b.Target())
					require.NoError(t, err, "%s", gn)
					require.NoError(t, inst.Run(in, out, workspace(t, b, inst), s), "%s", gn)
					for i, v := range gn.Outputs {
						if v != nil {
							vals[v.ID] = out[i]
						}
					}
					kernelsRun++
				}
				require.NoError(t, b.dev.SynchronizeStream(s))
				compared := 0
				for _, v := range m.Outputs {
					file, ok := bd.Outputs[v.Name]
					if !ok {
						continue
					}
					compared++
					want, err := testmodels.ReadArray(file)
					require.NoError(t, err)
					got := vals[v.ID]
					require.Equal(t, want.Shape, got.Shape, "output %s", v.Name)
					n, err := kernels.ByteSize(got.DType, got.Shape)
					require.NoError(t, err)
					raw := make([]byte, n)
					require.NoError(t, b.CopyOut(raw, got.Addr, s))
					require.NoError(t, b.dev.SynchronizeStream(s))
					switch {
					case want.Float32 != nil:
						g := kernels.ViewAs[float32](raw)
						maxRel := 0.0
						for i, w := range want.Float32 {
							d := math.Abs(float64(g[i]-w)) / math.Max(1, math.Abs(float64(w)))
							if math.IsNaN(d) {
								d = math.Inf(1)
							}
							maxRel = math.Max(maxRel, d)
						}
						t.Logf("FIXTURE %s binding %v output %s: %d kernels, max relative difference %.2g", fm.Name, bd.Dims, v.Name, kernelsRun, maxRel)
						require.LessOrEqual(t, maxRel, 1e-4, "output %s binding %d %v", v.Name, bi, bd.Dims)
					default:
						require.Equal(t, want.Int64, kernels.ViewAs[int64](raw), "output %s", v.Name)
					}
				}
				require.Positive(t, compared, "binding %d compares no outputs", bi)
			}
		})
	}
}
