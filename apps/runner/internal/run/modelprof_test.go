package run

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
	"github.com/stretchr/testify/require"
)

// TestModelProfile prints where a model's CPU runs spend their time: each kernel's Run timed
// alone, summed by op type, by op type and tactic, and by node (the top 25), against the runs'
// wall time (the rest is the executor and the stream between kernels). It is a measuring tool,
// skipped unless CARVE_BENCH_MODEL names an .onnx file:
//
//	CARVE_BENCH_MODEL=/tmp/gpt2s.onnx CARVE_BENCH_SHAPES=1x128,8x128 CARVE_BENCH_WORKERS=8,16 \
//	  CARVE_BENCH_RUNS=20 go test -run TestModelProfile -v ./apps/runner/internal/run
func TestModelProfile(t *testing.T) {
	model := os.Getenv("CARVE_BENCH_MODEL")
	if model == "" {
		t.Skip("CARVE_BENCH_MODEL not set")
	}
	runs := envInt("CARVE_BENCH_RUNS", 10)
	workers := os.Getenv("CARVE_BENCH_WORKERS")
	if workers == "" {
		workers = "2"
	}
	shapes := os.Getenv("CARVE_BENCH_SHAPES")
	if shapes == "" {
		shapes = "1x128"
	}
	for _, sh := range strings.Split(shapes, ",") {
		var b, s int64
		_, err := fmt.Sscanf(sh, "%dx%d", &b, &s)
		require.NoError(t, err, "CARVE_BENCH_SHAPES: BxS,BxS")
		for _, w := range strings.Split(workers, ",") {
			n, err := strconv.Atoi(w)
			require.NoError(t, err, "CARVE_BENCH_WORKERS: N,N")
			profileModel(t, model, b, s, n, runs)
		}
	}
}

func profileModel(t *testing.T, model string, b, s int64, workers, runs int) {
	prof := &nodeProfile{}
	r := load(t, Config{ModelPath: model, Envelope: env(fixed(b), fixed(s)), Workers: workers, Seed: 1,
		DeviceMemory: 16 << 30, Registry: prof.registry(t)})
	sess, ctx := r.Sessions[0], context.Background()
	for range 3 {
		_, err := sess.Run(ctx, r.Inputs)
		require.NoError(t, err)
	}
	prof.reset()
	lat := make([]time.Duration, 0, runs)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		t0 := time.Now()
		_, err := sess.Run(ctx, r.Inputs)
		require.NoError(t, err)
		lat = append(lat, time.Since(t0))
	}
	runtime.ReadMemStats(&after)
	slices.Sort(lat)
	var wall time.Duration
	for _, d := range lat {
		wall += d
	}
	n := float64(runs)
	ms := func(d int64) float64 { return float64(d) / n / 1e6 }
	kern := prof.total()
	fmt.Printf("\n== %s (%d, %d) workers %d, %d runs: p50 %.3f ms, min %.3f ms, mean %.3f ms; kernels %.3f ms, outside kernels %.3f ms; go allocs/run %.1f\n",
		model, b, s, workers, runs, float64(lat[(len(lat)-1)/2])/1e6, float64(lat[0])/1e6, float64(wall)/n/1e6,
		ms(kern), ms(int64(wall)-kern), float64(after.Mallocs-before.Mallocs)/n)
	table := func(title string, key func(*nodeTiming) string, limit int) {
		sums, counts := map[string]int64{}, map[string]int{}
		for _, nt := range prof.nodes {
			k := key(nt)
			sums[k] += nt.spent.Load()
			counts[k]++
		}
		keys := make([]string, 0, len(sums))
		for k := range sums {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(x, y string) int { return int(sums[y] - sums[x]) })
		fmt.Printf("-- by %s (ms per run, share of kernel time, instances)\n", title)
		for i, k := range keys {
			if i == limit || sums[k] == 0 { // limit < 0: all
				break
			}
			fmt.Printf("  %9.3f %5.1f%% %4d  %s\n", ms(sums[k]), 100*float64(sums[k])/float64(kern), counts[k], k)
		}
	}
	table("op type", func(nt *nodeTiming) string { return nt.op }, -1)
	table("op type, tactic and shapes", func(nt *nodeTiming) string { return nt.op + " " + nt.tactic + " " + nt.shapes }, 30)
	table("node", func(nt *nodeTiming) string { return nt.name + " " + nt.op + " " + nt.tactic + " " + nt.shapes }, 25)
}

// nodeProfile times each selected instance's Run.
type nodeProfile struct {
	mu    sync.Mutex
	nodes []*nodeTiming
}

type nodeTiming struct {
	name, op, tactic, shapes string
	spent                    atomic.Int64
}

func (p *nodeProfile) registry(tb testing.TB) *kernels.Registry {
	return wrappedCPU(tb, func(k kernels.Kernel) kernels.Kernel { return &profKernel{Kernel: k, p: p} })
}

func (p *nodeProfile) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, nt := range p.nodes {
		nt.spent.Store(0)
	}
}

func (p *nodeProfile) total() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var t int64
	for _, nt := range p.nodes {
		t += nt.spent.Load()
	}
	return t
}

type profKernel struct {
	kernels.Kernel
	p *nodeProfile
}

func (k *profKernel) Select(n *kernels.Node, d kernels.Target) (kernels.Instance, error) {
	inst, err := k.Kernel.Select(n, d)
	if err != nil {
		return nil, err
	}
	var sh []string
	for _, v := range n.Inputs {
		sh = append(sh, fmt.Sprint(v.Shape))
	}
	nt := &nodeTiming{name: n.Name, op: n.Key().String(), tactic: inst.Tactic(), shapes: strings.Join(sh, ",")}
	k.p.mu.Lock()
	k.p.nodes = append(k.p.nodes, nt)
	k.p.mu.Unlock()
	return &profInstance{Instance: inst, nt: nt}, nil
}

type profInstance struct {
	kernels.Instance
	nt *nodeTiming
}

func (w *profInstance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	t0 := time.Now()
	err := w.Instance.Run(in, out, ws, s)
	w.nt.spent.Add(int64(time.Since(t0)))
	return err
}
