package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/x448/float16"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The v2 protocol's datatypes, by carve's dtype.
var v2Types = map[graph.DType]string{
	graph.Bool: "BOOL", graph.Uint8: "UINT8", graph.Uint16: "UINT16", graph.Uint32: "UINT32", graph.Uint64: "UINT64",
	graph.Int8: "INT8", graph.Int16: "INT16", graph.Int32: "INT32", graph.Int64: "INT64",
	graph.Float16: "FP16", graph.Float32: "FP32", graph.Float64: "FP64", graph.BFloat16: "BF16",
}

func v2Type(dt graph.DType) string {
	if s, ok := v2Types[dt]; ok {
		return s
	}
	return dt.String()
}

type tensorMetadata struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"` // -1 for a dim the envelope sets
}

func metadataOf(vs []*graph.Value) []tensorMetadata {
	out := []tensorMetadata{}
	for _, v := range vs {
		md := tensorMetadata{Name: v.Name, Datatype: v2Type(v.DType), Shape: []int64{}}
		for _, d := range v.Shape {
			if n, ok := d.Value(); ok {
				md.Shape = append(md.Shape, n)
			} else {
				md.Shape = append(md.Shape, -1)
			}
		}
		out = append(out, md)
	}
	return out
}

func (s *Server) modelMetadata(w http.ResponseWriter, r *http.Request) {
	if !s.available(w, r) || !s.model(w, r) {
		return
	}
	md := map[string]any{"name": s.name, "versions": []string{"1"}, "platform": "carve_onnx"}
	switch {
	case s.runner != nil:
		md["inputs"], md["outputs"] = metadataOf(s.runner.Model.Inputs), metadataOf(s.runner.Model.Outputs)
	case s.gen != nil:
		// A decoder's state is the server's: it is called through /v1/completions.
		md["inputs"], md["outputs"] = []tensorMetadata{}, []tensorMetadata{}
		md["parameters"] = map[string]any{"kv_cache_decoder": true, "context": s.gen.Generate.Context, "slots": s.slots(),
			"vocab": s.gen.Cache.Vocab, "completions": "/v1/completions"}
	}
	writeJSON(w, http.StatusOK, md)
}

type inferRequest struct {
	ID      string        `json:"id,omitempty"`
	Inputs  []inferTensor `json:"inputs"`
	Outputs []struct {
		Name string `json:"name"`
	} `json:"outputs,omitempty"`
}

type inferTensor struct {
	Name     string          `json:"name"`
	Shape    []int64         `json:"shape"`
	Datatype string          `json:"datatype"`
	Data     json.RawMessage `json:"data"`
}

type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badf(format string, args ...any) error { return &badRequest{fmt.Sprintf(format, args...)} }

func (s *Server) infer(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if !s.available(w, r) || !s.model(w, r) {
		return
	}
	if s.runner == nil {
		writeError(w, r, http.StatusBadRequest, "invalid_request_error",
			fmt.Sprintf("model %q is a KV-cache decoder whose cache the server holds: call POST /v1/completions", s.name))
		return
	}
	var req inferRequest
	if !decodeBody(w, r, &req) {
		return
	}
	m := s.runner.Model
	inputs, err := s.parseInputs(req.Inputs)
	if err == nil {
		_, err = s.runner.Runtime.Bind(inputs) // shapes against the model and the reserved envelope
	}
	if err != nil {
		writeError(w, r, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	want := map[string]bool{}
	for _, o := range req.Outputs {
		if m.Value(o.Name) == nil || !isOutput(m, o.Name) {
			writeError(w, r, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("no output %q: the model's outputs are %v", o.Name, names(m.Outputs)))
			return
		}
		want[o.Name] = true
	}
	if !s.admit(w, r, 1) {
		return
	}
	defer s.adm.leave(1)
	slot, err := s.acquire(r.Context())
	if err != nil {
		s.m.waiting.Dec()
		runError(w, r, err)
		return
	}
	outs, err := s.runner.Sessions[slot].Run(r.Context(), inputs)
	var body []byte
	if err == nil {
		// The outputs alias the session's arena: encode them before it is released.
		body = encodeOutputs(s.name, req.ID, m.Outputs, outs, want)
	}
	s.release(slot)
	if err != nil {
		runError(w, r, err, true)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	s.m.e2e.Observe(time.Since(start).Seconds())
}

func isOutput(m *graph.Model, name string) bool {
	for _, v := range m.Outputs {
		if v.Name == name {
			return true
		}
	}
	return false
}

func names(vs []*graph.Value) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

// parseInputs makes the request's tensors, checking each against the model's input of its name.
func (s *Server) parseInputs(ts []inferTensor) (map[string]kernels.Tensor, error) {
	m := s.runner.Model
	byName := map[string]*graph.Value{}
	for _, v := range m.Inputs {
		byName[v.Name] = v
	}
	in := map[string]kernels.Tensor{}
	for _, t := range ts {
		v, ok := byName[t.Name]
		switch {
		case !ok:
			return nil, badf("no input %q: the model's inputs are %v", t.Name, names(m.Inputs))
		case in[t.Name].DType != graph.Undefined:
			return nil, badf("input %q is given twice", t.Name)
		case t.Datatype != v2Type(v.DType):
			return nil, badf("input %q: datatype %q; the model takes %s", t.Name, t.Datatype, v2Type(v.DType))
		case len(t.Shape) != len(v.Shape):
			return nil, badf("input %q: shape %v has %d dims; the model's has %d", t.Name, t.Shape, len(t.Shape), len(v.Shape))
		}
		n := int64(1)
		for _, d := range t.Shape {
			if d < 0 || d > math.MaxInt32 {
				return nil, badf("input %q: shape %v: each dim must be in [0, %d]", t.Name, t.Shape, math.MaxInt32)
			}
			var ok bool
			if n, ok = graph.CheckedMul(n, d); !ok || n > s.opts.MaxBodyBytes {
				return nil, badf("input %q: shape %v holds more elements than the body limit admits", t.Name, t.Shape)
			}
		}
		tensor, err := kernels.NewTensor(v.DType, t.Shape...)
		if err != nil {
			return nil, badf("input %q: %v", t.Name, err)
		}
		if err := fill(tensor, t.Data); err != nil {
			return nil, badf("input %q: %v", t.Name, err)
		}
		in[t.Name] = tensor
	}
	for _, v := range m.Inputs {
		if _, ok := in[v.Name]; !ok {
			return nil, badf("input %q is missing: the model's inputs are %v", v.Name, names(m.Inputs))
		}
	}
	return in, nil
}

// fill reads data, a JSON array (flat or nested, in row-major order) of numbers (or booleans
// for BOOL), into t, which must take exactly as many elements.
func fill(t kernels.Tensor, data json.RawMessage) error {
	if len(data) == 0 {
		return errors.New("no data")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, i := t.Len(), 0
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("data: %v", err)
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '[':
				depth++
			case ']':
				depth--
			default:
				return errors.New("data: want an array of numbers, not objects")
			}
		case json.Number, bool:
			if depth == 0 {
				return errors.New("data: want an array")
			}
			if i >= n {
				return fmt.Errorf("data: more than the %d elements of shape %v", n, t.Shape)
			}
			if err := set(t, i, v); err != nil {
				return fmt.Errorf("data[%d]: %v", i, err)
			}
			i++
		default:
			return fmt.Errorf("data[%d]: %v is not a number", i, tok)
		}
		if depth == 0 {
			if dec.More() {
				return errors.New("data: more than one JSON value")
			}
			break
		}
	}
	if i != n {
		return fmt.Errorf("data: %d elements; shape %v takes %d", i, t.Shape, n)
	}
	return nil
}

// set stores v, a JSON number or boolean, at element i of t, refusing values its dtype cannot
// hold.
func set(t kernels.Tensor, i int, v any) error {
	if b, ok := v.(bool); ok {
		if t.DType != graph.Bool {
			return fmt.Errorf("%v: want a number for %s", b, v2Type(t.DType))
		}
		if b {
			t.Data[i] = 1
		} else {
			t.Data[i] = 0
		}
		return nil
	}
	num := v.(json.Number)
	switch t.DType {
	case graph.Float32, graph.Float64, graph.Float16, graph.BFloat16:
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil {
			return fmt.Errorf("%s is not a number %s holds", num, v2Type(t.DType))
		}
		switch t.DType {
		case graph.Float32:
			t.Float32s()[i] = float32(f)
		case graph.Float64:
			t.Float64s()[i] = f
		case graph.Float16:
			t.Uint16s()[i] = float16.Fromfloat32(float32(f)).Bits()
		case graph.BFloat16:
			t.Uint16s()[i] = uint16(math.Float32bits(float32(f)) >> 16)
		}
		return nil
	case graph.Bool:
		switch num {
		case "0":
			t.Data[i] = 0
		case "1":
			t.Data[i] = 1
		default:
			return fmt.Errorf("%s: want true, false, 0 or 1 for BOOL", num)
		}
		return nil
	}
	lo, hi, unsigned := intRange(t.DType)
	if unsigned {
		u, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil || u > uint64(hi) && t.DType != graph.Uint64 {
			return fmt.Errorf("%s is not an integer %s holds", num, v2Type(t.DType))
		}
		switch t.DType {
		case graph.Uint8:
			t.Data[i] = byte(u)
		case graph.Uint16:
			kernels.ViewAs[uint16](t.Data)[i] = uint16(u)
		case graph.Uint32:
			kernels.ViewAs[uint32](t.Data)[i] = uint32(u)
		case graph.Uint64:
			kernels.ViewAs[uint64](t.Data)[i] = u
		}
		return nil
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || n < lo || n > hi {
		return fmt.Errorf("%s is not an integer %s holds", num, v2Type(t.DType))
	}
	switch t.DType {
	case graph.Int8:
		t.Data[i] = byte(int8(n))
	case graph.Int16:
		kernels.ViewAs[int16](t.Data)[i] = int16(n)
	case graph.Int32:
		t.Int32s()[i] = int32(n)
	case graph.Int64:
		t.Int64s()[i] = n
	default:
		return fmt.Errorf("datatype %s is not supported", v2Type(t.DType))
	}
	return nil
}

func intRange(dt graph.DType) (lo, hi int64, unsigned bool) {
	switch dt {
	case graph.Uint8:
		return 0, math.MaxUint8, true
	case graph.Uint16:
		return 0, math.MaxUint16, true
	case graph.Uint32:
		return 0, math.MaxUint32, true
	case graph.Uint64:
		return 0, math.MaxInt64, true
	case graph.Int8:
		return math.MinInt8, math.MaxInt8, false
	case graph.Int16:
		return math.MinInt16, math.MaxInt16, false
	case graph.Int32:
		return math.MinInt32, math.MaxInt32, false
	}
	return math.MinInt64, math.MaxInt64, false
}

// encodeOutputs writes the response of the v2 protocol: the outputs wanted (all if none are
// named), flat data in row-major order; non-finite floats are null.
func encodeOutputs(model, id string, vs []*graph.Value, outs []kernels.Tensor, want map[string]bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"model_name":`)
	writeString(&b, model)
	if id != "" {
		b.WriteString(`,"id":`)
		writeString(&b, id)
	}
	b.WriteString(`,"outputs":[`)
	first := true
	for i, v := range vs {
		if len(want) > 0 && !want[v.Name] {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		t := outs[i]
		b.WriteString(`{"name":`)
		writeString(&b, v.Name)
		fmt.Fprintf(&b, `,"datatype":%q,"shape":[`, v2Type(t.DType))
		for j, d := range t.Shape {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(d, 10))
		}
		b.WriteString(`],"data":[`)
		writeData(&b, t)
		b.WriteString("]}")
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

func writeString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}

func writeData(b *bytes.Buffer, t kernels.Tensor) {
	n := t.Len()
	float := func(f float64, bits int) {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			b.WriteString("null")
			return
		}
		b.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	}
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		switch t.DType {
		case graph.Float32:
			float(float64(t.Float32s()[i]), 32)
		case graph.Float64:
			float(t.Float64s()[i], 64)
		case graph.Float16:
			float(float64(float16.Frombits(t.Uint16s()[i]).Float32()), 32)
		case graph.BFloat16:
			float(float64(math.Float32frombits(uint32(t.Uint16s()[i])<<16)), 32)
		case graph.Bool:
			b.WriteString(strconv.FormatBool(t.Data[i] != 0))
		case graph.Int8:
			b.WriteString(strconv.FormatInt(int64(int8(t.Data[i])), 10))
		case graph.Uint8:
			b.WriteString(strconv.FormatUint(uint64(t.Data[i]), 10))
		case graph.Int16:
			b.WriteString(strconv.FormatInt(int64(kernels.ViewAs[int16](t.Data)[i]), 10))
		case graph.Uint16:
			b.WriteString(strconv.FormatUint(uint64(t.Uint16s()[i]), 10))
		case graph.Int32:
			b.WriteString(strconv.FormatInt(int64(t.Int32s()[i]), 10))
		case graph.Uint32:
			b.WriteString(strconv.FormatUint(uint64(kernels.ViewAs[uint32](t.Data)[i]), 10))
		case graph.Int64:
			b.WriteString(strconv.FormatInt(t.Int64s()[i], 10))
		case graph.Uint64:
			b.WriteString(strconv.FormatUint(kernels.ViewAs[uint64](t.Data)[i], 10))
		default:
			b.WriteString("null")
		}
	}
}
