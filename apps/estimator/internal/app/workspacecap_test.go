package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph/testmodels/zoo"
)

// TestWorkspaceCap: --workspace-cap bounds what the H200's convolutions declare for cuDNN's
// algorithms: the zoo's ResNet at batch 2048 plans less under a cap of 0 than with none, a cap
// of 1 GiB plans as none does (no convolution declares more), and a cap that is not a size is a
// usage error.
func TestWorkspaceCap(t *testing.T) {
	var path string
	for _, zm := range zoo.Models() {
		if zm.Name == "resnet.dyn" {
			path = zm.WriteTemp(t)
		}
	}
	require.NotEmpty(t, path, "the zoo's resnet.dyn")
	plan := func(extra ...string) int64 {
		return reportJSON(t, append([]string{"--model", path, "--target", "h200", "--dim", "batch=2048"}, extra...)...).ArenaBytes
	}
	none, zero, big := plan(), plan("--workspace-cap", "0"), plan("--workspace-cap", "1GiB")
	require.Less(t, zero, none)
	require.Equal(t, none, big)
	_, stderr, code := run(t, "report", "--model", path, "--workspace-cap", "lots")
	require.Equal(t, ExitUsage, code)
	require.Contains(t, stderr, `--workspace-cap: bad size "lots"`)
}
