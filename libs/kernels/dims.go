package kernels

import (
	"fmt"

	"carve.dev/libs/graph"
)

// Sizes: every product of dims in this module goes through graph.NumElements, the one
// overflow-checked multiplication of the repository; its *graph.OverflowError reaches callers
// wrapped.

// NumElements is the product of shape's dims (1 for a scalar), checked for overflow.
func NumElements(shape []int64) (int64, error) { return graph.NumElements(shape) }

// Product multiplies non-negative factors (dims, element sizes, slot counts), checked for
// overflow.
func Product(factors ...int64) (int64, error) {
	n, err := graph.NumElements(factors)
	if err != nil {
		return 0, fmt.Errorf("kernels: size %v: %w", factors, err)
	}
	return n, nil
}

// ByteSize is the number of bytes of a dense tensor of dtype and shape, checked for overflow.
func ByteSize(dt graph.DType, shape []int64) (int64, error) { return graph.ByteSize(dt, shape) }

// AddSizes adds non-negative sizes, failing on overflow.
func AddSizes(a, b int64) (int64, error) {
	if a < 0 || b < 0 {
		return 0, fmt.Errorf("kernels: negative size in %d+%d", a, b)
	}
	if a > 1<<63-1-b {
		return 0, &graph.OverflowError{What: fmt.Sprintf("sum %d+%d", a, b)}
	}
	return a + b, nil
}
