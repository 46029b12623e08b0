package app

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKVWorkspaces: at a given batch and context, estimator kv lists each kernel's workspace
// bound W over the envelope beside the capacity C the largest prompt's pattern and the longest
// decode step's plan for it. GroupQueryAttention's decode step needs a sliver of its W (the
// onnxruntime seed's 123 MB reserved against 56 KB used), and the table shows it.
func TestKVWorkspaces(t *testing.T) {
	stdout, stderr, code := run(t, "kv", "--model", fixture(t, "qwen2_gqa"), "--target", "cpu:2", "--batch", "8",
		"--context", "2048", "--prompt", "1024", "--format", "json")
	require.Equal(t, 0, code, stderr)
	var r kvResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	require.NotEmpty(t, r.Workspaces)
	gqa := r.Workspaces[0]
	require.Equal(t, "GroupQueryAttention", gqa.Op, "the kernel whose decode step needs least of its W comes first")
	require.Equal(t, gqa.BoundBytes, gqa.PrefillBytes, "the largest prompt needs all of W")
	require.Less(t, gqa.DecodeBytes*100, gqa.BoundBytes, "a decode step needs under 1%% of W")
	for _, w := range r.Workspaces {
		require.LessOrEqual(t, w.PrefillBytes, w.BoundBytes, w.Node)
		require.LessOrEqual(t, w.DecodeBytes, w.BoundBytes, w.Node)
	}

	stdout, stderr, code = run(t, "kv", "--model", fixture(t, "qwen2_gqa"), "--target", "cpu:2", "--batch", "8",
		"--context", "2048", "--prompt", "1024")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "W over the envelope, C planned for the largest prompt (seq 1024) and for the longest decode step")
	require.Regexp(t, `model.layers.0.attn\s+GroupQueryAttention\s+39.04 MiB\s+39.04 MiB\s+82.00 KiB`, stdout)
}
