//go:build parstats

package run

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"

	"carve.dev/libs/kernels/cpu"
	"github.com/stretchr/testify/require"
)

// TestParStats prints the worker pool's loops per run of a model (build tag parstats):
//
//	PARSTATS_MODEL=contrib_rotary PARSTATS_BATCH=8 PARSTATS_SEQ=128 PARSTATS_WORKERS=12 \
//	  GOMAXPROCS=12 go test -tags parstats -run TestParStats -v ./apps/runner/internal/run
//
// PARSTATS_MODEL is a fixture name or an .onnx path.
func TestParStats(t *testing.T) {
	model := os.Getenv("PARSTATS_MODEL")
	if model == "" {
		t.Skip("PARSTATS_MODEL not set")
	}
	b, s, w, runs := envInt("PARSTATS_BATCH", 1), envInt("PARSTATS_SEQ", 7), envInt("PARSTATS_WORKERS", 2), envInt("PARSTATS_RUNS", 5)
	path := model
	if _, err := os.Stat(model); err != nil {
		path = fixture(t, model)
	}
	reg := opTimedRegistry(t)
	r := load(t, Config{ModelPath: path, Envelope: env(fixed(int64(b)), fixed(int64(s))), Workers: w, Seed: 1, DeviceMemory: 8 << 30, Registry: reg})
	sess, ctx := r.Sessions[0], context.Background()
	for range 2 {
		_, err := sess.Run(ctx, r.Inputs)
		require.NoError(t, err)
	}
	cpu.ResetParStats()
	opMu.Lock()
	opTimes = map[string]time.Duration{}
	opMu.Unlock()
	start := time.Now()
	for range runs {
		_, err := sess.Run(ctx, r.Inputs)
		require.NoError(t, err)
	}
	total := time.Since(start)
	fmt.Printf("%s (%d, %d) workers %d: %.3f ms/run\n%s", model, b, s, w, float64(total)/float64(runs)/1e6, cpu.ParStats(runs))
	var ops []string
	for op := range opTimes {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return opTimes[ops[i]] > opTimes[ops[j]] })
	for _, op := range ops {
		fmt.Printf("  op %-24s %9.3f ms/run\n", op, float64(opTimes[op])/float64(runs)/1e6)
	}
}

var (
	opMu    sync.Mutex
	opTimes = map[string]time.Duration{}
)

func opTimedRegistry(tb testing.TB) *kernels.Registry {
	return wrappedCPU(tb, func(k kernels.Kernel) kernels.Kernel { return &opKernel{Kernel: k} })
}

type opKernel struct{ kernels.Kernel }

func (k *opKernel) Select(n *kernels.Node, d kernels.Target) (kernels.Instance, error) {
	inst, err := k.Kernel.Select(n, d)
	if err != nil {
		return nil, err
	}
	return &opInstance{Instance: inst, op: k.Op().Op}, nil
}

type opInstance struct {
	kernels.Instance
	op string
}

func (w *opInstance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	t0 := time.Now()
	err := w.Instance.Run(in, out, ws, s)
	d := time.Since(t0)
	opMu.Lock()
	opTimes[w.op] += d
	opMu.Unlock()
	return err
}
