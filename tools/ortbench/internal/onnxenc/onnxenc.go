// Package onnxenc writes ONNX protobuf by hand for the benchmark models' generators
// (tools/ortbench/gpt2gen, resnetgen): the few messages they need (tensors, attributes, value
// infos), with the field numbers of onnx.proto. Hand-written because the generators need only
// these and the project carries no protobuf runtime for tools.
package onnxenc

import (
	"encoding/binary"
	"math"
)

// PB is a protobuf message being written.
type PB []byte

func (b *PB) Varint(v uint64)     { *b = binary.AppendUvarint(*b, v) }
func (b *PB) Tag(field, wire int) { b.Varint(uint64(field<<3 | wire)) }
func (b *PB) Int(field int, v int64) {
	b.Tag(field, 0)
	b.Varint(uint64(v))
}
func (b *PB) Bytes(field int, v []byte) {
	b.Tag(field, 2)
	b.Varint(uint64(len(v)))
	*b = append(*b, v...)
}
func (b *PB) Str(field int, s string) { b.Bytes(field, []byte(s)) }
func (b *PB) Float(field int, v float32) {
	b.Tag(field, 5)
	*b = binary.LittleEndian.AppendUint32(*b, math.Float32bits(v))
}

// ONNX field numbers and enums (onnx.proto).
const (
	TFloat = 1 // TensorProto.FLOAT
	TInt64 = 7 // TensorProto.INT64

	AttrFloat  = 1 // AttributeProto.FLOAT
	AttrInt    = 2
	AttrTensor = 4
	AttrInts   = 7
)

// Attr is a node attribute: Typ says which of F, I, Ints and T it holds.
type Attr struct {
	Name string
	Typ  int
	F    float32
	I    int64
	Ints []int64
	T    PB
}

// Encode is the AttributeProto.
func (a Attr) Encode() []byte {
	var b PB
	b.Str(1, a.Name)
	switch a.Typ {
	case AttrFloat:
		b.Float(2, a.F)
	case AttrInt:
		b.Int(3, a.I)
	case AttrTensor:
		b.Bytes(5, a.T)
	case AttrInts:
		for _, v := range a.Ints {
			b.Int(8, v)
		}
	}
	b.Int(20, int64(a.Typ))
	return b
}

// Tensor is a TensorProto of type dt with raw little-endian data.
func Tensor(name string, dt int, dims []int64, raw []byte) PB {
	var b PB
	for _, d := range dims {
		b.Int(1, d)
	}
	b.Int(2, int64(dt))
	b.Str(8, name)
	b.Bytes(9, raw)
	return b
}

// ValueInfo is a tensor input or output; a dim is an int or a symbolic name.
func ValueInfo(name string, dt int, dims ...any) []byte {
	var shape PB
	for _, d := range dims {
		var dim PB
		switch d := d.(type) {
		case int:
			dim.Int(1, int64(d))
		case string:
			dim.Str(2, d)
		}
		shape.Bytes(1, dim)
	}
	var tt PB
	tt.Int(1, int64(dt))
	tt.Bytes(2, shape)
	var typ PB
	typ.Bytes(1, tt)
	var b PB
	b.Str(1, name)
	b.Bytes(2, typ)
	return b
}

// IntAttr, FloatAttr and IntsAttr are attributes of one int, one float and a list of ints.
func IntAttr(name string, v int64) Attr     { return Attr{Name: name, Typ: AttrInt, I: v} }
func FloatAttr(name string, v float32) Attr { return Attr{Name: name, Typ: AttrFloat, F: v} }
func IntsAttr(name string, v ...int64) Attr { return Attr{Name: name, Typ: AttrInts, Ints: v} }
