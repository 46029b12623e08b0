package app

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReportKVFixtures plans the KV-cache fixtures for the H200. In the GQA form the cache
// buffers (graph inputs, which no node defines) are live at the peak of the graph as exported
// and at the worst binding's; the report lists them as graph inputs.
func TestReportKVFixtures(t *testing.T) {
	for _, tc := range []struct {
		name string
		dims []string
	}{
		{"qwen2_gqa", []string{"batch=1:2", "seq=1:16", "total_seq=1:64", "max_seq=64"}},
		{"qwen2_kv", []string{"batch=1:2", "seq=1:16", "past_seq=1:48", "total_seq=2:64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"report", "--model", fixture(t, tc.name), "--target", "h200", "--top", "0"}
			for _, d := range tc.dims {
				args = append(args, "--dim", d)
			}
			stdout, stderr, code := run(t, append(args, "--format", "json")...)
			require.Equal(t, 0, code, stderr)
			var r struct {
				Fusion struct {
					ExportedPeakStep *struct {
						Buffers []struct{ Node, Op string } `json:"buffers"`
					} `json:"exported_peak_step"`
				} `json:"fusion"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &r))
			pk := r.Fusion.ExportedPeakStep
			require.NotNil(t, pk)
			inputs := 0
			for _, b := range pk.Buffers {
				if b.Node == "" {
					require.Empty(t, b.Op)
					inputs++
				}
			}
			table, stderr, code := run(t, args...)
			require.Equal(t, 0, code, stderr)
			if tc.name == "qwen2_gqa" {
				require.Positive(t, inputs, "graph inputs live at the peak")
				require.Regexp(t, regexp.MustCompile(`(?m)^  past_key_values\.1\.key .* a graph input$`), table)
			}
			require.NotContains(t, table, "()")
		})
	}
}
