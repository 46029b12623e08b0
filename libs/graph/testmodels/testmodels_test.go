package testmodels_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph/testmodels"
)

func TestManifest(t *testing.T) {
	models := testmodels.Models()
	require.GreaterOrEqual(t, len(models), 15)
	require.Equal(t, "2.11.0+cu130", testmodels.Versions()["torch"])
	for _, m := range models {
		b, err := m.Bytes()
		require.NoError(t, err, m.Name)
		require.NotEmpty(t, b)
		for i, bd := range m.Bindings {
			require.Empty(t, bd.Error, "%s binding %d", m.Name, i)
			shapes, err := m.ValueShapes(i)
			require.NoError(t, err)
			for name, file := range bd.Outputs {
				a, err := testmodels.ReadArray(file)
				require.NoError(t, err)
				require.Equal(t, shapes[name].Shape, a.Shape, "%s %s", m.Name, name)
				require.Len(t, a.Float32, int(product(a.Shape)))
			}
			for name, file := range bd.Inputs {
				a, err := testmodels.ReadArray(file)
				require.NoError(t, err)
				if name == "input_ids" {
					// The rule the manifest states: (7*i + 3) mod vocab, row-major.
					for k, v := range a.Int64 {
						require.Equal(t, (7*int64(k)+3)%m.Vocab, v)
					}
				}
			}
		}
	}
	_, err := testmodels.Get("nope")
	require.Error(t, err)
}

func TestWriteTemp(t *testing.T) {
	m := testmodels.MustGet("llama")
	p := m.WriteTemp(t)
	_, err := os.Stat(p)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(filepath.Dir(p), m.ExternalData))
	require.NoError(t, err)
	big := testmodels.MustGet("qwen2_1p5b_graph")
	require.NotEmpty(t, big.MissingExternalData)
	p = big.WriteTemp(t)
	require.Equal(t, "qwen2_1p5b_graph.onnx", filepath.Base(p))
}

func product(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}
