package graph

import (
	"fmt"
	"math"
)

// OverflowError reports a size that does not fit in int64: a dim product, a byte size or a
// dim expression. Models that describe such tensors are rejected, never wrapped around.
type OverflowError struct {
	What string // what was being computed, e.g. "byte size of float32[1099511627776 16777216]"
}

func (e *OverflowError) Error() string { return "graph: " + e.What + " overflows int64" }

// CheckedMul returns a*b and true, or 0 and false when the product does not fit in int64. It
// takes operands of either sign. It is carve's one overflow-checked multiplication: NumElements,
// ByteSize and Dim arithmetic go through it here, and size products elsewhere should too.
// Hand-written: the standard library has no checked signed multiply (math/bits is unsigned).
func CheckedMul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	// Dividing back recovers a unless the product wrapped, except for MinInt64 * -1, which
	// wraps to MinInt64 and whose quotient by -1 wraps back to MinInt64.
	if c/b != a || (a == math.MinInt64 && b == -1) {
		return 0, false
	}
	return c, true
}

// CheckedAdd returns a+b and true, or 0 and false when the sum does not fit in int64. It takes
// operands of either sign: sizes and positions that people give (a context, a prompt's length
// and the tokens after it) are added through it, as products go through CheckedMul.
func CheckedAdd(a, b int64) (int64, bool) {
	c := a + b
	// The sum wrapped exactly when the operands share a sign that the sum does not.
	if (a >= 0) == (b >= 0) && (c >= 0) != (a >= 0) {
		return 0, false
	}
	return c, true
}

// NumElements is the product of shape's dims, with an *OverflowError if it does not fit in
// int64 and an error for a negative dim. The empty shape (a scalar) has one element.
func NumElements(shape []int64) (int64, error) {
	n := int64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("graph: dim %d of shape %v is negative", i, shape)
		}
		var ok bool
		if n, ok = CheckedMul(n, d); !ok {
			return 0, &OverflowError{What: fmt.Sprintf("element count of shape %v", shape)}
		}
	}
	return n, nil
}

// ByteSize is the number of bytes a dense tensor of dtype dt and the given shape occupies:
// 4-bit types pack two elements to a byte, rounding up. It is an error for dtypes without a
// fixed size (string, undefined) and an *OverflowError when the size does not fit in int64.
func ByteSize(dt DType, shape []int64) (int64, error) {
	n, err := NumElements(shape)
	if err != nil {
		return 0, err
	}
	return elemBytes(dt, n, shape)
}

func elemBytes(dt DType, n int64, shape []int64) (int64, error) {
	switch dt {
	case Uint4, Int4:
		return n/2 + n%2, nil
	}
	sz := dt.Size()
	if sz == 0 {
		return 0, fmt.Errorf("graph: %s tensors have no fixed byte size", dt)
	}
	b, ok := CheckedMul(n, sz)
	if !ok {
		return 0, &OverflowError{What: fmt.Sprintf("byte size of %s%v", dt, shape)}
	}
	return b, nil
}

// BroadcastShapes is the multidirectional (numpy) broadcast of concrete shapes: aligned from
// the right, a dim of 1 yields to the other.
func BroadcastShapes(shapes ...[]int64) ([]int64, error) {
	r := 0
	for _, s := range shapes {
		r = max(r, len(s))
	}
	out := make([]int64, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := r - len(s)
		for i, d := range s {
			o := &out[off+i]
			switch {
			case d == *o:
			case *o == 1:
				*o = d
			case d == 1:
			default:
				return nil, fmt.Errorf("shapes %v do not broadcast", shapes)
			}
		}
	}
	return out, nil
}
