package run

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
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

// TestReplicas loads the model on two simulated devices with two sessions each: each device
// reserves its own weights and arenas, the outputs of every session agree, and a benchmark's runs
// land on both devices.
func TestReplicas(t *testing.T) {
	r := load(t, Config{Device: "sim,sim:1", Sessions: 2})
	require.Len(t, r.Replicas, 2)
	require.Len(t, r.Sessions, 4)
	require.Equal(t, []string{"sim", "sim:1"}, r.Reservation.Devices)
	for _, rep := range r.Replicas {
		st := rep.Alloc.Stats()
		require.Equal(t, r.Reservation.DeviceWeightBytes+2*alloc.ReservedSize(r.Reservation.ArenaBytes), st.ReservedBytes,
			"%s reserves its weights and two arenas", rep.Backend.Name())
	}
	_, err := r.Run(context.Background(), 2) // errs with a NondeterminismError if the replicas disagree
	require.NoError(t, err)
	before := []int64{r.Replicas[0].Runtime.Stats().Copies.Downloads, r.Replicas[1].Runtime.Stats().Copies.Downloads}
	// Sessions take runs from one counter, so how many each replica gets depends on scheduling;
	// with 400 runs each of two replicas takes more than one even on a loaded machine (with 40, a
	// replica once took one).
	b, err := r.Bench(context.Background(), BenchConfig{Warmup: 1, Runs: 400})
	require.NoError(t, err)
	require.Equal(t, 4, b.Sessions)
	require.Zero(t, b.DeviceMallocsPerRun)
	st := r.Stats()
	require.Len(t, st.Replicas, 2)
	for i, rep := range r.Replicas {
		require.Greater(t, rep.Runtime.Stats().Copies.Downloads, before[i]+2, "%s took timed runs", rep.Backend.Name())
		require.Equal(t, rep.Backend.Name(), st.Replicas[i].Name)
	}
}

func TestParseDevices(t *testing.T) {
	specs, err := ParseDevices("cuda:0,cuda:1")
	require.NoError(t, err)
	require.Equal(t, []DeviceSpec{{Kind: "cuda"}, {Kind: "cuda", Ordinal: 1}}, specs)
	specs, err = ParseDevices("sim")
	require.NoError(t, err)
	require.Equal(t, []DeviceSpec{{Kind: "sim"}}, specs)
	for _, bad := range []string{"cpu,sim", "sim,sim", "cpu,cpu", "cuda:0,cuda:0", "cuda:x", "tpu", "cpu:1"} {
		_, err := ParseDevices(bad)
		var ue *UsageError
		require.ErrorAs(t, err, &ue, bad)
	}
}

// TestOutputsOnDevice: with Config.OutputsOnDevice a benchmark's runs copy nothing back from the
// simulated discrete device, and the reservation is the one made without it (the outputs live in
// the arena either way).
func TestOutputsOnDevice(t *testing.T) {
	cfg := Config{Seed: 7, Device: "sim"}
	host := load(t, cfg)
	cfg.OutputsOnDevice = true
	dev := load(t, cfg)
	require.Equal(t, host.Reservation, dev.Reservation)
	for _, r := range []*Runner{host, dev} {
		_, err := r.Bench(context.Background(), BenchConfig{Warmup: 1, Runs: 4})
		require.NoError(t, err)
	}
	require.Positive(t, host.Stats().Engine.Downloads, "outputs copied back")
	require.Zero(t, dev.Stats().Engine.Downloads, "outputs left on the device")
}
