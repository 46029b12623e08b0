package run

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph/shard"
)

// TestTPMatchesWhole loads the Llama and Qwen2 fixtures split over simulated devices (--device
// sim --tp N, and one device per rank): every rank holds a share of the weights, the outputs
// equal the whole model's on one device within float32 reassociation (1e-5 relative), runs
// after the first allocate nothing, and everything is released at Close.
func TestTPMatchesWhole(t *testing.T) {
	for _, tc := range []struct {
		model, device string
		tp            int
	}{{"llama", "sim", 2}, {"llama", "sim,sim:1,sim:2,sim:3", 4}, {"qwen2", "sim", 2}, {"qwen2", "sim", 4}} {
		t.Run(tc.model+" "+tc.device, func(t *testing.T) {
			cfg := Config{ModelPath: fixture(t, tc.model), Device: "sim", Envelope: env(fixed(2), fixed(11)), Seed: 7}
			whole := load(t, cfg)
			want, err := whole.Run(context.Background(), 1)
			require.NoError(t, err)
			cfg.Device, cfg.TP = tc.device, tc.tp
			split := load(t, cfg)
			require.Len(t, split.Replicas, tc.tp)
			require.Len(t, split.Sessions, tc.tp)
			require.Equal(t, tc.tp, split.Reservation.TP)
			require.Less(t, split.Reservation.DeviceWeightBytes, whole.Reservation.DeviceWeightBytes)
			got, err := split.Run(context.Background(), 3)
			require.NoError(t, err)
			require.Zero(t, got.Steady)
			for i := range want.Outputs {
				require.Equal(t, want.Outputs[i].Shape, got.Outputs[i].Shape)
				w, g := want.Outputs[i].Float32s(), got.Outputs[i].Float32s()
				for j := range w {
					require.InDelta(t, w[j], g[j], 1e-5*math.Max(1, math.Abs(float64(w[j]))), "%s[%d]", want.Names[i], j)
				}
			}
		})
	}
}

// TestTPRefuses: what a split cannot run is a usage error, and heads the ranks do not divide
// are the shard's typed error.
func TestTPRefuses(t *testing.T) {
	path := fixture(t, "qwen2")
	for _, tc := range []struct {
		device string
		tp     int
		want   string
	}{
		{"cpu", 2, "each rank needs a device of its own"},
		{"sim,sim:1", 4, "name one device per rank"},
		{"sim", MaxTP + 1, "at most"},
	} {
		_, err := Load(context.Background(), Config{ModelPath: path, Device: tc.device, TP: tc.tp, DeviceMemory: 1 << 30, Envelope: env(fixed(1), fixed(4))})
		var ue *UsageError
		require.ErrorAs(t, err, &ue, tc.device)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := Load(context.Background(), Config{ModelPath: path, Device: "sim", TP: 2, Sessions: 2, DeviceMemory: 1 << 30, Envelope: env(fixed(1), fixed(4))})
	require.ErrorContains(t, err, "one session per rank")
	_, err = Load(context.Background(), Config{ModelPath: path, Device: "sim", TP: 3, DeviceMemory: 1 << 30, Envelope: env(fixed(1), fixed(4))})
	var de *shard.DivisibilityError
	require.ErrorAs(t, err, &de)
}
