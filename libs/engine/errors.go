package engine

import (
	"fmt"
	"strings"
)

// The engine's errors say what is wrong in terms of the model, its dims and its inputs, and
// carry the names and values concerned as fields, so that a program can word them for its own
// users (a command line names its flags; the engine never does).

// EnvelopeProblem says what is wrong with an envelope.
type EnvelopeProblem uint8

const (
	// UnknownDim: the envelope names a dim the model does not have (Dims holds it).
	UnknownDim EnvelopeProblem = iota + 1
	// OpenDim: a dim is open (name=?), which only a fit search takes (Dims holds it).
	OpenDim
	// MissingDims: the envelope gives no range for some of the model's dims (Dims holds them).
	MissingDims
	// TooManyVarying: more dims vary than are planned at once (Varying of at most MaxVarying).
	TooManyVarying
)

// EnvelopeError reports an envelope that does not match the model.
type EnvelopeError struct {
	Problem EnvelopeProblem
	// Dims are the dims concerned: the unknown, open or missing ones.
	Dims []string
	// Known are the model's dims.
	Known []string
	// Varying and MaxVarying count varying dims, for TooManyVarying.
	Varying, MaxVarying int
}

func (e *EnvelopeError) Error() string {
	switch e.Problem {
	case UnknownDim:
		return fmt.Sprintf("unknown dim %s: the model's dims are %s", quoted(e.Dims), DimList(e.Known))
	case OpenDim:
		return fmt.Sprintf("dim %s is open (=?): only a fit search takes an open dim", quoted(e.Dims))
	case MissingDims:
		return fmt.Sprintf("no value for dim %s (the model's dims are %s)", quoted(e.Dims), DimList(e.Known))
	case TooManyVarying:
		return fmt.Sprintf("%d dims vary; carve plans at most %d varying dims at once", e.Varying, e.MaxVarying)
	}
	return fmt.Sprintf("bad envelope (problem %d)", e.Problem)
}

// DimList writes a model's dim names for messages: "batch, seq", or a note that it has none.
func DimList(dims []string) string {
	if len(dims) == 0 {
		return "none (all shapes are fixed)"
	}
	return strings.Join(dims, ", ")
}

func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// InputProblem says what is wrong with a set of inputs.
type InputProblem uint8

const (
	// InputInvalid: an input's dtype, rank, byte count or shape does not match the model.
	InputInvalid InputProblem = iota
	// InputUnknown: an input the model does not have (Input names it; Known lists the model's).
	InputUnknown
	// InputMissing: inputs of the model that are not given (Missing lists them, Input is the
	// first).
	InputMissing
	// InputDimUnset: no input's shape gives a dim of the model (Dim names it).
	InputDimUnset
	// InputOutsideEnvelope: the inputs' shapes give a dim outside the envelope the runtime
	// was planned and reserved for (Dim, Value and Range say which).
	InputOutsideEnvelope
)

// InputError reports inputs that do not match the model or the envelope.
type InputError struct {
	Input   string // the input concerned, "" for the set as a whole
	Kind    InputProblem
	Problem string // the problem in words, without the input's name

	Known   []string // InputUnknown: the model's inputs, in declaration order
	Missing []string // InputMissing: every input not given, in declaration order
	Dim     string   // InputDimUnset, InputOutsideEnvelope: the dim
	Value   int64    // InputOutsideEnvelope: the dim's value
	Range   Range    // InputOutsideEnvelope: the dim's range in the envelope
}

func (e *InputError) Error() string {
	if e.Input == "" {
		return "bad inputs: " + e.Problem
	}
	return fmt.Sprintf("bad input %q: %s", e.Input, e.Problem)
}
