package bundled

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph/testmodels"
)

func TestBundledIsTheFixture(t *testing.T) {
	want, err := testmodels.MustGet("gpt2").Bytes()
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, Bytes()), "internal/bundled/gpt2.onnx differs from the gpt2 fixture: copy it again and update ORIGIN.md")
}

func TestDefaultEnvelopeCoversTheModelsDims(t *testing.T) {
	m, err := Load()
	require.NoError(t, err)
	env := DefaultEnvelope()
	require.Len(t, env, len(m.DimNames))
	for _, d := range m.DimNames {
		r, ok := env[d]
		require.True(t, ok, "no default for dim %q", d)
		require.False(t, r.Open)
		require.LessOrEqual(t, r.Lo, r.Hi)
	}
}
