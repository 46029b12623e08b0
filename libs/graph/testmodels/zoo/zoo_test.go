package zoo

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every zoo model names its family's config (a transformers config.json, or for a torchvision,
// timm or hand-built vision or audio block the library and arguments it was made with), has onnxruntime outputs at every binding and
// decodes; every family the script could not export says why.
func TestManifest(t *testing.T) {
	ms := Models()
	require.NotEmpty(t, ms)
	for _, m := range ms {
		require.NotEmpty(t, m.Family, m.Name)
		require.Contains(t, []string{"decoder", "encoder", "vision", "audio"}, m.Task, m.Name)
		cfg, err := Config(m)
		require.NoError(t, err, m.Name)
		var c map[string]any
		require.NoError(t, json.Unmarshal(cfg, &c), m.Name)
		if c["model_type"] == nil { // torchvision's, timm's and carve's own blocks name their library
			require.NotEmpty(t, c["library"], m.Name)
		}
		b, err := m.Bytes()
		require.NoError(t, err)
		require.NotEmpty(t, b)
		if m.Generation != nil { // a KV-cache decoder: onnxruntime's greedy generation
			_, err := m.Generation.Tokens()
			require.NoError(t, err, m.Name)
			continue
		}
		require.Len(t, m.Bindings, 2, m.Name)
		for _, bd := range m.Bindings {
			require.Empty(t, bd.Error, m.Name)
			require.Len(t, bd.Outputs, 1, m.Name)
			for _, f := range bd.Outputs {
				a, err := m.Array(f)
				require.NoError(t, err, f)
				require.NotEmpty(t, a.Float32, f)
			}
		}
	}
	for _, f := range Failures() {
		require.NotEmpty(t, f.Error, f.Step)
	}
}
