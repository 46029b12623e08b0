package graph

import (
	"fmt"
	"math/bits"
)

// OverflowError reports a size that does not fit in int64: a dim product, a byte size or a
// dim expression. Models that describe such tensors are rejected, never wrapped around.
type OverflowError struct {
	What string // what was being computed, e.g. "byte size of float32[1099511627776 16777216]"
}

func (e *OverflowError) Error() string { return "graph: " + e.What + " overflows int64" }

// mulDims is the overflow-checked product of two non-negative dims; the one multiplication
// every dim product in this package goes through.
func mulDims(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > 1<<63-1 {
		return 0, false
	}
	return int64(lo), true
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
		if n, ok = mulDims(n, d); !ok {
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
	b, ok := mulDims(n, sz)
	if !ok {
		return 0, &OverflowError{What: fmt.Sprintf("byte size of %s%v", dt, shape)}
	}
	return b, nil
}
