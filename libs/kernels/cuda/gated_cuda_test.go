//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// TestGatedMatMul checks both tactics against the float64 reference Y = swish(A Wg, alpha) * (A
// Wu): gemv at one row (N a multiple of 8 or not, a weight 16-byte aligned or not: the unaligned
// kernel), cublaslt at more rows (in chunks past 512 rows) and in float32, alpha 1 and not, at its
// workspace cap and at the need the device measures.
func TestGatedMatMul(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	r := rand.New(rand.NewPCG(41, 42))
	cases := []struct {
		dt     graph.DType
		a      []int64
		k, n   int64
		alpha  float32
		wuOff  int64 // bytes Wu lies past a 256-byte aligned address
		tactic string
	}{
		{graph.BFloat16, []int64{1, 1, 1536}, 1536, 8960, 1, 0, "gemv"},
		{graph.BFloat16, []int64{1, 1536}, 1536, 256, 1.702, 0, "gemv"},
		{graph.Float16, []int64{1, 1, 100}, 100, 203, 1, 0, "gemv"},
		{graph.Float16, []int64{1, 64}, 64, 24, 1, 0, "gemv"},
		{graph.BFloat16, []int64{1, 1, 2048}, 2048, 1000, 1, 2, "gemv"},
		{graph.Float16, []int64{1, 8960}, 8960, 512, 1, 0, "gemv"},
		{graph.BFloat16, []int64{3, 1, 1536}, 1536, 8960, 1, 0, "cublaslt"},
		{graph.Float16, []int64{2, 5, 64}, 64, 40, 1.5, 0, "cublaslt"},
		{graph.Float32, []int64{1, 1, 300}, 300, 129, 1, 0, "cublaslt"},
		// more rows than a chunk of the up product: 512, 512 and 76 rows; 528 x 4 (the last 516);
		// rows of 75 halves, so that the chunks' SwiGLU starts off 16-byte alignment
		{graph.BFloat16, []int64{1, 1100, 64}, 64, 72, 1, 0, "cublaslt"},
		{graph.Float32, []int64{2, 1050, 48}, 48, 40, 1.3, 0, "cublaslt"},
		{graph.Float16, []int64{1300, 32}, 32, 75, 1, 0, "cublaslt"},
		{graph.BFloat16, []int64{1, 520, 1536}, 1536, 896, 1, 0, "cublaslt"}, // 512 + 8 rows of a prefill
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/%v/%dx%d/alpha%g/off%d", c.dt, c.a, c.k, c.n, c.alpha, c.wuOff)
		t.Run(name, func(t *testing.T) {
			out := append(append([]int64(nil), c.a[:len(c.a)-1]...), c.n)
			ws := []int64{c.k, c.n}
			node := &kernels.Node{Name: "gm", Op: "GatedMatMul", Domain: kernels.DomainCarve,
				Attrs: graph.NewAttributes(graph.Attribute{Name: "alpha", Kind: graph.AttrFloat, Float: c.alpha}),
				Inputs: []kernels.Value{{DType: c.dt, Shape: c.a}, {DType: c.dt, Shape: ws, Initializer: true},
					{DType: c.dt, Shape: ws, Initializer: true}},
				Outputs: []kernels.Value{{DType: c.dt, Shape: out}}}
			inst, err := b.Registry().Select(node, b.Target())
			require.NoError(t, err)
			require.Equal(t, c.tactic, inst.Tactic())
			m := numel(c.a) / c.k
			av := randomValues(r, c.dt, m*c.k)
			gv, uv := randomValues(r, c.dt, c.k*c.n), randomValues(r, c.dt, c.k*c.n)
			_, g, gmag := refMatMul([]int64{m, c.k}, ws, av, gv)
			_, u, umag := refMatMul([]int64{m, c.k}, ws, av, uv)
			raw := encode(c.dt, uv)
			wu := devBuf(t, b.dev, int64(len(raw))+c.wuOff)
			require.NoError(t, b.CopyIn(wu.Add(c.wuOff), raw, s))
			in := []kernels.Tensor{upload(t, b, s, c.dt, c.a, av), upload(t, b, s, c.dt, ws, gv),
				{DType: c.dt, Shape: ws, Addr: wu.Add(c.wuOff)}}
			// The cublaslt tactic runs at its cap and again with its "cublas" part at what the
			// device says its products need (the tight plan's workspace, engine.TightenEnvelope).
			wss := []*alloc.Workspace{workspace(t, b, inst)}
			if inst.(WorkspaceMeasurer).MeasuredPart() >= 0 {
				require.Equal(t, "cublaslt", c.tactic)
				wss = append(wss, tightWorkspace(t, b, inst))
			} else {
				require.Equal(t, "gemv", c.tactic)
			}
			for _, ws := range wss {
				y := outputTensor(t, b, s, c.dt, out)
				require.NoError(t, inst.Run(in, []kernels.Tensor{y}, ws, s))
				got := download(t, b, s, y)
				tol := 2 * gemmTolerance(c.dt)
				for i := range got {
					sg := g[i] / (1 + math.Exp(-float64(c.alpha)*g[i]))
					want := sg * u[i]
					allowed := tol*(1.2*math.Abs(u[i])*gmag[i]+math.Abs(sg)*umag[i]+math.Abs(want)) + 1e-6
					require.LessOrEqual(t, math.Abs(got[i]-want), allowed, "element %d: got %g, want %g", i, got[i], want)
				}
			}
		})
	}
}
