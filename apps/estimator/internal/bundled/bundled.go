// Package bundled holds the small ONNX model built into the estimator, so that its commands
// show a real report when no --model is given.
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

// Load parses the bundled model. The model aliases the embedded bytes, which never change,
// so it needs no Close; each call returns a new Model.
func Load() (*graph.Model, error) {
	m, err := graph.Parse(gpt2, "")
	if err != nil {
		return nil, fmt.Errorf("bundled model: %w", err)
	}
	return m, nil
}

// DefaultEnvelope is the envelope reports use for the bundled model when no --dim is given:
// small ranges of its dims, so that the first report is quick and readable.
func DefaultEnvelope() engine.Envelope {
	return engine.Envelope{
		"batch": {Lo: 1, Hi: 4},
		"seq":   {Lo: 1, Hi: 128},
	}
}
