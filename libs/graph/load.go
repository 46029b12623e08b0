package graph

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"carve.dev/libs/graph/internal/onnxpb"
)

// Supported ai.onnx opset range. Older opsets pass axes as attributes for more operators than
// we handle; newer ones are accepted once their semantics for our operators are checked.
const (
	minOpset = 13
	maxOpset = 24
)

// ModelError reports an ONNX model that is malformed or uses something carve does not
// support: a corrupt protobuf, a dangling value, a cycle, a bad tensor, an unsupported opset.
type ModelError struct {
	Node    *Node  // the node concerned, if any
	Tensor  string // the tensor or value concerned, if any
	Problem string
	Err     error // an underlying error, if any
}

func (e *ModelError) Error() string {
	var b strings.Builder
	b.WriteString("graph: model: ")
	if e.Node != nil {
		b.WriteString(e.Node.String())
		b.WriteString(": ")
	}
	if e.Tensor != "" {
		fmt.Fprintf(&b, "tensor %q: ", e.Tensor)
	}
	b.WriteString(e.Problem)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ModelError) Unwrap() error { return e.Err }

// Load reads an ONNX model file. The file is memory-mapped read-only and stays mapped until
// Model.Close: embedded weights are used where they lie, never copied. External data files
// are looked up next to the model, validated against their sizes, and mapped on first use;
// a missing one is reported only when its bytes are asked for, so a model without its
// weights still loads for shape and size work. The files must not change while the model
// is open: a mapped file that shrinks faults on access.
//
// path must name a regular file (through symbolic links): a directory, device, FIFO or socket
// is refused before it is opened, with an *fs.PathError wrapping ErrNotRegularFile.
func Load(path string) (*Model, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("graph: load %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("graph: load %s: %w", path, notRegular(path, fi))
	}
	data, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("graph: load %s: %w", path, err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		_ = unmapFile(data)
		return nil, fmt.Errorf("graph: load %s: %w", path, err)
	}
	// External data may also lie beside the model file's real path (see weightStore.resolve).
	realDir := ""
	if real, err := filepath.EvalSymlinks(path); err == nil {
		if real, err = filepath.Abs(real); err == nil {
			realDir = filepath.Dir(real)
		}
	}
	store := &weightStore{dir: dir, realDir: realDir, model: data, unmap: unmapFile}
	m, err := parse(data, store)
	if err != nil {
		_ = store.close()
		return nil, err
	}
	return m, nil
}

// Parse reads an ONNX model from data, which the Model aliases: data must not change while
// the Model is in use. dir is where external data files are looked for; with dir == "" a
// model with external data loads, but its external weights cannot be read.
func Parse(data []byte, dir string) (*Model, error) {
	return parse(data, &weightStore{dir: dir})
}

func parse(data []byte, store *weightStore) (*Model, error) {
	mp, g, raws, err := decodeModel(data)
	if err != nil {
		return nil, err
	}
	b := &builder{store: store, m: &Model{weights: store, byName: map[string]*Value{}}}
	if err := b.build(mp, g, raws); err != nil {
		return nil, err
	}
	if err := infer(b.m); err != nil {
		return nil, err
	}
	return b.m, nil
}

// ---- protobuf decoding without copying weights ----

// Field numbers of onnx.proto that the decoder handles itself.
const (
	modelGraphField      = 7  // ModelProto.graph
	graphInitField       = 5  // GraphProto.initializer
	graphSparseInitField = 15 // GraphProto.sparse_initializer
	graphValueInfoField  = 13 // GraphProto.value_info: exporters' shape hints, which carve infers itself
	tensorRawDataField   = 9  // TensorProto.raw_data
)

var unmarshal = proto.UnmarshalOptions{Merge: true}

// decodeModel decodes a ModelProto. Initializers' raw_data are not copied by the protobuf
// runtime: the decoder walks the wire format of the graph's initializers itself and returns
// their raw_data as slices of data (nil where a tensor has none), parallel to
// g.Initializer. Everything else is decoded by the generated code, field by field (protobuf
// merges repeated fields, so decoding fields one at a time equals decoding them together).
func decodeModel(data []byte) (*onnxpb.ModelProto, *onnxpb.GraphProto, [][]byte, error) {
	mp := &onnxpb.ModelProto{}
	var graph []byte
	graphs := 0
	err := walkFields(data, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
		if num == modelGraphField && typ == protowire.BytesType {
			graph = value
			graphs++
			return nil
		}
		return unmarshal.Unmarshal(field, mp)
	})
	if err != nil {
		return nil, nil, nil, &ModelError{Problem: "not a valid ONNX protobuf (ModelProto)", Err: err}
	}
	if graphs != 1 {
		return nil, nil, nil, &ModelError{Problem: fmt.Sprintf("model has %d graphs, want 1", graphs)}
	}
	g := &onnxpb.GraphProto{}
	var raws [][]byte
	err = walkFields(graph, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
		switch {
		case num == graphSparseInitField:
			return errors.New("sparse initializers are not supported")
		case num == graphValueInfoField:
			return nil // not used; skipping it halves the decoding time of exported LLMs
		case num == graphInitField && typ == protowire.BytesType:
			t := &onnxpb.TensorProto{}
			var raw []byte
			err := walkFields(value, func(num protowire.Number, typ protowire.Type, field, value []byte) error {
				if num == tensorRawDataField && typ == protowire.BytesType {
					raw = value[:len(value):len(value)]
					if raw == nil {
						raw = []byte{}
					}
					return nil
				}
				return unmarshal.Unmarshal(field, t)
			})
			if err != nil {
				return fmt.Errorf("initializer %d: %w", len(raws), err)
			}
			g.Initializer = append(g.Initializer, t)
			raws = append(raws, raw)
			return nil
		}
		return unmarshal.Unmarshal(field, g)
	})
	if err != nil {
		return nil, nil, nil, &ModelError{Problem: "not a valid ONNX graph", Err: err}
	}
	return mp, g, raws, nil
}

// walkFields calls fn for each field of a protobuf message's wire encoding: field is the
// whole field (tag and value), value the payload of a length-delimited field.
func walkFields(b []byte, fn func(num protowire.Number, typ protowire.Type, field, value []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		var value []byte
		if typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(b[n:])
			if k < 0 {
				return protowire.ParseError(k)
			}
			value = v
		}
		if err := fn(num, typ, b[:n+m], value); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

// ---- building the IR ----

type builder struct {
	m     *Model
	store *weightStore
	dims  map[string]bool
}

func (b *builder) value(name string) *Value {
	if v := b.m.byName[name]; v != nil {
		return v
	}
	v := &Value{ID: len(b.m.Values), Name: name}
	b.m.Values = append(b.m.Values, v)
	b.m.byName[name] = v
	return v
}

func (b *builder) build(mp *onnxpb.ModelProto, g *onnxpb.GraphProto, raws [][]byte) error {
	m := b.m
	m.IRVersion = mp.GetIrVersion()
	m.Producer = strings.TrimSpace(mp.GetProducerName() + " " + mp.GetProducerVersion())
	m.Opsets = map[string]int64{}
	for _, o := range mp.GetOpsetImport() {
		d := o.GetDomain()
		if d == "ai.onnx" {
			d = ""
		}
		m.Opsets[d] = o.GetVersion()
	}
	if err := checkOpsets(m.Opsets); err != nil {
		return err
	}

	// Initializers first: a graph input of the same name is an overridable default, which
	// carve treats as the weight it is.
	for i, tp := range g.GetInitializer() {
		name := tp.GetName()
		if name == "" {
			return &ModelError{Problem: fmt.Sprintf("initializer %d has no name", i)}
		}
		if b.m.byName[name] != nil {
			return &ModelError{Tensor: name, Problem: "initializer defined twice"}
		}
		t, err := b.tensor(tp, raws[i])
		if err != nil {
			return err
		}
		v := b.value(name)
		v.Kind, v.DType, v.Init, v.Shape = KindInitializer, t.DType, t, ConstShape(t.Shape)
		m.Initializers = append(m.Initializers, v)
	}
	b.dims = map[string]bool{}
	for _, vi := range g.GetInput() {
		name := vi.GetName()
		if name == "" {
			return &ModelError{Problem: "graph input has no name"}
		}
		if v := b.m.byName[name]; v != nil {
			if v.Kind == KindInitializer {
				continue
			}
			return &ModelError{Tensor: name, Problem: "graph input declared twice"}
		}
		v := b.value(name)
		v.Kind = KindInput
		dt, shape, err := b.valueType(vi, true)
		if err != nil {
			return err
		}
		v.DType, v.Shape = dt, shape
		m.Inputs = append(m.Inputs, v)
	}

	// Nodes: every output is defined once; inputs may refer to values defined later (the
	// graph is sorted below).
	protos := g.GetNode()
	m.Nodes = make([]*Node, len(protos))
	for i, np := range protos {
		n := &Node{Index: i, Name: np.GetName(), OpType: np.GetOpType(), Domain: np.GetDomain()}
		if n.Domain == "ai.onnx" {
			n.Domain = ""
		}
		m.Nodes[i] = n
		if n.OpType == "" {
			return &ModelError{Node: n, Problem: "node has no op_type"}
		}
		attrs, err := b.attributes(n, np.GetAttribute())
		if err != nil {
			return err
		}
		n.Attrs = attrs
		for _, name := range np.GetOutput() {
			if name == "" {
				n.Outputs = append(n.Outputs, nil)
				continue
			}
			v := b.value(name)
			if v.Producer != nil || v.Kind != KindActivation {
				return &ModelError{Node: n, Tensor: name, Problem: "value is defined more than once"}
			}
			v.Producer = n
			n.Outputs = append(n.Outputs, v)
		}
	}
	for _, n := range m.Nodes {
		for _, name := range protos[n.Index].GetInput() {
			if name == "" {
				n.Inputs = append(n.Inputs, nil)
				continue
			}
			v := b.m.byName[name]
			if v == nil {
				return &ModelError{Node: n, Tensor: name, Problem: "input is not a graph input, an initializer or any node's output"}
			}
			n.Inputs = append(n.Inputs, v)
		}
	}
	outputs := make([]string, len(g.GetOutput()))
	for i, vi := range g.GetOutput() {
		outputs[i] = vi.GetName()
	}
	return b.link(outputs)
}

// link finishes a model whose nodes have their inputs and outputs: it sorts the nodes
// topologically, marks Constant outputs, records every value's consumers and the graph
// outputs. Load and Build share it, so both keep the Model's invariants the same way.
func (b *builder) link(outputs []string) error {
	m := b.m
	if err := b.sort(); err != nil {
		return err
	}
	for _, n := range m.Nodes {
		if n.OpType == "Constant" && (n.Domain == "") {
			for _, o := range n.Outputs {
				if o != nil {
					o.Kind = KindConstant
				}
			}
		}
		seen := map[*Value]bool{}
		for _, in := range n.Inputs {
			if in != nil && !seen[in] {
				seen[in] = true
				in.Consumers = append(in.Consumers, n)
			}
		}
	}
	for _, name := range outputs {
		v := b.m.byName[name]
		if v == nil {
			return &ModelError{Tensor: name, Problem: "graph output is not defined by any node, input or initializer"}
		}
		if v.Output {
			return &ModelError{Tensor: name, Problem: "graph output listed twice"}
		}
		v.Output = true
		m.Outputs = append(m.Outputs, v)
	}
	return nil
}

// checkOpsets requires a supported ai.onnx opset.
func checkOpsets(opsets map[string]int64) error {
	v, ok := opsets[""]
	if !ok {
		return &ModelError{Problem: "model imports no ai.onnx opset"}
	}
	if v < minOpset || v > maxOpset {
		return &ModelError{Problem: fmt.Sprintf("ai.onnx opset %d is not supported (carve supports %d to %d)", v, minOpset, maxOpset)}
	}
	return nil
}

// valueType converts a graph input's declared type. Unnamed dynamic dims get the name
// "<input>.<axis>" so a binding can still give them a value.
func (b *builder) valueType(vi *onnxpb.ValueInfoProto, input bool) (DType, Shape, error) {
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return 0, nil, &ModelError{Tensor: vi.GetName(), Problem: "only tensor-typed graph inputs are supported"}
	}
	dt := DType(tt.GetElemType())
	if err := checkDType(dt); err != nil {
		return 0, nil, &ModelError{Tensor: vi.GetName(), Problem: err.Error()}
	}
	sp := tt.GetShape()
	if sp == nil {
		return 0, nil, &ModelError{Tensor: vi.GetName(), Problem: "graph input has no shape (its rank is unknown)"}
	}
	shape := make(Shape, len(sp.GetDim()))
	for i, d := range sp.GetDim() {
		switch x := d.GetValue().(type) {
		case *onnxpb.TensorShapeProto_Dimension_DimValue:
			if x.DimValue < 0 {
				return 0, nil, &ModelError{Tensor: vi.GetName(), Problem: fmt.Sprintf("dim %d is negative (%d)", i, x.DimValue)}
			}
			shape[i] = Const(x.DimValue)
		case *onnxpb.TensorShapeProto_Dimension_DimParam:
			shape[i] = b.dimParam(x.DimParam)
		default:
			shape[i] = b.dim(vi.GetName() + "." + strconv.Itoa(i))
		}
	}
	return dt, shape, nil
}

// dimParam reads a dim_param (ParseDimParam) and records the dims it names.
func (b *builder) dimParam(param string) Dim {
	d, names := ParseDimParam(param)
	for _, name := range names {
		b.dim(name)
	}
	return d
}

// dim records and returns the named dim name.
func (b *builder) dim(name string) Dim {
	if !b.dims[name] {
		b.dims[name] = true
		b.m.DimNames = append(b.m.DimNames, name)
	}
	return Sym(name)
}

func checkDType(dt DType) error {
	switch dt {
	case Undefined, String:
		return fmt.Errorf("element type %s is not supported", dt)
	}
	if _, ok := dtypeNames[dt]; !ok {
		return fmt.Errorf("element type %d is not supported", int32(dt))
	}
	return nil
}

// tensor converts an initializer. raw is its raw_data as a slice of the model's bytes.
func (b *builder) tensor(tp *onnxpb.TensorProto, raw []byte) (*Tensor, error) {
	name := tp.GetName()
	bad := func(format string, args ...any) error {
		return &ModelError{Tensor: name, Problem: fmt.Sprintf(format, args...)}
	}
	dt := DType(tp.GetDataType())
	if err := checkDType(dt); err != nil {
		return nil, bad("%v", err)
	}
	if tp.GetSegment() != nil {
		return nil, bad("segmented tensors are not supported")
	}
	shape := append([]int64(nil), tp.GetDims()...)
	size, err := ByteSize(dt, shape)
	if err != nil {
		return nil, &ModelError{Tensor: name, Problem: "bad shape", Err: err}
	}
	t := &Tensor{Name: name, DType: dt, Shape: shape, Size: size, store: b.store}
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		ext, err := b.external(tp, size)
		if err != nil {
			return nil, &ModelError{Tensor: name, Problem: "bad external data", Err: err}
		}
		t.ext = ext
		return t, nil
	}
	if raw != nil {
		if int64(len(raw)) != size {
			return nil, bad("raw_data holds %d bytes, want %d for %s%v", len(raw), size, dt, shape)
		}
		t.raw = raw
		return t, nil
	}
	t.raw, err = typedData(tp, dt, shape, size)
	if err != nil {
		return nil, &ModelError{Tensor: name, Problem: "bad data", Err: err}
	}
	return t, nil
}

// external validates an external data reference: a relative location inside the model's
// directory, offset and length that are numbers, a length that matches the tensor, and a
// range inside the file when the file is there.
func (b *builder) external(tp *onnxpb.TensorProto, size int64) (*externalRef, error) {
	var loc string
	offset, length := int64(0), int64(-1)
	for _, kv := range tp.GetExternalData() {
		switch kv.GetKey() {
		case "location":
			loc = kv.GetValue()
		case "offset", "length":
			n, err := strconv.ParseInt(kv.GetValue(), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s %q is not a non-negative integer", kv.GetKey(), kv.GetValue())
			}
			if kv.GetKey() == "offset" {
				offset = n
			} else {
				length = n
			}
		}
	}
	if length < 0 {
		length = size
	}
	if length != size {
		return nil, fmt.Errorf("length %d does not match the tensor's %d bytes", length, size)
	}
	f, err := b.store.file(loc)
	if err != nil {
		return nil, err
	}
	if f.size >= 0 && (offset > f.size || length > f.size-offset) {
		return nil, fmt.Errorf("bytes [%d, %d+%d) lie outside %s (%d bytes)", offset, offset, length, loc, f.size)
	}
	return &externalRef{file: f, offset: offset, length: length}, nil
}

// typedData encodes a tensor's typed fields (float_data, int64_data, ...) as little-endian
// bytes; an error if their count does not match the shape.
func typedData(tp *onnxpb.TensorProto, dt DType, shape []int64, size int64) ([]byte, error) {
	n, err := NumElements(shape)
	if err != nil {
		return nil, err
	}
	// The bytes are allocated only once the values present are counted: a corrupt model may
	// declare a shape of terabytes beside a few values.
	var out []byte
	count := func(got int, want int64) error {
		if int64(got) != want {
			return fmt.Errorf("%d values for %d elements of %s%v", got, want, dt, shape)
		}
		out = make([]byte, 0, size)
		return nil
	}
	switch dt {
	case Float32:
		if err := count(len(tp.GetFloatData()), n); err != nil {
			return nil, err
		}
		for _, f := range tp.GetFloatData() {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(f))
		}
	case Float64:
		if err := count(len(tp.GetDoubleData()), n); err != nil {
			return nil, err
		}
		for _, f := range tp.GetDoubleData() {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(f))
		}
	case Int64:
		if err := count(len(tp.GetInt64Data()), n); err != nil {
			return nil, err
		}
		for _, v := range tp.GetInt64Data() {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	case Uint32, Uint64:
		if err := count(len(tp.GetUint64Data()), n); err != nil {
			return nil, err
		}
		for _, v := range tp.GetUint64Data() {
			if dt == Uint32 {
				out = binary.LittleEndian.AppendUint32(out, uint32(v))
			} else {
				out = binary.LittleEndian.AppendUint64(out, v)
			}
		}
	case Int32, Int16, Uint16, Int8, Uint8, Bool, Float16, BFloat16:
		if err := count(len(tp.GetInt32Data()), n); err != nil {
			return nil, err
		}
		for _, v := range tp.GetInt32Data() {
			switch dt.Size() {
			case 4:
				out = binary.LittleEndian.AppendUint32(out, uint32(v))
			case 2:
				out = binary.LittleEndian.AppendUint16(out, uint16(v))
			default:
				out = append(out, byte(v))
			}
		}
	case Int4, Uint4:
		// int32_data holds the packed bytes, one to an int32.
		if err := count(len(tp.GetInt32Data()), size); err != nil {
			return nil, err
		}
		for _, v := range tp.GetInt32Data() {
			out = append(out, byte(v))
		}
	default:
		return nil, fmt.Errorf("typed data of %s is not supported", dt)
	}
	return out, nil
}

// hostTensor converts an attribute's tensor: small, decoded eagerly, copied by the protobuf
// runtime already.
func hostTensor(tp *onnxpb.TensorProto) (*HostTensor, error) {
	dt := DType(tp.GetDataType())
	if err := checkDType(dt); err != nil {
		return nil, err
	}
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return nil, errors.New("attribute tensors with external data are not supported")
	}
	shape := append([]int64(nil), tp.GetDims()...)
	size, err := ByteSize(dt, shape)
	if err != nil {
		return nil, err
	}
	if raw := tp.GetRawData(); raw != nil {
		if int64(len(raw)) != size {
			return nil, fmt.Errorf("raw_data holds %d bytes, want %d for %s%v", len(raw), size, dt, shape)
		}
		return &HostTensor{DType: dt, Shape: shape, Data: raw}, nil
	}
	data, err := typedData(tp, dt, shape, size)
	if err != nil {
		return nil, err
	}
	return &HostTensor{DType: dt, Shape: shape, Data: data}, nil
}

func (b *builder) attributes(n *Node, aps []*onnxpb.AttributeProto) (Attributes, error) {
	list := make([]Attribute, 0, len(aps))
	for _, ap := range aps {
		a := Attribute{Name: ap.GetName()}
		if a.Name == "" {
			return Attributes{}, &ModelError{Node: n, Problem: "attribute without a name"}
		}
		switch ap.GetType() {
		case onnxpb.AttributeProto_INT:
			a.Kind, a.Int = AttrInt, ap.GetI()
		case onnxpb.AttributeProto_FLOAT:
			a.Kind, a.Float = AttrFloat, ap.GetF()
		case onnxpb.AttributeProto_STRING:
			a.Kind, a.String = AttrString, string(ap.GetS())
		case onnxpb.AttributeProto_INTS:
			a.Kind, a.Ints = AttrInts, ap.GetInts()
		case onnxpb.AttributeProto_FLOATS:
			a.Kind, a.Floats = AttrFloats, ap.GetFloats()
		case onnxpb.AttributeProto_STRINGS:
			a.Kind = AttrStrings
			for _, s := range ap.GetStrings() {
				a.Strings = append(a.Strings, string(s))
			}
		case onnxpb.AttributeProto_TENSOR:
			t, err := hostTensor(ap.GetT())
			if err != nil {
				return Attributes{}, &ModelError{Node: n, Problem: fmt.Sprintf("attribute %q", a.Name), Err: err}
			}
			a.Kind, a.Tensor = AttrTensor, t
		case onnxpb.AttributeProto_GRAPH, onnxpb.AttributeProto_GRAPHS:
			a.Kind = AttrGraph
		default:
			a.Kind = AttrUndefined // sparse tensors, type protos: kept by name only
		}
		list = append(list, a)
	}
	return Attributes{list: list}, nil
}

// sort orders the nodes topologically, keeping the file's order where it is already valid
// (a node runs as soon as its inputs exist, earliest in the file first), and reports a cycle
// naming a node on it.
func (b *builder) sort() error {
	m := b.m
	nodes := m.Nodes
	indeg := make([]int, len(nodes))
	users := make([][]int, len(nodes))
	for _, n := range nodes {
		seen := map[int]bool{}
		for _, in := range n.Inputs {
			if in == nil || in.Producer == nil || seen[in.Producer.Index] {
				continue
			}
			p := in.Producer.Index
			seen[p] = true
			indeg[n.Index]++
			users[p] = append(users[p], n.Index)
		}
	}
	h := &intHeap{}
	for i, d := range indeg {
		if d == 0 {
			heap.Push(h, i)
		}
	}
	order := make([]*Node, 0, len(nodes))
	for h.Len() > 0 {
		i := heap.Pop(h).(int)
		order = append(order, nodes[i])
		for _, u := range users[i] {
			if indeg[u]--; indeg[u] == 0 {
				heap.Push(h, u)
			}
		}
	}
	if len(order) != len(nodes) {
		return &ModelError{Node: cycleNode(nodes, indeg), Problem: "the graph has a cycle through this node"}
	}
	for i, n := range order {
		n.Index = i
	}
	m.Nodes = order
	return nil
}

// cycleNode returns a node on a cycle among the nodes left unsorted (indeg > 0): walking
// from any of them to an unsorted producer must repeat a node, and that node is on a cycle.
func cycleNode(nodes []*Node, indeg []int) *Node {
	cur := -1
	for i, d := range indeg {
		if d > 0 {
			cur = i
			break
		}
	}
	visited := map[int]bool{}
	for !visited[cur] {
		visited[cur] = true
		for _, in := range nodes[cur].Inputs {
			if in != nil && in.Producer != nil && indeg[in.Producer.Index] > 0 {
				cur = in.Producer.Index
				break
			}
		}
	}
	return nodes[cur]
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
