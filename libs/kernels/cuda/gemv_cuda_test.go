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

// gemvCase is one product Y = alpha * A[m, k] B[k, n] + beta * C for the gemv tactic.
type gemvCase struct {
	dt          graph.DType
	m, k, n     int64
	alpha, beta float32
	c           []int64     // C's shape; nil: none (a MatMul when alpha is 1)
	cfg         *gemvConfig // nil: the one selection picks
	bOff        int64       // bytes B lies past a 256-byte aligned address
}

// runGemvCase selects c's node, makes it the gemv tactic (with c.cfg, or the geometry gemvChoose
// picks) whatever the selection's choice, runs it and checks Y against the float64 reference.
func runGemvCase(t *testing.T, b *Backend, s alloc.Stream, r *rand.Rand, c gemvCase) {
	t.Helper()
	dt, m, k, n := c.dt, c.m, c.k, c.n
	as, bs, ys := []int64{m, k}, []int64{k, n}, []int64{m, n}
	var node *kernels.Node
	if c.c == nil && c.alpha == 1 {
		node = matmulNode(dt, as, bs, ys)
	} else {
		node = gemmNodeAlpha(dt, false, false, c.alpha, c.beta, as, bs, c.c, ys)
	}
	inst, err := b.Registry().Select(node, b.Target())
	require.NoError(t, err)
	g := *inst.(*gemmInstance)
	require.True(t, gemvApplies(&g, b.Target()))
	cfg, ok := gemvChoose(&g)
	require.True(t, ok)
	if c.cfg != nil {
		cfg = *c.cfg
	}
	g.gemv, err = gemvProgram(&g, cfg, b.Target())
	require.NoError(t, err)
	av, bv := randomValues(r, dt, m*k), randomValues(r, dt, k*n)
	_, want, mag := refMatMul(as, bs, av, bv)
	for i := range want {
		want[i] *= float64(c.alpha)
		mag[i] *= math.Abs(float64(c.alpha))
	}
	raw := encode(dt, bv)
	bp := devBuf(t, b.dev, int64(len(raw))+c.bOff)
	require.NoError(t, b.CopyIn(bp.Add(c.bOff), raw, s))
	in := []kernels.Tensor{upload(t, b, s, dt, as, av), {DType: dt, Shape: bs, Addr: bp.Add(c.bOff)}}
	if c.c != nil {
		cv := randomValues(r, dt, gemmNumel(c.c))
		in = append(in, upload(t, b, s, dt, c.c, cv))
		full := append(make([]int64, 2-len(c.c)), c.c...)
		for i := range 2 - len(c.c) {
			full[i] = 1
		}
		for i := int64(0); i < m; i++ {
			for j := int64(0); j < n; j++ {
				x := float64(c.beta) * cv[(i%full[0])*full[1]+j%full[1]]
				want[i*n+j] += x
				mag[i*n+j] += math.Abs(x)
			}
		}
	}
	y := outputTensor(t, b, s, dt, ys)
	require.NoError(t, g.Run(in, []kernels.Tensor{y}, nil, s))
	requireClose(t, dt, download(t, b, s, y), want, mag)
}

// TestGemv checks the gemv kernel against the float64 reference for M 1..4 over a spread of K
// and N: odd N, N not a multiple of 8, K not a multiple of the split, tiny K, with and without a
// bias row, alpha != 1, a full and a broadcast C, B not 16-byte aligned, both dtypes.
func TestGemv(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	r := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []graph.DType{graph.BFloat16, graph.Float16} {
		for m := int64(1); m <= gemvMaxRows; m++ {
			for _, kn := range [][2]int64{{1, 8}, {3, 1}, {7, 13}, {64, 24}, {100, 203}, {1000, 264}, {1536, 256}, {2049, 136}, {8960, 200}} {
				c := gemvCase{dt: dt, m: m, k: kn[0], n: kn[1], alpha: 1, beta: 1}
				t.Run(fmt.Sprintf("%v/%dx%dx%d", dt, m, c.k, c.n), func(t *testing.T) { runGemvCase(t, b, s, r, c) })
			}
		}
		for _, c := range []gemvCase{
			{m: 1, k: 1536, n: 8960, alpha: 1, beta: 1},
			{m: 1, k: 8960, n: 1536, alpha: 1, beta: 1},
			{m: 1, k: 1536, n: 2048, alpha: 1, beta: 1, c: []int64{2048}},          // packed qkv proj
			{m: 1, k: 1536, n: 256, alpha: 1, beta: 1, c: []int64{256}},            // k/v proj: bias row
			{m: 4, k: 1536, n: 1536, alpha: 1, beta: 1, c: []int64{1, 1536}},       // q proj at 4 rows
			{m: 3, k: 333, n: 40, alpha: 0.5, beta: 1, c: []int64{40}},             // alpha scales the product only
			{m: 1, k: 96, n: 40, alpha: 2, beta: 0.25, c: []int64{1, 40}},          // C full at M = 1
			{m: 4, k: 96, n: 40, alpha: -1, beta: 3, c: []int64{4, 40}},            // C full
			{m: 3, k: 70, n: 23, alpha: 1, beta: 2, c: []int64{3, 1}},              // C broadcast along N
			{m: 2, k: 70, n: 23, alpha: 1.5, beta: 0.5, c: []int64{}},              // scalar C
			{m: 4, k: 500, n: 48, alpha: 1, beta: 1, bOff: 2},                      // B not 16-byte aligned
			{m: 2, k: 1536, n: 1536, alpha: 1, beta: 1, bOff: 8, c: []int64{1536}}, // and a bias
		} {
			c.dt = dt
			t.Run(fmt.Sprintf("%v/%dx%dx%d a=%v b=%v C=%v off=%d", dt, c.m, c.k, c.n, c.alpha, c.beta, c.c, c.bOff), func(t *testing.T) {
				runGemvCase(t, b, s, r, c)
			})
		}
	}
}

// TestGemvGeometries runs every geometry the kernel has on shapes with partial tiles and slices,
// with B aligned (the ring kernels) and not (the element-load kernels).
func TestGemvGeometries(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	r := rand.New(rand.NewPCG(23, 24))
	for cw := 1; cw <= 5; cw++ {
		for _, split := range []int64{1, 2, 4, 8} {
			for _, c := range []gemvCase{
				{dt: graph.BFloat16, m: 3, k: 1001, n: 200, alpha: 1, beta: 1},
				{dt: graph.BFloat16, m: 3, k: 1001, n: 200, alpha: 1, beta: 1, bOff: 4},
				{dt: graph.Float16, m: 4, k: 77, n: 203, alpha: 1, beta: 1, c: []int64{203}},
				{dt: graph.BFloat16, m: 1, k: 5, n: 520, alpha: 1, beta: 1},
				{dt: graph.BFloat16, m: 2, k: 1536, n: 264, alpha: 1, beta: 1},
			} {
				c.cfg = &gemvConfig{cwlog: cw, split: split}
				t.Run(fmt.Sprintf("cw%d-s%d/%v/%dx%dx%d+%d", 1<<cw, split, c.dt, c.m, c.k, c.n, c.bOff), func(t *testing.T) {
					runGemvCase(t, b, s, r, c)
				})
			}
		}
	}
}

// gemvTiming is the time per run of inst over the decode shape m x k x n (bf16), from a replayed
// CUDA graph of runs that each read another copy of the weight, so that the weights come from
// memory, not from the 60 MB L2, as at a decode step.
func gemvTiming(t *testing.T, b *Backend, s alloc.Stream, inst kernels.Instance, m, k, n int64, x, pool alloc.Ptr, poolBytes int64, y alloc.Ptr) float64 {
	t.Helper()
	wb := (k*n*2 + 255) &^ 255
	copies := max(poolBytes/wb, 1)
	reps := min(max(copies, 20), 400)
	ws := workspace(t, b, inst)
	bf := graph.BFloat16
	run := func(i int64) error {
		in := []kernels.Tensor{{DType: bf, Shape: []int64{m, k}, Addr: x}, {DType: bf, Shape: []int64{k, n}, Addr: pool.Add((i % copies) * wb)}}
		return inst.Run(in, []kernels.Tensor{{DType: bf, Shape: []int64{m, n}, Addr: y}}, ws, s)
	}
	require.NoError(t, run(0)) // warm: function lookups, plans
	require.NoError(t, b.dev.BeginCapture(s))
	for i := range reps {
		require.NoError(t, run(i))
	}
	g, err := b.dev.EndCapture(s)
	require.NoError(t, err)
	defer b.dev.DestroyGraph(g)
	require.NoError(t, b.dev.LaunchGraph(g, s))
	start, err := b.dev.NewTimingEvent()
	require.NoError(t, err)
	end, err := b.dev.NewTimingEvent()
	require.NoError(t, err)
	const replays = 5
	require.NoError(t, b.dev.RecordEvent(start, s))
	for range replays {
		require.NoError(t, b.dev.LaunchGraph(g, s))
	}
	require.NoError(t, b.dev.RecordEvent(end, s))
	require.NoError(t, b.dev.SynchronizeEvent(end))
	ms, err := b.dev.ElapsedMs(start, end)
	require.NoError(t, err)
	return float64(ms) * 1e3 / float64(replays*reps)
}

// product is one of a decode step's products: K x N, the weight's shape.
type product struct {
	name string
	k, n int64
}

// qwenProducts are Qwen2.5-1.5B's decode products, the largest first.
var qwenProducts = []product{{"gate/up", 1536, 8960}, {"down", 8960, 1536}, {"q/o", 1536, 1536}, {"qkv", 1536, 2048}, {"k/v", 1536, 256}}

// gemvPoolBytes is the weight copies' pool of the gemv benchmarks: far more than the L2.
const gemvPoolBytes = 512 << 20

// gemvBenchBuffers are the gemv benchmarks' backend, stream and random buffers: A (up to 8 rows
// of 8960), the pool of weight copies and Y.
func gemvBenchBuffers(t *testing.T, seed uint64) (b *Backend, s alloc.Stream, x, pool, y alloc.Ptr) {
	b = testBackend(t)
	s = testStream(t, b.dev)
	r := rand.New(rand.NewPCG(seed, seed+1))
	pool = devBuf(t, b.dev, gemvPoolBytes)
	fillRandom(t, b, s, pool, gemvPoolBytes, r)
	x = devBuf(t, b.dev, 8*8960*2)
	fillRandom(t, b, s, x, 8*8960*2, r)
	y = devBuf(t, b.dev, 8*8960*2)
	return b, s, x, pool, y
}

// TestGemvBench compares gemv with cublaslt at Qwen2.5-1.5B's decode shapes when CARVE_BENCH is
// set: one "BENCH GEMV" line per shape and row count, us and TB/s (operand and result bytes per
// second) of each, and the tactic selection picks.
func TestGemvBench(t *testing.T) {
	benchOnly(t)
	b, s, x, pool, y := gemvBenchBuffers(t, 25)
	for _, sh := range qwenProducts {
		for _, m := range []int64{1, 2, 4, 8} {
			node := matmulNode(graph.BFloat16, []int64{m, sh.k}, []int64{sh.k, sh.n}, []int64{m, sh.n})
			inst, err := b.Registry().Select(node, b.Target())
			require.NoError(t, err)
			lt := *inst.(*gemmInstance)
			lt.gemv = nil
			bytes := float64(2 * (m*sh.k + sh.k*sh.n + m*sh.n))
			tl := gemvTiming(t, b, s, &lt, m, sh.k, sh.n, x, pool, gemvPoolBytes, y)
			gv := "gemv       -  (no kernel for M > 4)     "
			if m <= gemvMaxRows {
				g := lt
				c, ok := gemvChoose(&g)
				require.True(t, ok)
				g.gemv, err = gemvProgram(&g, c, b.Target())
				require.NoError(t, err)
				tg := gemvTiming(t, b, s, &g, m, sh.k, sh.n, x, pool, gemvPoolBytes, y)
				gv = fmt.Sprintf("gemv %6.2f us %5.2f TB/s (cw %2d split %d)", tg, bytes/tg/1e6, 1<<c.cwlog, c.split)
			}
			fmt.Printf("BENCH GEMV %-8s M=%d K=%-5d N=%-5d %s  cublaslt %6.2f us %5.2f TB/s  selected %s\n",
				sh.name, m, sh.k, sh.n, gv, tl, bytes/tl/1e6, inst.Tactic())
		}
	}
}

// TestGemvSweep times every geometry of the gemv kernel at Qwen2.5-1.5B's one-row decode shapes
// when CARVE_BENCH is set, with B a weight (read before the dependent launch's wait, as at a
// decode step): one "BENCH SWEEP" line per shape and geometry, and the geometry gemvChoose picks.
func TestGemvSweep(t *testing.T) {
	benchOnly(t)
	b, s, x, pool, y := gemvBenchBuffers(t, 27)
	for _, sh := range qwenProducts[:4] {
		node := matmulNode(graph.BFloat16, []int64{1, sh.k}, []int64{sh.k, sh.n}, []int64{1, sh.n})
		node.Inputs[1].Initializer = true
		inst, err := b.Registry().Select(node, b.Target())
		require.NoError(t, err)
		g := *inst.(*gemmInstance)
		chosen, ok := gemvChoose(&g)
		require.True(t, ok)
		bytes := float64(2 * (sh.k + sh.k*sh.n + sh.n))
		for cw := 2; cw <= 5; cw++ {
			for _, split := range []int64{1, 2, 4, 8} {
				c := gemvConfig{cwlog: cw, split: split}
				if gemvStage(&g, c) > gemvMaxStage {
					continue
				}
				g.gemv, err = gemvProgram(&g, c, b.Target())
				if err != nil {
					continue
				}
				tg := gemvTiming(t, b, s, &g, 1, sh.k, sh.n, x, pool, gemvPoolBytes, y)
				mark := ""
				if c == chosen {
					mark = "  (chosen)"
				}
				fmt.Printf("BENCH SWEEP %-8s K=%-5d N=%-5d cw %2d split %d blocks %4d  %6.2f us %5.2f TB/s%s\n",
					sh.name, sh.k, sh.n, 1<<cw, split, (sh.n+(8<<cw)-1)/(8<<cw)*split, tg, bytes/tg/1e6, mark)
			}
		}
	}
}

// TestGemmAlgoSweep times each of cuBLASLt's heuristic results (up to 16, in its order) at the
// decode step's products when CARVE_BENCH is set: one "BENCH ALGO" line per shape, row count and
// result, us and TB/s ("-" past the results the heuristic returns). On the H200 the gate/up
// product at one row took 9.11 us with the heuristic's first result and 8.59 with its third.
func TestGemmAlgoSweep(t *testing.T) {
	benchOnly(t)
	b, s, x, pool, y := gemvBenchBuffers(t, 29)
	for _, sh := range append(qwenProducts[:2:2], product{"lm_head", 1536, 151936}) {
		for _, m := range []int64{1, 8} {
			node := matmulNode(graph.BFloat16, []int64{m, sh.k}, []int64{sh.k, sh.n}, []int64{m, sh.n})
			inst, err := b.Registry().Select(node, b.Target())
			require.NoError(t, err)
			bytes := float64(2 * (m*sh.k + sh.k*sh.n + m*sh.n))
			for i := 1; i <= 16; i++ {
				g := *inst.(*gemmInstance)
				g.gemv, g.algoIndex = nil, i
				if _, err := g.MeasureWorkspace(b); err != nil {
					fmt.Printf("BENCH ALGO %-8s M=%d K=%-5d N=%-6d result %2d  -  %v\n", sh.name, m, sh.k, sh.n, i-1, err)
					continue
				}
				tg := gemvTiming(t, b, s, &g, m, sh.k, sh.n, x, pool, gemvPoolBytes, y)
				fmt.Printf("BENCH ALGO %-8s M=%d K=%-5d N=%-6d result %2d  %7.2f us %5.2f TB/s\n", sh.name, m, sh.k, sh.n, i-1, tg, bytes/tg/1e6)
			}
		}
	}
}
