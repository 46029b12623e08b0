package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph/testmodels/zoo"
)

// TestWorkspaceCap: --workspace-cap bounds what the H200's convolutions declare for cuDNN's
// algorithms: with --full-workspace (each planned at what it declares) the zoo's ResNet at batch
// 2048 plans less under a cap of 0 than with none, a cap of 1 GiB plans as none does (no
// convolution declares more), and a cap that is not a size is a usage error.
func TestWorkspaceCap(t *testing.T) {
	path := zooResNet(t)
	plan := func(extra ...string) int64 {
		return reportJSON(t, append([]string{"--model", path, "--target", "h200", "--dim", "batch=2048", "--full-workspace"}, extra...)...).ArenaBytes
	}
	none, zero, big := plan(), plan("--workspace-cap", "0"), plan("--workspace-cap", "1GiB")
	require.Less(t, zero, none)
	require.Equal(t, none, big)
	_, stderr, code := run(t, "report", "--model", path, "--workspace-cap", "lots")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr, `--workspace-cap: bad size "lots"`)
}

// TestCapSweep: --cap-sweep plans under each cap as --workspace-cap does (the same arenas), in
// the order given, and gives a CUDA target's convolutions the times recorded on an H200 (no
// faster under a cap of 0 than with none); a bad list is a usage error.
func TestCapSweep(t *testing.T) {
	path := zooResNet(t)
	args := []string{"--model", path, "--target", "h200", "--dim", "batch=32"}
	r := reportJSON(t, append(args, "--cap-sweep", "0,none,1GiB")...)
	require.Len(t, r.CapSweep, 3)
	for i, want := range []string{"0", "none", "1GiB"} {
		p := r.CapSweep[i]
		require.Equal(t, want, p.Cap)
		extra := []string{}
		if want != "none" {
			extra = []string{"--workspace-cap", want}
		}
		require.Equal(t, reportJSON(t, append(args, extra...)...).ArenaBytes, p.ArenaBytes, "cap %s", want)
		require.NotNil(t, p.ConvTime, "cap %s", want)
		require.Positive(t, p.ConvTime.Convolutions)
		require.LessOrEqual(t, p.ConvTime.Recorded, p.ConvTime.Convolutions)
		// libs/kernels/cuda/convtimes_h200.jsonl holds the zoo's vision models at batch 32
		require.Positive(t, p.ConvTime.Recorded, "cap %s", want)
		require.Equal(t, "NVIDIA H200", p.ConvTime.Device)
	}
	require.GreaterOrEqual(t, r.CapSweep[0].ConvTime.Ms, r.CapSweep[1].ConvTime.Ms, "no workspace is no faster than any")
	require.Equal(t, r.ArenaBytes, r.CapSweep[1].ArenaBytes, "the report's own plan has no cap")
	require.Nil(t, reportJSON(t, "--model", path, "--dim", "batch=2").ConvTime, "no conv time off a CUDA target")
	_, stderr, code := run(t, "report", "--model", path, "--cap-sweep", "0,lots")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr, `--cap-sweep: bad size "lots"`)
}

// TestWorkspaceWithinPlan: by default the H200's convolutions take only the bytes the plan
// leaves free at their step, so the zoo's ResNet plans less than with --full-workspace (the
// engine's TestWorkspaceWithinPlan checks the arena is the one of the smallest parts);
// --cap-sweep gives each cap's full-workspace arena as --full-workspace plans it.
func TestWorkspaceWithinPlan(t *testing.T) {
	path := zooResNet(t)
	args := []string{"--model", path, "--target", "h200", "--dim", "batch=256"}
	within, full := reportJSON(t, args...), reportJSON(t, append(args, "--full-workspace")...)
	require.Less(t, within.ArenaBytes, full.ArenaBytes)
	require.Positive(t, within.WithinPlan)
	require.Zero(t, full.WithinPlan)
	r := reportJSON(t, append(args, "--cap-sweep", "0,none")...)
	for i, extra := range [][]string{{"--workspace-cap", "0"}, nil} {
		p := r.CapSweep[i]
		require.NotNil(t, p.FullArenaBytes)
		require.Equal(t, reportJSON(t, append(append(args, "--full-workspace"), extra...)...).ArenaBytes, *p.FullArenaBytes, "cap %s", p.Cap)
		require.Equal(t, reportJSON(t, append(args, extra...)...).ArenaBytes, p.ArenaBytes, "cap %s", p.Cap)
	}
	require.Nil(t, reportJSON(t, append(args, "--full-workspace", "--cap-sweep", "none")...).CapSweep[0].FullArenaBytes)
}

// zooResNet writes the zoo's resnet.dyn to a temporary file and returns its path.
func zooResNet(t *testing.T) string {
	t.Helper()
	for _, zm := range zoo.Models() {
		if zm.Name == "resnet.dyn" {
			return zm.WriteTemp(t)
		}
	}
	t.Fatal("the zoo has no resnet.dyn")
	return ""
}
