package engine

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// InputDims checks inputs (host tensors by input name) against m's declared inputs and returns
// the dims their shapes give: every input of the model present and no other, each with its
// dtype, rank and byte count, fixed dims as the model fixes them, and a dim given by several
// inputs equal in all of them. Dims that only expressions of an input's dims mention are not
// derived. Errors are *InputError: InputUnknown and InputMissing first (naming every missing
// input), then InputInvalid for the first input, in declaration order, that is wrong.
func InputDims(m *graph.Model, inputs map[string]kernels.Tensor) (Binding, error) {
	return inputDims(m, inputs, nil)
}

// inputDims is InputDims where the inputs held in state buffers (by Value.ID) are given by their
// shapes alone: their bytes are the session's.
func inputDims(m *graph.Model, inputs map[string]kernels.Tensor, held map[int]int) (Binding, error) {
	if err := CheckInputNames(m, inputs); err != nil {
		return nil, err
	}
	dims := Binding{}
	for _, v := range m.Inputs {
		t := inputs[v.Name]
		bad := func(format string, args ...any) error {
			return &InputError{Input: v.Name, Kind: InputInvalid, Problem: fmt.Sprintf(format, args...)}
		}
		if t.DType != v.DType {
			return nil, bad("dtype %s, want %s", t.DType, v.DType)
		}
		if len(t.Shape) != len(v.Shape) {
			return nil, bad("rank %d (shape %v), want rank %d %s", len(t.Shape), t.Shape, len(v.Shape), v.Shape)
		}
		n, err := graph.ByteSize(t.DType, t.Shape)
		if err != nil {
			return nil, bad("%v", err)
		}
		if _, ok := held[v.ID]; ok {
			if len(t.Data) != 0 {
				return nil, bad("is held in a state buffer of the session: give its shape only, without data")
			}
		} else if int64(len(t.Data)) != n {
			return nil, bad("holds %d bytes, shape %v needs %d", len(t.Data), t.Shape, n)
		}
		for i, d := range v.Shape {
			if c, ok := d.Value(); ok {
				if t.Shape[i] != c {
					return nil, bad("dim %d is %d, the model fixes it at %d", i, t.Shape[i], c)
				}
				continue
			}
			syms := d.Syms(nil)
			if len(syms) != 1 || d.String() != syms[0] {
				continue // an expression of dims: checked when the binding is planned
			}
			name := syms[0]
			if old, seen := dims[name]; seen && old != t.Shape[i] {
				return nil, bad("dim %d (%s) is %d, but another input gives %s=%d", i, name, t.Shape[i], name, old)
			}
			dims[name] = t.Shape[i]
		}
	}
	return dims, nil
}

// CheckInputNames reports inputs the model does not have and inputs of the model that are not
// given, as an *InputError of kind InputUnknown or InputMissing.
func CheckInputNames(m *graph.Model, inputs map[string]kernels.Tensor) error {
	names := make([]string, len(m.Inputs))
	for i, v := range m.Inputs {
		names[i] = v.Name
	}
	for _, name := range sortedNames(inputs) {
		if v := m.Value(name); v == nil || v.Kind != graph.KindInput {
			return &InputError{Input: name, Kind: InputUnknown, Known: names,
				Problem: fmt.Sprintf("the model has no such input (its inputs are %s)", DimList(names))}
		}
	}
	var missing []string
	for _, v := range m.Inputs {
		if _, ok := inputs[v.Name]; !ok {
			missing = append(missing, v.Name)
		}
	}
	if len(missing) > 0 {
		v := m.Value(missing[0])
		return &InputError{Input: missing[0], Kind: InputMissing, Missing: missing, Problem: fmt.Sprintf("missing (want %s)", v)}
	}
	return nil
}

// CheckBinding checks that dims (from InputDims) give every dim of m a value inside env.
func CheckBinding(m *graph.Model, env Envelope, dims Binding) error {
	for _, name := range m.DimNames {
		v, ok := dims[name]
		if !ok {
			return &InputError{Kind: InputDimUnset, Dim: name, Problem: fmt.Sprintf("no input shape gives dim %q", name)}
		}
		r := env[name]
		if v < r.Lo || v > r.Hi {
			return &InputError{Kind: InputOutsideEnvelope, Dim: name, Value: v, Range: r,
				Problem: fmt.Sprintf("%s=%d is outside the declared envelope %s=%s", name, v, name, r)}
		}
	}
	return nil
}

// EnvelopeFromInputs completes env with the dims that the inputs' shapes give (InputDims):
// each dim env leaves out becomes the one value the inputs give it. Dims env gives stay as
// given (a run checks the inputs against them); dims that no input gives stay missing. With no
// inputs, env is returned as is. The inputs' errors are InputDims's.
func EnvelopeFromInputs(m *graph.Model, env Envelope, inputs map[string]kernels.Tensor) (Envelope, error) {
	out := make(Envelope, len(env))
	for n, r := range env {
		out[n] = r
	}
	if inputs == nil {
		return out, nil
	}
	dims, err := InputDims(m, inputs)
	if err != nil {
		return nil, err
	}
	for n, v := range dims {
		if _, given := out[n]; !given {
			out[n] = Range{Lo: v, Hi: v}
		}
	}
	return out, nil
}

func sortedNames[V any](m map[string]V) []string {
	e := make(Envelope, len(m))
	for k := range m {
		e[k] = Range{}
	}
	return e.Names()
}
