package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/engine"
	"carve.dev/libs/engine/generate"
	"carve.dev/libs/graph/testmodels"
)

// genFixture is a fixture with a KV cache and onnxruntime's greedy generation: the prompt
// [batch, promptLen] and the tokens [batch, steps].
type genFixture struct {
	path           string
	prompt, tokens testmodels.Array
}

// kvFixture writes fixture name to a temporary directory, with its greedy generation.
func kvFixture(t *testing.T, name string) genFixture {
	t.Helper()
	fx := testmodels.MustGet(name)
	prompt, err := testmodels.ReadArray(name + ".gen.prompt.npy")
	require.NoError(t, err)
	tokens, err := testmodels.ReadArray(name + ".gen.tokens.npy")
	require.NoError(t, err)
	return genFixture{path: fx.WriteTemp(t), prompt: prompt, tokens: tokens}
}

// kvFixtures are the fixtures with a KV cache, in both forms.
var kvFixtures = []string{"qwen2_gqa", "qwen2_kv"}

// TestGenerateMatchesOnnxruntime generates greedily from the fixtures' prompts and compares the
// tokens with onnxruntime's; the reservation is what the allocator reserved, to the byte.
func TestGenerateMatchesOnnxruntime(t *testing.T) {
	for _, name := range kvFixtures {
		for _, device := range []string{"cpu", "sim"} {
			t.Run(name+"/"+device, func(t *testing.T) {
				fx := kvFixture(t, name)
				batch, plen, steps := fx.prompt.Shape[0], fx.prompt.Shape[1], int(fx.tokens.Shape[1])
				g, err := LoadGenerator(context.Background(), GenerateConfig{
					Config: Config{ModelPath: fx.path, Device: device, Workers: 2, DeviceMemory: 1 << 30},
					Prompt: fx.prompt.Int64, PromptLen: plen, Batch: batch, MaxNew: steps, Context: 64,
				})
				require.NoError(t, err)
				defer func() { require.NoError(t, g.Close()) }()
				mem := g.Memory
				require.Equal(t, mem.DeviceWeightBytes+mem.ArenaBytes+mem.StateBytes, mem.ReservedBytes)
				require.Equal(t, mem.ReservedBytes, g.Replica.Alloc.Stats().ReservedBytes, "the allocator reserved what the report says")
				require.Equal(t, g.Cache.BytesPerToken(), mem.KVBytesPerToken)
				if device == "sim" {
					require.Positive(t, mem.DeviceWeightBytes)
				}

				res, err := g.Run(context.Background())
				require.NoError(t, err)
				require.Equal(t, fx.tokens.Int64, res.Tokens, "greedy tokens equal onnxruntime's")
				require.Equal(t, steps-1, res.Timed.DecodeSteps)
				require.Len(t, g.Prompt, int(batch*plen))
			})
		}
	}
}

// TestGenerateSteadyState: after the warm-up, the timed generation plans nothing, compiles
// nothing and mallocs nothing on the device or in the allocator, with the decode meeting two
// buckets (past 32 and 64) and the prefill one.
func TestGenerateSteadyState(t *testing.T) {
	for _, name := range kvFixtures {
		for _, tc := range []struct {
			device string
			graphs bool
		}{{"cpu", false}, {"cpu", true}, {"sim", false}, {"sim", true}} {
			t.Run(fmt.Sprintf("%s/%s/graphs=%v", name, tc.device, tc.graphs), func(t *testing.T) {
				fx := kvFixture(t, name)
				g, err := LoadGenerator(context.Background(), GenerateConfig{
					Config:    Config{ModelPath: fx.path, Device: tc.device, Workers: 2, DeviceMemory: 1 << 30, Graphs: tc.graphs, Seed: 3},
					PromptLen: 20, Batch: 2, MaxNew: 40,
				})
				require.NoError(t, err)
				defer func() { require.NoError(t, g.Close()) }()
				require.EqualValues(t, 64, g.Generate.Context, "20 + 40 rounded up to a bucket")
				res, err := g.Run(context.Background())
				require.NoError(t, err)
				goAllocs := res.Timed.GoAllocsPerToken
				res.Timed.GoAllocsPerToken = 0
				require.Equal(t, GenCounters{DecodeSteps: 39}, res.Timed, "the timed generation's counters")
				if tc.device == "cpu" {
					// The count is the process's: the generator and the engine make none per step
					// (generate's TestDecodeAllocatesNothing), the CPU kernels' worker pool and the
					// Go runtime a few per hundred steps. The sim device allocates as it simulates.
					require.Less(t, goAllocs, 1.0, "Go allocations per token")
				}
				require.Positive(t, res.TokensPerSec)
				require.Positive(t, res.PerToken.P50)
				require.LessOrEqual(t, res.PerToken.P50, res.PerToken.P99)

				again, err := g.Run(context.Background())
				require.NoError(t, err)
				require.Equal(t, res.Tokens, again.Tokens, "the same prompt gives the same tokens")
			})
		}
	}
}

// TestGenerateSampling: top-k sampling is seeded (the same seed, the same tokens) and stays in
// the vocabulary; greedy choice is what top-k 1 gives.
func TestGenerateSampling(t *testing.T) {
	fx := kvFixture(t, "qwen2_gqa")
	gen := func(topK int, temp float64, seed uint64) []int64 {
		g, err := LoadGenerator(context.Background(), GenerateConfig{
			Config: Config{ModelPath: fx.path, Workers: 2, DeviceMemory: 1 << 30, Seed: seed},
			Prompt: []int64{3, 1, 4, 1, 5}, PromptLen: 5, Batch: 1, MaxNew: 12, TopK: topK, Temperature: temp,
		})
		require.NoError(t, err)
		defer func() { require.NoError(t, g.Close()) }()
		res, err := g.Run(context.Background())
		require.NoError(t, err)
		for _, id := range res.Tokens {
			require.True(t, id >= 0 && id < g.Cache.Vocab, "token %d", id)
		}
		return res.Tokens
	}
	require.Equal(t, gen(8, 1.5, 7), gen(8, 1.5, 7))
	require.Equal(t, gen(0, 0, 7), gen(1, 1, 9), "top-1 is greedy, whatever the seed")
}

// TestGenerateErrors: a prompt beyond the context and a cache that does not fit the limit fail
// before anything is reserved, with the libraries' typed errors.
func TestGenerateErrors(t *testing.T) {
	fx := kvFixture(t, "qwen2_gqa")
	base := GenerateConfig{Config: Config{ModelPath: fx.path, Workers: 2, DeviceMemory: 1 << 30}, PromptLen: 8, Batch: 1, MaxNew: 8}

	long := base
	long.Context = 12
	_, err := LoadGenerator(context.Background(), long)
	var ce *generate.ContextError
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, generate.ContextError{Prompt: 8, New: 8, Context: 12}, *ce)

	tight := base
	tight.Batch, tight.Context, tight.Limit = 64, 4096, 4<<20
	_, err = LoadGenerator(context.Background(), tight)
	var re *engine.ReservationError
	require.True(t, errors.As(err, &re), "%v", err)
	require.EqualValues(t, 64*4096*512, re.State, "the KV state for 64 sequences of 4096 positions, 512 B each")

	prompt := base
	prompt.Prompt = []int64{1, 2, 3, 4, 5, 6, 7, 1 << 20}
	_, err = LoadGenerator(context.Background(), prompt)
	var pe *PromptError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, PromptError{Token: 1 << 20, Row: 0, Position: 7, Vocab: 256}, *pe)
	require.Contains(t, pe.Error(), "outside the vocabulary")
	var ue *UsageError

	// Numbers that no flag admits: refused before loading, with no sum overflowing on the way.
	for _, bad := range []func(*GenerateConfig){
		func(c *GenerateConfig) { c.Temperature = math.NaN() },
		func(c *GenerateConfig) { c.Temperature = math.Inf(1) },
		func(c *GenerateConfig) { c.MaxNew = math.MaxInt },
		func(c *GenerateConfig) { c.PromptLen = math.MaxInt64 },
		func(c *GenerateConfig) { c.Context = math.MaxInt64 },
		func(c *GenerateConfig) { c.Batch = engine.MaxDimValue + 1 },
	} {
		cfg := base
		bad(&cfg)
		_, err = LoadGenerator(context.Background(), cfg)
		require.True(t, errors.As(err, &ue), "%+v: %v", cfg, err)
	}
	// A prompt and new tokens whose sum passes the largest context: the default context is that
	// largest one, too short.
	huge := base
	huge.PromptLen, huge.MaxNew = engine.MaxDimValue-4, 8
	_, err = LoadGenerator(context.Background(), huge)
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, generate.ContextError{Prompt: engine.MaxDimValue - 4, New: 8, Context: engine.MaxDimValue}, *ce)
	require.Equal(t, engine.MaxDimValue, DefaultContext(math.MaxInt64, math.MaxInt))
	require.EqualValues(t, 64, DefaultContext(40, 24))
}

// TestMostSlots: MostSlots takes the most slots whose reservation fits the limit, in both forms
// (rows of one session, sessions of their own) and on both devices: what it planned is what the
// allocator reserved, and what it says one more slot needs is what loading that many reserves.
// Not even one slot fitting is a *SlotFitError.
func TestMostSlots(t *testing.T) {
	for _, name := range kvFixtures {
		for _, device := range []string{"cpu", "sim"} {
			t.Run(name+"/"+device, func(t *testing.T) {
				fx := kvFixture(t, name)
				serve := func(slots int, limit int64) (*Generation, error) {
					return LoadGenerator(context.Background(), GenerateConfig{
						Config: Config{ModelPath: fx.path, Device: device, Workers: 2, DeviceMemory: 1 << 30, Limit: limit},
						Batch:  1, PromptLen: 63, MaxNew: 1, Context: 64, PrefillChunk: 16, Slots: slots, MostSlots: slots == 0})
				}
				reserved := func(slots int) int64 {
					g, err := serve(slots, 0)
					require.NoError(t, err)
					defer func() { require.NoError(t, g.Close()) }()
					return g.Memory.ReservedBytes
				}
				limit := reserved(5) + 1
				g, err := serve(0, limit)
				require.NoError(t, err)
				fit := g.SlotFit
				require.NotNil(t, fit)
				require.Equal(t, 5, fit.Slots)
				require.Equal(t, name == "qwen2_kv", fit.Sessions, "the concat form runs a session per slot")
				require.Equal(t, limit, fit.AvailableBytes)
				require.Equal(t, g.Memory.ReservedBytes, fit.ReservedBytes)
				require.Equal(t, fit.ReservedBytes, g.Replica.Alloc.Stats().ReservedBytes, "the allocator reserved what was planned")
				if fit.Sessions {
					require.Len(t, g.Sessions, 5)
				} else {
					require.EqualValues(t, 5, g.Batch.Config().Rows)
				}
				require.NoError(t, g.Close())
				require.Equal(t, reserved(6), fit.NextBytes)
				require.Greater(t, fit.NextBytes, limit)

				g, err = serve(0, 1<<30) // more than MaxFitSlots fit
				require.NoError(t, err)
				require.Equal(t, MaxFitSlots, g.SlotFit.Slots)
				require.Zero(t, g.SlotFit.NextBytes, "at the maximum, one more is not planned")
				require.NoError(t, g.Close())

				_, err = serve(0, 4096)
				var se *SlotFitError
				require.ErrorAs(t, err, &se)
				require.Greater(t, se.Needed, int64(4096))
				require.Equal(t, se.Weights+se.Arena+se.State, se.Needed)
				require.EqualValues(t, 4096, se.Available)
			})
		}
	}
}
