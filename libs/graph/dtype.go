// Package graph imports ONNX models, infers shapes over symbolic dims and derives buffer lifetimes.
package graph

import "fmt"

// DType is an ONNX tensor element type; the values are TensorProto.DataType's.
type DType int32

const (
	Undefined DType = 0
	Float32   DType = 1
	Uint8     DType = 2
	Int8      DType = 3
	Uint16    DType = 4
	Int16     DType = 5
	Int32     DType = 6
	Int64     DType = 7
	String    DType = 8
	Bool      DType = 9
	Float16   DType = 10
	Float64   DType = 11
	Uint32    DType = 12
	Uint64    DType = 13
	BFloat16  DType = 16
	Uint4     DType = 21
	Int4      DType = 22
)

var dtypeNames = map[DType]string{
	Undefined: "undefined", Float32: "float32", Uint8: "uint8", Int8: "int8", Uint16: "uint16",
	Int16: "int16", Int32: "int32", Int64: "int64", String: "string", Bool: "bool",
	Float16: "float16", Float64: "float64", Uint32: "uint32", Uint64: "uint64",
	BFloat16: "bfloat16", Uint4: "uint4", Int4: "int4",
}

func (d DType) String() string {
	if s, ok := dtypeNames[d]; ok {
		return s
	}
	return fmt.Sprintf("dtype(%d)", int32(d))
}

// Size is the element size in bytes; 0 for types without a fixed byte size (string, 4-bit).
func (d DType) Size() int64 {
	switch d {
	case Float32, Int32, Uint32:
		return 4
	case Uint8, Int8, Bool:
		return 1
	case Uint16, Int16, Float16, BFloat16:
		return 2
	case Int64, Float64, Uint64:
		return 8
	}
	return 0
}
