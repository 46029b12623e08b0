// Package bundled holds the small ONNX model (a tiny GPT-2) built into carve's command-line
// apps, so that they estimate and run something real when no model file is given. Everything
// here is safe for concurrent use.
package bundled

import (
	_ "embed"
	"fmt"

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

// DimRange is the inclusive range Lo..Hi of one dim's values.
type DimRange struct{ Lo, Hi int64 }

// EstimateRanges returns, by dim name, the ranges that estimates of the bundled model use for
// dims the user does not give: small ranges of every dim (batch 1..4, seq 1..128), so that
// the first report is quick and readable. Each call returns a new map.
func EstimateRanges() map[string]DimRange {
	return map[string]DimRange{
		"batch": {Lo: 1, Hi: 4},
		"seq":   {Lo: 1, Hi: 128},
	}
}

// RunBinding returns, by dim name, the values that runs of the bundled model use for dims
// neither the user nor the inputs give: one small binding (batch 2, seq 16), so that a bare
// run is quick. Each call returns a new map.
func RunBinding() map[string]int64 {
	return map[string]int64{"batch": 2, "seq": 16}
}
