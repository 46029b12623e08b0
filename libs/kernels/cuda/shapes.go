package cuda

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The node checks both backends make the same way (axes, broadcasting, arity, outputs, each
// op's attributes and shapes) are in package kernels (check.go and check_*.go), so that CUDA
// accepts exactly the nodes the CPU does; the helpers below work in this backend's int64
// indexing.

// numel is the element count of a shape already validated at Select (no overflow possible).
func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// pow2AtLeast is the smallest power of two that is at least n and at least floor (itself a power
// of two): a kernel's compiled row count for n rows.
func pow2AtLeast(n, floor int64) int64 {
	r := floor
	for r < n {
		r *= 2
	}
	return r
}

// stridesOf is the row-major element strides of shape.
func stridesOf(shape []int64) []int64 {
	st := make([]int64, len(shape))
	s := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

func isFloat(dt graph.DType) bool {
	return dt == graph.Float32 || dt == graph.Float16 || dt == graph.BFloat16
}

func isInt(dt graph.DType) bool { return dt == graph.Int64 || dt == graph.Int32 }

// dtName is the kernel-name suffix of a float or integer type the CUDA kernels are built for.
func dtName(dt graph.DType) string {
	switch dt {
	case graph.Float32:
		return "f32"
	case graph.Float16:
		return "f16"
	case graph.BFloat16:
		return "bf16"
	case graph.Int64:
		return "i64"
	case graph.Int32:
		return "i32"
	}
	return ""
}

// errDType is the error for a dtype the CUDA kernels of an op are not built for.
func errDType(what string, dt graph.DType, want string) error {
	return fmt.Errorf("%s is %v; the CUDA kernels take %s", what, dt, want)
}

func equalShape(a, b []int64) bool { return slices.Equal(a, b) }

// pick is a range's low or high end.
func pick(d kernels.DimRange, hi bool) int64 {
	if hi {
		return d.Hi
	}
	return d.Lo
}
