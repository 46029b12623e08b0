package engine

import (
	"testing"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"github.com/stretchr/testify/require"
)

func TestInputDims(t *testing.T) {
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	good := fixtureInputs(t, m, fx.Bindings[1])
	dims, err := InputDims(m, good)
	require.NoError(t, err)
	require.Equal(t, Binding(fx.Bindings[1].Dims), dims)

	with := func(kv ...any) map[string]kernels.Tensor {
		in := map[string]kernels.Tensor{}
		for k, v := range good {
			in[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(in, kv[i].(string))
			} else {
				in[kv[i].(string)] = kv[i+1].(kernels.Tensor)
			}
		}
		return in
	}
	ids := good["input_ids"]
	for _, tc := range []struct {
		name  string
		in    map[string]kernels.Tensor
		want  InputError
		words string
	}{
		{"unknown", with("pixels", ids), InputError{Input: "pixels", Kind: InputUnknown, Known: []string{"input_ids", "attention_mask"}},
			"the model has no such input (its inputs are input_ids, attention_mask)"},
		{"all missing", map[string]kernels.Tensor{}, InputError{Input: "input_ids", Kind: InputMissing, Missing: []string{"input_ids", "attention_mask"}},
			"missing (want input_ids int64[batch, seq])"},
		{"one missing", with("input_ids", nil), InputError{Input: "input_ids", Kind: InputMissing, Missing: []string{"input_ids"}}, "missing"},
		{"unknown before missing", with("pixels", ids, "input_ids", nil), InputError{Input: "pixels", Kind: InputUnknown, Known: []string{"input_ids", "attention_mask"}}, ""},
		{"rank", with("input_ids", kernels.MustTensor(graph.Int64, 2, 8, 1)), InputError{Input: "input_ids", Kind: InputInvalid}, "rank 3 (shape [2 8 1]), want rank 2"},
		{"dtype", with("input_ids", kernels.MustTensor(graph.Int32, 2, 8)), InputError{Input: "input_ids", Kind: InputInvalid}, "dtype int32, want int64"},
		{"inconsistent", with("input_ids", kernels.MustTensor(graph.Int64, 3, 7)), InputError{Input: "attention_mask", Kind: InputInvalid}, "another input gives"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := InputDims(m, tc.in)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			got := *ie
			got.Problem = ""
			require.Equal(t, tc.want, got)
			require.Contains(t, ie.Problem, tc.words)
		})
	}
}

func TestCheckBindingAndEnvelopeFromInputs(t *testing.T) {
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	in := fixtureInputs(t, m, fx.Bindings[1]) // batch=2 seq=7 (see the fixture)
	dims, err := InputDims(m, in)
	require.NoError(t, err)
	b, s := dims["batch"], dims["seq"]

	err = CheckBinding(m, Envelope{"batch": {Lo: 1, Hi: b}, "seq": {Lo: 1, Hi: s - 1}}, dims)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, InputOutsideEnvelope, ie.Kind)
	require.Equal(t, "seq", ie.Dim)
	require.Equal(t, s, ie.Value)
	require.Equal(t, Range{Lo: 1, Hi: s - 1}, ie.Range)
	require.NoError(t, CheckBinding(m, Envelope{"batch": {Lo: b, Hi: b}, "seq": {Lo: s, Hi: s}}, dims))
	err = CheckBinding(m, Envelope{"batch": {Lo: b, Hi: b}}, Binding{"batch": b})
	require.ErrorAs(t, err, &ie)
	require.Equal(t, InputDimUnset, ie.Kind)
	require.Equal(t, "seq", ie.Dim)

	// Dims left out come from the inputs; dims given stay.
	env, err := EnvelopeFromInputs(m, Envelope{"seq": {Lo: 1, Hi: 64}}, in)
	require.NoError(t, err)
	require.Equal(t, Envelope{"batch": {Lo: b, Hi: b}, "seq": {Lo: 1, Hi: 64}}, env)
	env, err = EnvelopeFromInputs(m, Envelope{"seq": {Lo: 1, Hi: 64}}, nil)
	require.NoError(t, err)
	require.Equal(t, Envelope{"seq": {Lo: 1, Hi: 64}}, env)

	// A wrong rank is reported as such, not as a dim that no input gives.
	bad := map[string]kernels.Tensor{"input_ids": kernels.MustTensor(graph.Int64, 2, 8, 1), "attention_mask": in["attention_mask"]}
	_, err = EnvelopeFromInputs(m, nil, bad)
	require.ErrorAs(t, err, &ie)
	require.Equal(t, InputInvalid, ie.Kind)
	require.Contains(t, err.Error(), `bad input "input_ids": rank 3`)
}

// TestErrorsNameNoFlags: the engine's errors are worded for any program; none names a
// command-line flag.
func TestErrorsNameNoFlags(t *testing.T) {
	errs := []error{
		&EnvelopeError{Problem: UnknownDim, Dims: []string{"x"}, Known: []string{"batch"}},
		&EnvelopeError{Problem: OpenDim, Dims: []string{"batch"}},
		&EnvelopeError{Problem: MissingDims, Dims: []string{"seq", "batch"}, Known: []string{"batch", "seq"}},
		&EnvelopeError{Problem: TooManyVarying, Varying: 9, MaxVarying: 6},
		&InputError{Kind: InputOutsideEnvelope, Dim: "seq", Value: 40, Range: Range{Lo: 1, Hi: 16}, Problem: "seq=40 is outside the declared envelope seq=1:16"},
		ErrNoOpenDim, ErrManyOpenDims,
		&DimSyntaxError{Arg: "batch", Problem: "missing '='"},
		&ReservationError{Needed: 1 << 30, Available: 1 << 20, Limit: 1 << 20, Envelope: Envelope{"seq": {Lo: 1, Hi: 4}}, Dim: "seq", Fits: 2},
	}
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	_, err := PlanEnvelope(t.Context(), m, Envelope{"batch": {Lo: 1, Hi: 2}}, Options{Workers: 2})
	require.Error(t, err)
	errs = append(errs, err)
	_, err = InputDims(m, map[string]kernels.Tensor{})
	errs = append(errs, err)
	for _, err := range errs {
		require.NotContains(t, err.Error(), "--", "%T: %v", err, err)
	}
	require.Equal(t, `no value for dim "seq", "batch" (the model's dims are batch, seq)`, errs[2].Error())
}
