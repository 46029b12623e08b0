package graph_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	pb "carve.dev/libs/graph/internal/onnxpb"
)

// The helpers build small ONNX models for tests with the generated protobuf types.

type mb struct {
	nodes   []*pb.NodeProto
	inputs  []*pb.ValueInfoProto
	outputs []*pb.ValueInfoProto
	inits   []*pb.TensorProto
	opset   int64
	extra   []*pb.OperatorSetIdProto
}

func newModel() *mb { return &mb{opset: 18} }

// input declares a graph input; a dim is an int (fixed), a string (named) or nil (unnamed).
func (m *mb) input(name string, dt int32, dims ...any) *mb {
	m.inputs = append(m.inputs, valueInfo(name, dt, dims...))
	return m
}

func (m *mb) output(names ...string) *mb {
	for _, n := range names {
		m.outputs = append(m.outputs, &pb.ValueInfoProto{Name: n})
	}
	return m
}

func (m *mb) node(op string, ins, outs []string, attrs ...*pb.AttributeProto) *mb {
	m.nodes = append(m.nodes, &pb.NodeProto{OpType: op, Name: op + "_" + outs[0], Input: ins, Output: outs, Attribute: attrs})
	return m
}

func (m *mb) msNode(op string, ins, outs []string, attrs ...*pb.AttributeProto) *mb {
	m.node(op, ins, outs, attrs...)
	m.nodes[len(m.nodes)-1].Domain = "com.microsoft"
	return m
}

func (m *mb) initInt64(name string, dims []int64, vals ...int64) *mb {
	m.inits = append(m.inits, &pb.TensorProto{Name: name, DataType: int32(pb.TensorProto_INT64), Dims: dims, Int64Data: vals})
	return m
}

func (m *mb) initRaw(name string, dt int32, dims []int64, raw []byte) *mb {
	m.inits = append(m.inits, &pb.TensorProto{Name: name, DataType: dt, Dims: dims, RawData: raw})
	return m
}

func (m *mb) initFloat(name string, dims []int64, vals ...float32) *mb {
	raw := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	return m.initRaw(name, int32(pb.TensorProto_FLOAT), dims, raw)
}

func (m *mb) initExternal(name string, dt int32, dims []int64, kv ...string) *mb {
	t := &pb.TensorProto{Name: name, DataType: dt, Dims: dims, DataLocation: pb.TensorProto_EXTERNAL}
	for i := 0; i+1 < len(kv); i += 2 {
		t.ExternalData = append(t.ExternalData, &pb.StringStringEntryProto{Key: kv[i], Value: kv[i+1]})
	}
	m.inits = append(m.inits, t)
	return m
}

func (m *mb) proto() *pb.ModelProto {
	ops := append([]*pb.OperatorSetIdProto{{Domain: "", Version: m.opset}, {Domain: "com.microsoft", Version: 1}}, m.extra...)
	return &pb.ModelProto{
		IrVersion:   10,
		OpsetImport: ops,
		Graph: &pb.GraphProto{
			Name: "test", Node: m.nodes, Input: m.inputs, Output: m.outputs, Initializer: m.inits,
		},
	}
}

func (m *mb) bytes(t testing.TB) []byte {
	t.Helper()
	b, err := proto.Marshal(m.proto())
	require.NoError(t, err)
	return b
}

func valueInfo(name string, dt int32, dims ...any) *pb.ValueInfoProto {
	shape := &pb.TensorShapeProto{}
	for _, d := range dims {
		switch x := d.(type) {
		case int:
			shape.Dim = append(shape.Dim, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(x)}})
		case int64:
			shape.Dim = append(shape.Dim, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: x}})
		case string:
			shape.Dim = append(shape.Dim, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: x}})
		default:
			shape.Dim = append(shape.Dim, &pb.TensorShapeProto_Dimension{})
		}
	}
	return &pb.ValueInfoProto{Name: name, Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
		TensorType: &pb.TypeProto_Tensor{ElemType: dt, Shape: shape}}}}
}

func attrInt(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: name, Type: pb.AttributeProto_INT, I: v}
}

func attrInts(name string, v ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: name, Type: pb.AttributeProto_INTS, Ints: v}
}

const (
	f32 = int32(pb.TensorProto_FLOAT)
	i64 = int32(pb.TensorProto_INT64)
)
