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

// A workspace cap is a value of its own: 0 (no workspace) differs from no cap, copies keep
// theirs, and a negative cap clears it.
func TestWorkspaceCap(t *testing.T) {
	h200 := kernels.KnownGPUs["h200"]
	require.Nil(t, h200.WorkspaceCap)
	require.Equal(t, int64(1<<30), h200.CappedWorkspace(1<<30), "no cap")

	none := h200.WithWorkspaceCap(0)
	require.NotNil(t, none.WorkspaceCap)
	require.Zero(t, none.CappedWorkspace(1<<30))
	require.Nil(t, h200.WorkspaceCap, "the original keeps no cap")

	eight := none.WithWorkspaceCap(8 << 20)
	require.Equal(t, int64(8<<20), eight.CappedWorkspace(1<<30))
	require.Equal(t, int64(4<<20), eight.CappedWorkspace(4<<20))
	require.Zero(t, none.CappedWorkspace(1<<30), "a copy's cap is its own")
	require.Nil(t, eight.WithWorkspaceCap(-1).WorkspaceCap)
	require.Equal(t, h200.String(), eight.String(), "the cap is not part of the device's description")
}
