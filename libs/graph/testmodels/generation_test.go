package testmodels_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph/testmodels"
)

func TestGenerations(t *testing.T) {
	forms := map[string]string{"qwen2_kv": testmodels.FormConcat, "qwen2_gqa": testmodels.FormGQA}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			m := testmodels.MustGet(name)
			g := m.Generation
			require.NotNil(t, g)
			require.Equal(t, form, g.Form)
			require.Equal(t, form == testmodels.FormGQA, g.MaxSeq > 0, "max_seq is set for the GQA form only")
			prompt, err := g.Prompt()
			require.NoError(t, err)
			require.Len(t, prompt.Int64, int(g.Batch*g.PromptLen))
			for _, id := range prompt.Int64 {
				require.True(t, id >= 0 && id < m.Vocab, "token %d", id)
			}
			tokens, err := g.Tokens()
			require.NoError(t, err)
			logits, err := g.Logits()
			require.NoError(t, err)
			require.Equal(t, []int64{g.Steps, g.Batch, m.Vocab}, logits.Shape)
			// Each token is its step's argmax.
			for s := int64(0); s < g.Steps; s++ {
				for b := int64(0); b < g.Batch; b++ {
					row := logits.Float32[(s*g.Batch+b)*m.Vocab : (s*g.Batch+b+1)*m.Vocab]
					best := 0
					for i, v := range row {
						if v > row[best] {
							best = i
						}
					}
					require.Equal(t, int64(best), tokens.Int64[b*g.Steps+s], "step %d row %d", s, b)
				}
			}
			// The cache's inputs are named as the form says.
			require.Contains(t, m.Inputs, "past_key_values.0.key")
			require.Contains(t, m.Outputs, "present.0.value")
			require.Equal(t, form == testmodels.FormConcat, slices.Contains(m.Inputs, "position_ids"))
		})
	}
	// Both forms share their weights and prompt: the same tokens, logits within 1e-4.
	kv, gqa := testmodels.MustGet("qwen2_kv").Generation, testmodels.MustGet("qwen2_gqa").Generation
	for _, read := range []func(*testmodels.Generation) (testmodels.Array, error){
		(*testmodels.Generation).Prompt, (*testmodels.Generation).Tokens,
	} {
		a, err := read(kv)
		require.NoError(t, err)
		b, err := read(gqa)
		require.NoError(t, err)
		require.Equal(t, a.Int64, b.Int64)
	}
	a, err := kv.Logits()
	require.NoError(t, err)
	b, err := gqa.Logits()
	require.NoError(t, err)
	require.InDeltaSlice(t, a.Float32, b.Float32, 1e-4)
	require.Nil(t, testmodels.MustGet("qwen2").Generation)
}

func TestGenerationShapeCheck(t *testing.T) {
	g := *testmodels.MustGet("qwen2_kv").Generation
	g.Steps++
	_, err := g.Tokens()
	require.ErrorContains(t, err, "want [2 33]")
	g.TokensFile = g.LogitsFile
	g.Steps--
	_, err = g.Tokens()
	require.Error(t, err, "float32 logits read as token ids")
}
