package graph

import "fmt"

// DimValueError reports a named dim bound to a value the model cannot take: negative, or zero.
// Zero is refused because a zero named dim empties every input along it, and carve's kernels
// are not written for empty inputs (a zero-size workspace recipe, an empty reduction): Bind
// refuses it before anything is planned or reserved. Empty tensors that a model makes itself
// (an empty past key/value built with ConstantOfShape) are the kernels' to handle, as before.
type DimValueError struct {
	Dim   string
	Value int64
}

func (e *DimValueError) Error() string {
	if e.Value < 0 {
		return fmt.Sprintf("dim %q is negative (%d)", e.Dim, e.Value)
	}
	return fmt.Sprintf("dim %q is 0: zero-size inputs are not supported, every dim must be at least 1", e.Dim)
}
