// Package bundled holds the small ONNX model built into the runner, so that `runner run` and
// `runner bench` work with no files at all.
package bundled

import (
	_ "embed"
	"fmt"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
)

// Name is how reports name the bundled model.
const Name = "bundled:gpt2"

//go:embed gpt2.onnx
var gpt2 []byte

// Bytes returns the bundled model's .onnx bytes. The slice is shared: do not modify it.
func Bytes() []byte { return gpt2 }

// Load parses the bundled model. The model aliases the embedded bytes, which never change, so
// it needs no Close; each call returns a new Model.
func Load() (*graph.Model, error) {
	m, err := graph.Parse(gpt2, "")
	if err != nil {
		return nil, fmt.Errorf("bundled model: %w", err)
	}
	return m, nil
}

// DefaultEnvelope is the envelope used for the bundled model's dims that no --dim and no input
// gives: one small binding, so that a bare `runner run` is quick.
func DefaultEnvelope() engine.Envelope {
	return engine.Envelope{"batch": {Lo: 2, Hi: 2}, "seq": {Lo: 16, Hi: 16}}
}
