//go:build cuda

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// qwenLinears are Qwen2.5-1.5B's projections as MatMul [m, in] x [in, out], bf16: hidden 1536,
// intermediate 8960, 12 query heads and 2 KV heads of dim 128 (q 1536 + k 256 + v 256), vocab
// 151936.
var qwenLinears = []struct {
	name    string
	in, out int64
}{
	{"qkv", 1536, 2048},
	{"o", 1536, 1536},
	{"gate", 1536, 8960},
	{"down", 8960, 1536},
	{"lm_head", 1536, 151936},
}

// fillRandom fills n bytes at p with a repeated 16 MiB random pattern (bf16 values in [-1, 1)).
func fillRandom(tb testing.TB, b *Backend, s alloc.Stream, p alloc.Ptr, n int64, r *rand.Rand) {
	chunk := encode(graph.BFloat16, randomValues(r, graph.BFloat16, 8<<20))
	for off := int64(0); off < n; off += int64(len(chunk)) {
		require.NoError(tb, b.CopyIn(p.Add(off), chunk[:min(int64(len(chunk)), n-off)], s))
	}
}

// BenchmarkGemmQwen times the selected tactic (gemv at m = 1, else cuBLASLt) at Qwen2.5-1.5B's shapes: 10 GEMMs captured in one graph,
// replayed b.N times between two timing events, so launch overhead is excluded. It reports
// TFLOP/s and the bytes of operands and result moved per second.
func BenchmarkGemmQwen(bm *testing.B) {
	b := testBackend(bm)
	s := testStream(bm, b.dev)
	r := rand.New(rand.NewPCG(13, 14))
	const reps = 10
	for _, l := range qwenLinears {
		for _, m := range []int64{1, 512, 2048, 8192} {
			bm.Run(fmt.Sprintf("%s/m=%d", l.name, m), func(bm *testing.B) {
				node := matmulNode(graph.BFloat16, []int64{m, l.in}, []int64{l.in, l.out}, []int64{m, l.out})
				inst, err := b.Registry().Select(node, b.Target())
				require.NoError(bm, err)
				x, w, y := devBuf(bm, b.dev, m*l.in*2), devBuf(bm, b.dev, l.in*l.out*2), devBuf(bm, b.dev, m*l.out*2)
				fillRandom(bm, b, s, x, m*l.in*2, r)
				fillRandom(bm, b, s, w, l.in*l.out*2, r)
				ws := workspace(bm, b, inst)
				in := []kernels.Tensor{{DType: graph.BFloat16, Shape: []int64{m, l.in}, Addr: x}, {DType: graph.BFloat16, Shape: []int64{l.in, l.out}, Addr: w}}
				out := []kernels.Tensor{{DType: graph.BFloat16, Shape: []int64{m, l.out}, Addr: y}}
				require.NoError(bm, inst.Run(in, out, ws, s)) // warm: plan and kernels
				require.NoError(bm, b.dev.BeginCapture(s))
				for range reps {
					require.NoError(bm, inst.Run(in, out, ws, s))
				}
				g, err := b.dev.EndCapture(s)
				require.NoError(bm, err)
				defer b.dev.DestroyGraph(g)
				require.NoError(bm, b.dev.LaunchGraph(g, s))
				start, err := b.dev.NewTimingEvent()
				require.NoError(bm, err)
				end, err := b.dev.NewTimingEvent()
				require.NoError(bm, err)
				require.NoError(bm, b.dev.RecordEvent(start, s))
				bm.ResetTimer()
				for range bm.N {
					if err := b.dev.LaunchGraph(g, s); err != nil {
						bm.Fatal(err)
					}
				}
				require.NoError(bm, b.dev.RecordEvent(end, s))
				require.NoError(bm, b.dev.SynchronizeEvent(end))
				bm.StopTimer()
				ms, err := b.dev.ElapsedMs(start, end)
				require.NoError(bm, err)
				sec := float64(ms) / 1e3 / float64(bm.N*reps)
				need, err := inst.(WorkspaceMeasurer).MeasureWorkspace(b)
				require.NoError(bm, err)
				bm.ReportMetric(sec*1e6, "us/gemm")
				bm.ReportMetric(2*float64(m*l.in*l.out)/sec/1e12, "TFLOP/s")
				bm.ReportMetric(float64(2*(m*l.in+l.in*l.out+m*l.out))/sec/1e9, "GB/s")
				bm.ReportMetric(float64(need)/(1<<20), "ws_MiB")
			})
		}
	}
}
