package engine

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseDim(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		name string
		r    Range
		bad  string
	}{
		{arg: "batch=8", name: "batch", r: Range{Lo: 8, Hi: 8}},
		{arg: " seq = 1:8192 ", name: "seq", r: Range{Lo: 1, Hi: 8192}},
		{arg: "batch=?", name: "batch", r: Range{Lo: 1, Open: true}},
		{arg: "batch=?:64", name: "batch", r: Range{Lo: 1, Hi: 64, Open: true}},
		{arg: "seq=0:0", name: "seq", r: Range{}},
		{arg: "batch", bad: "missing '='"},
		{arg: "=3", bad: "empty dim name"},
		{arg: "batch=", bad: "empty value"},
		{arg: "batch=x", bad: "not an integer"},
		{arg: "batch=-1", bad: "negative"},
		{arg: "seq=9:3", bad: "empty range"},
		{arg: "seq=1:", bad: "not an integer"},
		{arg: "seq=99999999999999999999", bad: "not an integer"},
		{arg: "seq=2199023255553", bad: "exceeds"},
		{arg: "batch=?3", bad: "open dim"},
		{arg: "batch=?:0", bad: "at least 1"},
	} {
		name, r, err := ParseDim(tc.arg)
		if tc.bad != "" {
			var se *DimSyntaxError
			require.ErrorAs(t, err, &se, tc.arg)
			require.Contains(t, err.Error(), tc.bad, tc.arg)
			continue
		}
		require.NoError(t, err, tc.arg)
		require.Equal(t, tc.name, name)
		require.Equal(t, tc.r, r)
	}
}

func TestParseEnvelope(t *testing.T) {
	env, err := ParseEnvelope([]string{"batch=1:32", "seq=?"})
	require.NoError(t, err)
	require.Equal(t, "batch=1:32 seq=?", env.String())
	name, r, err := env.Open()
	require.NoError(t, err)
	require.Equal(t, "seq", name)
	require.True(t, r.Open)

	_, err = ParseEnvelope([]string{"batch=1", "batch=2"})
	require.ErrorContains(t, err, "given twice")

	env, _ = ParseEnvelope([]string{"batch=?", "seq=?"})
	_, _, err = env.Open()
	require.True(t, errors.Is(err, ErrManyOpenDims))
	env, _ = ParseEnvelope([]string{"batch=1"})
	_, _, err = env.Open()
	require.True(t, errors.Is(err, ErrNoOpenDim))
}

func FuzzParseDim(f *testing.F) {
	for _, s := range []string{"batch=8", "seq=1:8192", "b=?", "b=?:9", "x=-1", "=", "a=1:0", "a= 3 : 4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		name, r, err := ParseDim(arg)
		if err != nil {
			return
		}
		if name == "" || r.Lo < 0 || (!r.Open && r.Hi < r.Lo) || r.Hi > MaxDimValue {
			t.Fatalf("ParseDim(%q) = %q %+v: invalid result accepted", arg, name, r)
		}
	})
}
