package graph

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseDimParam(t *testing.T) {
	for _, tc := range []struct {
		param string
		want  Dim
		names []string
	}{
		{"batch", Sym("batch"), []string{"batch"}},
		{"past_seq + seq", Sym("past_seq").Add(Sym("seq")), []string{"past_seq", "seq"}},
		{"s0 + s1", Sym("s0").Add(Sym("s1")), []string{"s0", "s1"}},
		{"past_sequence_length + 1", Sym("past_sequence_length").Add(Const(1)), []string{"past_sequence_length"}},
		{"2*seq", Sym("seq").Mul(Const(2)), []string{"seq"}},
		{"(a + b)*c", Sym("a").Add(Sym("b")).Mul(Sym("c")), []string{"a", "b", "c"}},
		{"total - seq", Sym("total").Sub(Sym("seq")), []string{"total", "seq"}},
		// Not expressions: one named dim each.
		{"seq-len", Sym("seq-len"), []string{"seq-len"}},
		{"a + ", Sym("a + "), []string{"a + "}},
		{"(batch", Sym("(batch"), []string{"(batch"}},
		{"1 + 2", Sym("1 + 2"), []string{"1 + 2"}},
		{"a + b)", Sym("a + b)"), []string{"a + b)"}},
	} {
		t.Run(tc.param, func(t *testing.T) {
			d, names := ParseDimParam(tc.param)
			require.True(t, d.Equal(tc.want), "got %s, want %s", d, tc.want)
			require.Equal(t, tc.names, names)
		})
	}
}
