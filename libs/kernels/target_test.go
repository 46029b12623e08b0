package kernels_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/kernels"
)

func TestParseTarget(t *testing.T) {
	h200, err := kernels.ParseTarget("H200")
	require.NoError(t, err)
	require.Equal(t, kernels.KnownGPUs["h200"], h200)
	require.True(t, h200.GPU())

	custom, err := kernels.ParseTarget("sm_90:132:227KiB:141GiB")
	require.NoError(t, err)
	require.Equal(t, kernels.Target{Backend: kernels.BackendCUDA, Arch: "sm_90", SMs: 132, SharedMemPerBlock: 227 << 10, Memory: 141 << 30}, custom)
	back, err := kernels.ParseTarget(custom.String())
	require.NoError(t, err)
	require.Equal(t, custom, back, "String reads back")

	cpu, err := kernels.ParseTarget("cpu:3")
	require.NoError(t, err)
	require.Equal(t, kernels.CPU(3), cpu)
	sim, err := kernels.ParseTarget("sim:2")
	require.NoError(t, err)
	require.Equal(t, kernels.BackendSim, sim.Backend)
	require.Equal(t, 2, sim.Workers)

	for _, bad := range []string{"", "tpu", "cpu:0", "cpu:x", "sm_90", "sm_90:0:1KiB", "sm_xx:132:1KiB", "sm_90:132:lots", "sim:1:2"} {
		_, err := kernels.ParseTarget(bad)
		var te *kernels.TargetError
		require.ErrorAs(t, err, &te, "%q", bad)
	}
}
