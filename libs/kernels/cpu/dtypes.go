package cpu

import (
	"math"

	"github.com/x448/float16"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// number is every Go type an ONNX numeric element maps to.
type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

type float interface{ ~float32 | ~float64 }

func f16(u uint16) float32   { return float16.Frombits(u).Float32() }
func tof16(f float32) uint16 { return uint16(float16.Fromfloat32(f)) }
func bf16(u uint16) float32  { return math.Float32frombits(uint32(u) << 16) }
func tobf16(f float32) uint16 { // round to nearest even, NaN kept quiet
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// loadF64 reads element i of t as float64 (ints converted); for scalar parameters.
func loadF64(t kernels.Tensor, i int) float64 {
	switch t.DType {
	case graph.Float32:
		return float64(t.Float32s()[i])
	case graph.Float64:
		return t.Float64s()[i]
	case graph.Float16:
		return float64(f16(t.Uint16s()[i]))
	case graph.BFloat16:
		return float64(bf16(t.Uint16s()[i]))
	}
	return float64(loadI64(t, i))
}

// loadI64 reads element i of an integer or bool tensor as int64 (floats truncated).
func loadI64(t kernels.Tensor, i int) int64 {
	switch t.DType {
	case graph.Int64:
		return t.Int64s()[i]
	case graph.Int32:
		return int64(t.Int32s()[i])
	case graph.Int16:
		return int64(kernels.ViewAs[int16](t.Data)[i])
	case graph.Int8:
		return int64(int8(t.Data[i]))
	case graph.Uint8, graph.Bool:
		return int64(t.Data[i])
	case graph.Uint16:
		return int64(t.Uint16s()[i])
	case graph.Uint32:
		return int64(kernels.ViewAs[uint32](t.Data)[i])
	case graph.Uint64:
		return int64(kernels.ViewAs[uint64](t.Data)[i])
	case graph.Float32, graph.Float64, graph.Float16, graph.BFloat16:
		return int64(loadF64(t, i))
	}
	return 0
}
