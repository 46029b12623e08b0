package run

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
)

// capped wraps a CPU kernel without workspace into one whose Recipe is a 1 MiB cap and whose
// need, as the device would measure it (engine.WorkspaceMeasurer), is 4 bytes per output element:
// a stand-in for cuBLASLt's GEMM, which runs within the workspace it is carved.
type capped struct{ kernels.Kernel }

type cappedInstance struct {
	kernels.Instance
	need int64
}

const capBytes = 1 << 20

func (k capped) Select(n *kernels.Node, d kernels.Target) (kernels.Instance, error) {
	inst, err := k.Kernel.Select(n, d)
	if err != nil {
		return nil, err
	}
	need := int64(4)
	for _, x := range n.Outputs[0].Shape {
		need *= x
	}
	return &cappedInstance{Instance: inst, need: need}, nil
}

func (k capped) Bound(*kernels.NodeRange, kernels.Target) (kernels.Bound, error) {
	return kernels.Bound{Bytes: capBytes, Tactic: "capped"}, nil
}

func (i *cappedInstance) Recipe() alloc.Recipe {
	return alloc.Recipe{Kernel: "capped", Parts: []alloc.Part{{Name: "cap", Size: capBytes}}}
}

func (i *cappedInstance) MeasuredPart() int                               { return 0 }
func (i *cappedInstance) MeasureWorkspace(kernels.Backend) (int64, error) { return i.need, nil }

func (i *cappedInstance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	if _, ok := ws.Part("cap"); ws == nil || !ok {
		return fmt.Errorf("capped: no workspace carved")
	}
	return i.Instance.Run(in, out, nil, s)
}

// cappedRegistry is the CPU registry with Add capped.
func cappedRegistry(t *testing.T) *kernels.Registry {
	reg := kernels.NewRegistry()
	for _, k := range cpu.Kernels() {
		if k.Op() == kernels.Key("", "Add") {
			k = capped{k}
		}
		require.NoError(t, reg.Register(k))
	}
	return reg
}

// The runner reports the tight plan next to the default reservation, and --tight reserves it.
func TestTightReservation(t *testing.T) {
	cfg := Config{ModelPath: fixture(t, "gpt2"), Envelope: env(engine.Range{Lo: 1, Hi: 3}, engine.Range{Lo: 1, Hi: 16}), Registry: cappedRegistry(t), Sessions: 2, FullWorkspace: true}
	r := load(t, cfg)
	ts := r.Stats().Tight
	require.False(t, ts.Reserved)
	require.Empty(t, ts.Error)
	require.Positive(t, ts.Measured)
	require.Len(t, ts.Kernels, ts.Measured)
	for _, k := range ts.Kernels {
		require.Equal(t, "Add", k.Op)
		require.Equal(t, int64(capBytes), k.W)
		require.Equal(t, int64(capBytes), k.C)
		require.Less(t, k.R, k.C)
	}
	require.Equal(t, r.Reservation.ArenaBytes, ts.DefaultArenaBytes, "the default plan is reserved")
	require.Less(t, ts.ArenaBytes, ts.DefaultArenaBytes)
	require.Positive(t, ts.SavedBytes)
	require.Equal(t, 2*ts.SavedBytes, ts.TotalSavedBytes)
	require.False(t, r.Reservation.Tight)

	cfg.Tight = true
	tr := load(t, cfg)
	tts := tr.Stats().Tight
	require.True(t, tts.Reserved)
	require.True(t, tr.Reservation.Tight)
	require.Equal(t, ts.ArenaBytes, tr.Reservation.ArenaBytes, "--tight reserves the plan the default run reports")
	require.Equal(t, ts.DefaultArenaBytes, tr.Reservation.DefaultArenaBytes)
	require.Equal(t, ts.SavedBytes, tts.SavedBytes)
	require.Equal(t, 2*alloc.ReservedSize(tr.Reservation.ArenaBytes), tr.Alloc.Stats().ReservedBytes)

	res, err := r.Run(context.Background(), 2)
	require.NoError(t, err)
	tres, err := tr.Run(context.Background(), 2)
	require.NoError(t, err)
	require.Equal(t, res.Outputs, tres.Outputs, "the same outputs from the tight reservation")
}

// On the CPU no kernel's workspace is a cap: the tight figures are zero, and --tight reserves the
// default plan.
func TestTightOnCPU(t *testing.T) {
	r := load(t, Config{ModelPath: fixture(t, "gpt2"), Envelope: env(fixed(2), fixed(7)), Tight: true})
	ts := r.Stats().Tight
	require.Zero(t, ts.Measured)
	require.Empty(t, ts.Kernels)
	require.Zero(t, ts.SavedBytes)
	require.Equal(t, ts.DefaultArenaBytes, r.Reservation.ArenaBytes)
}
