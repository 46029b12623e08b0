// Package testmodels embeds carve's ONNX test fixtures: tiny GPT-2, Qwen2, Llama and BERT
// models with random weights, fused and 4-bit variants, a 28-layer Qwen2-1.5B-shaped graph
// without its weights, and onnxruntime's outputs and value shapes for a few bindings; and a tiny
// Qwen2 with a KV cache in its two forms (qwen2_kv, qwen2_gqa) with onnxruntime's greedy
// generations.
//
// tools/fixtures/make_fixtures.py and make_kv_fixtures.py made them on the GPU machine; testdata/manifest.json says
// how each was made (versions, export path, op histogram). Tests in any module use them
// through this package, without file paths. Everything here is safe for concurrent use.
package testmodels

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"codeberg.org/sbinet/npyio"
)

//go:embed testdata
var files embed.FS

// Model describes one fixture model.
type Model struct {
	Name string `json:"name"`
	File string `json:"file"` // the .onnx file (gzip-compressed if it ends in .gz)
	// ExternalData is the side file holding the weights, if any.
	ExternalData string `json:"external_data"`
	// MissingExternalData is the side file the model refers to but that is not kept here
	// (its bytes were deleted): the model loads for shape and size work only.
	MissingExternalData string `json:"missing_external_data"`
	Kind                string `json:"kind"`   // gpt2, qwen2, llama, bert, or the model it was derived from
	Export              string `json:"export"` // how it was made
	Notes               string `json:"notes"`
	InputsRule          string `json:"inputs_rule"`
	Vocab               int64  `json:"vocab"`

	IRVersion    int64            `json:"ir_version"`
	Opsets       map[string]int64 `json:"opsets"`
	Ops          map[string]int   `json:"ops"` // op histogram: "OpType" or "domain.OpType" -> nodes
	Nodes        int              `json:"nodes"`
	Initializers int              `json:"initializers"`
	Inputs       []string         `json:"inputs"`
	Outputs      []string         `json:"outputs"`

	// Bindings are the (batch, seq) bindings onnxruntime was run at; none for graph-only
	// models.
	Bindings []Binding `json:"bindings"`
	Shapes   string    `json:"shapes"` // the file of onnxruntime's value shapes

	// Generation is onnxruntime's greedy generation with the model's KV cache; nil for models
	// without one.
	Generation *Generation `json:"generation"`

	// Zoo models (package zoo) say what they were made from: the architecture family, whether
	// it is a decoder or an encoder, the exporter (dynamo or torchscript), whether the export
	// takes an attention_mask input, and the family's config.json beside it.
	Family        string `json:"family"`
	Task          string `json:"task"`
	Exporter      string `json:"exporter"`
	AttentionMask bool   `json:"attention_mask"`
	Config        string `json:"config"`

	// fsys and dir hold the model's files; files and dir are set by Load.
	fsys fs.FS
	dir  string
}

// Binding is one run of onnxruntime: its dims, and the .npy files of its inputs and outputs.
type Binding struct {
	Dims    map[string]int64  `json:"dims"`
	Inputs  map[string]string `json:"inputs"`
	Outputs map[string]string `json:"outputs"`
	Error   string            `json:"error"` // set if onnxruntime failed at this binding
}

// ValueShape is what onnxruntime produced for one value at one binding.
type ValueShape struct {
	Shape []int64 `json:"shape"`
	DType int32   `json:"dtype"` // ONNX TensorProto.DataType
}

// Manifest is a fixture directory's manifest.json: the versions of the tools that made the
// models, the models, and what failed to be made.
type Manifest struct {
	Versions map[string]string `json:"versions"`
	Models   []Model           `json:"models"`
	Failures []Failure         `json:"failures"`
}

// Failure is a model the fixture script could not make, and why.
type Failure struct {
	Family string `json:"family"`
	Step   string `json:"step"`
	Error  string `json:"error"`
}

var load = sync.OnceValues(func() (*Manifest, error) { return Load(files, "testdata") })

// Load reads the manifest.json of a fixture directory dir of fsys (this package's testdata, or
// another package's embedded set, such as the zoo's) and returns its models sorted by name,
// each reading its files from there.
func Load(fsys fs.FS, dir string) (*Manifest, error) {
	b, err := fs.ReadFile(fsys, path.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	m := &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("testmodels: %s/manifest.json: %w", dir, err)
	}
	for i := range m.Models {
		md := &m.Models[i]
		md.fsys, md.dir = fsys, dir
		if md.Generation != nil {
			g := *md.Generation
			g.model = &Model{fsys: fsys, dir: dir}
			md.Generation = &g
		}
	}
	sort.Slice(m.Models, func(i, j int) bool { return m.Models[i].Name < m.Models[j].Name })
	return m, nil
}

// read returns one of the model's files.
func (m Model) read(file string) ([]byte, error) { return fs.ReadFile(m.fsys, path.Join(m.dir, file)) }

// Models returns every fixture model, sorted by name.
func Models() []Model {
	m, err := load()
	if err != nil {
		panic(err) // the embedded manifest is part of the build
	}
	return append([]Model(nil), m.Models...)
}

// Versions returns the versions of the tools that made the fixtures (torch, onnx, ...).
func Versions() map[string]string {
	m, err := load()
	if err != nil {
		panic(err)
	}
	return m.Versions
}

// Get returns the named model.
func Get(name string) (Model, error) {
	for _, m := range Models() {
		if m.Name == name {
			return m, nil
		}
	}
	return Model{}, fmt.Errorf("testmodels: no model %q", name)
}

// MustGet returns the named model and panics if there is none.
func MustGet(name string) Model {
	m, err := Get(name)
	if err != nil {
		panic(err)
	}
	return m
}

// Bytes returns the model's .onnx bytes, decompressed if the file is gzip-compressed.
func (m Model) Bytes() ([]byte, error) {
	b, err := m.read(m.File)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(m.File, ".gz") {
		return b, nil
	}
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("testmodels: %s: %w", m.File, err)
	}
	return io.ReadAll(r)
}

// OnnxName is the name of the model's .onnx file once written out.
func (m Model) OnnxName() string { return strings.TrimSuffix(m.File, ".gz") }

// WriteDir writes the model and its external data, if any, into dir and returns the path
// of the .onnx file.
func (m Model) WriteDir(dir string) (string, error) {
	b, err := m.Bytes()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, m.OnnxName())
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return "", err
	}
	if m.ExternalData != "" {
		d, err := m.read(m.ExternalData)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, m.ExternalData), d, 0o644); err != nil {
			return "", err
		}
	}
	return p, nil
}

// WriteTemp writes the model with its external data into a new temporary directory of tb
// and returns the .onnx path; it fails the test on error.
func (m Model) WriteTemp(tb testing.TB) string {
	tb.Helper()
	p, err := m.WriteDir(tb.TempDir())
	if err != nil {
		tb.Fatalf("testmodels: writing %s: %v", m.Name, err)
	}
	return p
}

// ValueShapes returns the shape and dtype onnxruntime produced for every value of the graph
// (node outputs) at binding i.
func (m Model) ValueShapes(i int) (map[string]ValueShape, error) {
	if m.Shapes == "" {
		return nil, fmt.Errorf("testmodels: %s has no recorded shapes", m.Name)
	}
	b, err := m.read(m.Shapes)
	if err != nil {
		return nil, err
	}
	var s struct {
		Bindings []struct {
			Values map[string]ValueShape `json:"values"`
			Error  string                `json:"error"`
		} `json:"bindings"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("testmodels: %s: %w", m.Shapes, err)
	}
	if i < 0 || i >= len(s.Bindings) {
		return nil, fmt.Errorf("testmodels: %s has no binding %d", m.Name, i)
	}
	if s.Bindings[i].Error != "" {
		return nil, fmt.Errorf("testmodels: onnxruntime failed on %s binding %d: %s", m.Name, i, s.Bindings[i].Error)
	}
	return s.Bindings[i].Values, nil
}

// Array is a decoded .npy file: its shape and, by dtype, its float32 or int64 data.
type Array struct {
	Shape   []int64
	Float32 []float32
	Int64   []int64
}

// ReadArray decodes one of this package's fixtures' .npy files (a Binding's Inputs or Outputs
// entry).
func ReadArray(file string) (Array, error) {
	b, err := files.ReadFile(path.Join("testdata", file))
	if err != nil {
		return Array{}, err
	}
	return decodeArray(file, b)
}

// Array decodes one of the model's .npy files (a Binding's Inputs or Outputs entry), wherever
// the model's files are.
func (m Model) Array(file string) (Array, error) {
	b, err := m.read(file)
	if err != nil {
		return Array{}, err
	}
	return decodeArray(file, b)
}

func decodeArray(file string, b []byte) (Array, error) {
	r, err := npyio.NewReader(bytes.NewReader(b))
	if err != nil {
		return Array{}, fmt.Errorf("testmodels: %s: %w", file, err)
	}
	var a Array
	for _, d := range r.Header.Descr.Shape {
		a.Shape = append(a.Shape, int64(d))
	}
	// npyio keeps the quotes of the headers numpy 2 writes; the dtype is the same.
	switch strings.Trim(r.Header.Descr.Type, "'\"") {
	case "<f4":
		err = r.Read(&a.Float32)
	case "<i8":
		err = r.Read(&a.Int64)
	default:
		err = fmt.Errorf("unsupported dtype %q", r.Header.Descr.Type)
	}
	if err != nil {
		return Array{}, fmt.Errorf("testmodels: %s: %w", file, err)
	}
	return a, nil
}
