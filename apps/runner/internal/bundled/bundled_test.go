package bundled

import (
	"testing"

	"carve.dev/libs/graph/testmodels"
	"github.com/stretchr/testify/require"
)

func TestBundledIsTheFixture(t *testing.T) {
	want, err := testmodels.MustGet("gpt2").Bytes()
	require.NoError(t, err)
	require.Equal(t, want, Bytes(), "internal/bundled/gpt2.onnx differs from the gpt2 fixture: copy it again and update ORIGIN.md")
}

func TestLoad(t *testing.T) {
	m, err := Load()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"batch", "seq"}, m.DimNames)
	env := DefaultEnvelope()
	for _, d := range m.DimNames {
		require.Contains(t, env, d, "the default envelope covers every dim")
	}
}
