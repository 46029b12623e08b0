package run

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph/testmodels"
)

// TestSimMatchesCPU is issue 11's acceptance test: every fixture runs and benchmarks on the
// simulated discrete device, with outputs byte-identical to the CPU's, with the weights uploaded
// once and nothing allocated after the first run.
func TestSimMatchesCPU(t *testing.T) {
	for _, fx := range testmodels.Models() {
		t.Run(fx.Name, func(t *testing.T) {
			path := fixture(t, fx.Name)
			var envelope map[string]int64
			for _, b := range fx.Bindings {
				if b.Error == "" {
					envelope = b.Dims
				}
			}
			if envelope == nil {
				t.Skip("fixture has no runnable binding")
			}
			cfg := Config{ModelPath: path, Seed: 7}
			cfg.Envelope = engine.Envelope{}
			for n, v := range envelope {
				cfg.Envelope[n] = fixed(v)
			}
			cpuCfg, simCfg := cfg, cfg
			simCfg.Device = "sim"
			cr := load(t, cpuCfg)
			sr := load(t, simCfg)
			want, err := cr.Run(context.Background(), 3)
			require.NoError(t, err)
			got, err := sr.Run(context.Background(), 3)
			require.NoError(t, err)
			for i, name := range want.Names {
				require.True(t, bytes.Equal(want.Outputs[i].Data, got.Outputs[i].Data), "output %s differs between sim and cpu", name)
			}
			require.Equal(t, Counters{}, got.Steady, "steady runs on sim allocate nothing")
			st := sr.Stats()
			require.Equal(t, sr.Reservation.DeviceWeightBytes, st.Engine.ResidentWeightBytes)
			require.Equal(t, int64(3*len(want.Names)), st.Engine.Downloads)

			b, err := sr.Bench(context.Background(), BenchConfig{Warmup: 1, Runs: 4})
			require.NoError(t, err)
			require.Equal(t, 4, b.Runs)
			require.Zero(t, b.DeviceMallocsPerRun)
		})
	}
}
