package generate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNameFields: every field of Names is listed once, the defaults fill only empty fields, and
// a name is valid when a per-layer one holds exactly one %d and no other %, and another holds no %.
func TestNameFields(t *testing.T) {
	var n Names
	seen := map[*string]bool{}
	for _, f := range NameFields {
		p := f.Field(&n)
		require.False(t, seen[p], "%s listed twice", f.Key)
		seen[p] = true
	}
	require.Len(t, seen, 8, "every field of Names")

	d := Names{Logits: "lm_logits"}.withDefaults()
	require.Equal(t, Names{InputIDs: "input_ids", Mask: "attention_mask", Positions: "position_ids", Logits: "lm_logits",
		PastKey: "past_key_values.%d.key", PastValue: "past_key_values.%d.value", PresentKey: "present.%d.key",
		PresentValue: "present.%d.value"}, d)

	ids, past := NameFields[0], NameFields[4]
	require.False(t, ids.PerLayer())
	require.True(t, past.PerLayer())
	for v, want := range map[string]bool{"tokens": true, "": false, "tok%d": false, "a%s": false} {
		require.Equal(t, want, ids.Valid(v), "%q", v)
	}
	for v, want := range map[string]bool{"cache.%d.k": true, "cache.k": false, "": false, "c.%d.%d": false,
		"foo.%s.%d": false, "c.%d.%v": false, "c.%5d": false, "c.%d%%": false, "%d": true} {
		require.Equal(t, want, past.Valid(v), "%q", v)
	}
}
