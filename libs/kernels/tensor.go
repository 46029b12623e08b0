package kernels

import (
	"fmt"
	"unsafe"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
)

// Tensor is a kernel's view of one dense, row-major tensor. The CPU backend reads and writes Data;
// a device backend uses Addr (the device address of the first element) and leaves Data nil.
// A Tensor does not own its memory: the runner binds it to planned arena bytes. It is a plain value
// and not safe for concurrent mutation.
type Tensor struct {
	DType graph.DType
	Shape []int64
	Data  []byte    // host bytes, len == NumElements(Shape) * DType.Size()
	Addr  alloc.Ptr // device address for device backends; 0 for host tensors
}

// NewTensor allocates a zeroed host tensor. For tests and tools; kernels never call it.
func NewTensor(dt graph.DType, shape ...int64) (Tensor, error) {
	n, err := ByteSize(dt, shape)
	if err != nil {
		return Tensor{}, err
	}
	return Tensor{DType: dt, Shape: append([]int64(nil), shape...), Data: make([]byte, n)}, nil
}

// MustTensor is NewTensor that panics on an invalid shape; for tests.
func MustTensor(dt graph.DType, shape ...int64) Tensor {
	t, err := NewTensor(dt, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Len is the number of elements (the product of Shape). It does not check for overflow: call it
// on tensors whose shapes a kernel's Select has validated (kernels.NumElements checks).
func (t Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= int(d)
	}
	return n
}

func (t Tensor) String() string { return fmt.Sprintf("%v%v", t.DType, t.Shape) }

// view reinterprets t.Data as a []E. Data comes from the arena (256-byte aligned offsets) or from
// Go allocations, which are aligned for every element type we view.
func view[E any](b []byte) []E {
	var zero E
	es := int(unsafe.Sizeof(zero))
	if len(b) < es {
		return nil
	}
	return unsafe.Slice((*E)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/es)
}

// Float32s views Data as float32s; the caller checks DType.
func (t Tensor) Float32s() []float32 { return view[float32](t.Data) }

// Float64s views Data as float64s.
func (t Tensor) Float64s() []float64 { return view[float64](t.Data) }

// Int64s views Data as int64s.
func (t Tensor) Int64s() []int64 { return view[int64](t.Data) }

// Int32s views Data as int32s.
func (t Tensor) Int32s() []int32 { return view[int32](t.Data) }

// Uint16s views Data as uint16s (float16 and bfloat16 bits).
func (t Tensor) Uint16s() []uint16 { return view[uint16](t.Data) }

// BytesOf reinterprets a slice of fixed-size elements as bytes, sharing memory; for building tensors.
func BytesOf[E any](s []E) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero E
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// ViewAs reinterprets b as a slice of E, sharing memory.
func ViewAs[E any](b []byte) []E { return view[E](b) }
