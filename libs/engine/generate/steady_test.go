package generate

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
)

// TestDecodeAllocatesNothing: after one generation has met every bucket, another plans no
// pattern, compiles no program and makes no Go allocation per decode step on the CPU, eagerly
// and with each pattern replayed as a graph: a
// generation of 40 tokens (prefill, decode buckets 32 and 64) allocates what one of 2 tokens
// does, its result slices.
func TestDecodeAllocatesNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		graphs bool
	}{{"qwen2_gqa", false}, {"qwen2_kv", false}, {"qwen2_gqa", true}, {"qwen2_kv", true}} {
		name := tc.name
		t.Run(fmt.Sprintf("%s/graphs=%v", name, tc.graphs), func(t *testing.T) {
			loaded, err := graph.Load(testmodels.MustGet(name).WriteTemp(t))
			require.NoError(t, err)
			defer loaded.Close()
			m, c, err := Prepare(loaded, Names{})
			require.NoError(t, err)
			be, err := cpu.Open(kernels.OpenOptions{Memory: 1 << 30, Workers: 2})
			require.NoError(t, err)
			defer be.Close()
			al, err := alloc.New(be.Device(), alloc.Options{})
			require.NoError(t, err)
			defer al.Close()
			cfg := Config{Batch: 2, Context: 64, Prompt: 20}
			ro, err := c.RuntimeOptions(m, cfg, engine.RuntimeOptions{Options: engine.Options{Workers: 2}, Graphs: tc.graphs})
			require.NoError(t, err)
			rt, err := engine.NewRuntime(context.Background(), m, be, al, ro)
			require.NoError(t, err)
			defer rt.Close()
			s, err := rt.NewSession()
			require.NoError(t, err)
			defer s.Close()
			g, err := New(rt, s, c, cfg)
			require.NoError(t, err)

			prompt := make([]int64, 2*20)
			for i := range prompt {
				prompt[i] = int64(i*7) % c.Vocab
			}
			ctx := context.Background()
			generate := func(n int) func() {
				return func() {
					if _, _, err := g.Generate(ctx, prompt, 20, n, Greedy{}, nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			generate(40)() // the warm-up: every bucket
			before := rt.Stats()
			long := testing.AllocsPerRun(5, generate(40))
			short := testing.AllocsPerRun(5, generate(2))
			after := rt.Stats()
			require.Equal(t, short, long, "39 decode steps allocate what 1 does")
			require.LessOrEqual(t, long, 2.0, "a generation allocates its result slices only")
			require.Equal(t, before.Patterns.Misses, after.Patterns.Misses, "no pattern planned")
			require.Equal(t, before.Programs.Misses, after.Programs.Misses, "no program compiled")
		})
	}
}
