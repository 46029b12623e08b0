// Package onnxenc writes ONNX protobuf by hand for the benchmark models' generators
// (tools/ortbench/gpt2gen, resnetgen, vitgen): the few messages they need (tensors, attributes, value
// infos), with the field numbers of onnx.proto. Hand-written because the generators need only
// these and the project carries no protobuf runtime for tools.
package onnxenc

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
)

// WriteFile writes an encoded model to path: the error of the write or, failing none, of the
// close.
func WriteFile(path string, model []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(model)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

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
	AttrString = 3
	AttrTensor = 4
	AttrInts   = 7
)

// Attr is a node attribute: Typ says which of F, I, S, Ints and T it holds.
type Attr struct {
	Name string
	Typ  int
	F    float32
	I    int64
	S    string
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
	case AttrString:
		b.Str(4, a.S)
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

// IntAttr, FloatAttr, StringAttr and IntsAttr are attributes of one int, one float, a string
// and a list of ints.
func IntAttr(name string, v int64) Attr     { return Attr{Name: name, Typ: AttrInt, I: v} }
func FloatAttr(name string, v float32) Attr { return Attr{Name: name, Typ: AttrFloat, F: v} }
func StringAttr(name, v string) Attr        { return Attr{Name: name, Typ: AttrString, S: v} }
func IntsAttr(name string, v ...int64) Attr { return Attr{Name: name, Typ: AttrInts, Ints: v} }

// Graph is a GraphProto being built: nodes named by op type and count, initializers, inputs and
// outputs.
type Graph struct {
	Nodes   []PB
	Inits   []PB
	Inputs  [][]byte
	Outputs [][]byte
	n       int
}

// Op adds a node and returns its nout output names.
func (g *Graph) Op(typ string, inputs []string, nout int, attrs ...Attr) []string {
	g.n++
	var b PB
	for _, in := range inputs {
		b.Str(1, in)
	}
	outs := make([]string, nout)
	for i := range outs {
		outs[i] = fmt.Sprintf("%s_%d_%d", typ, g.n, i)
		b.Str(2, outs[i])
	}
	b.Str(3, fmt.Sprintf("%s_%d", typ, g.n))
	b.Str(4, typ)
	for _, a := range attrs {
		b.Bytes(5, a.Encode())
	}
	g.Nodes = append(g.Nodes, b)
	return outs
}

// Op1 adds a node of one output and returns its name.
func (g *Graph) Op1(typ string, inputs []string, attrs ...Attr) string {
	return g.Op(typ, inputs, 1, attrs...)[0]
}

// Init adds an initializer and returns its name.
func (g *Graph) Init(name string, dt int, dims []int64, raw []byte) string {
	g.Inits = append(g.Inits, Tensor(name, dt, dims, raw))
	return name
}

// Model is the ModelProto (IR version 8) holding the graph, named name, of the default domain's

// Floats adds a float32 initializer of shape dims and returns its name.
func (g *Graph) Floats(name string, dims []int64, v []float32) string {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return g.Init(name, TFloat, dims, raw)
}

// Ints adds an int64 initializer of shape [len(vals)] and returns its name.
func (g *Graph) Ints(name string, vals ...int64) string {
	raw := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return g.Init(name, TInt64, []int64{int64(len(vals))}, raw)
}

// opset.
func (g *Graph) Model(name, producer string, opset int64) []byte {
	var gr PB
	for _, n := range g.Nodes {
		gr.Bytes(1, n)
	}
	gr.Str(2, name)
	for _, t := range g.Inits {
		gr.Bytes(5, t)
	}
	for _, v := range g.Inputs {
		gr.Bytes(11, v)
	}
	for _, v := range g.Outputs {
		gr.Bytes(12, v)
	}
	var os PB
	os.Str(1, "")
	os.Int(2, opset)
	var m PB
	m.Int(1, 8) // IR version
	m.Str(2, producer)
	m.Bytes(7, gr)
	m.Bytes(8, os)
	return m
}
