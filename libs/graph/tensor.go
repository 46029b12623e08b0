package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Tensor is a weight (initializer) of a model. Its bytes are not read at load: embedded
// bytes stay in the memory-mapped model file and external data files are memory-mapped on
// first use, once per file, read-only. A Tensor is safe for concurrent use.
type Tensor struct {
	Name  string
	DType DType
	Shape []int64
	Size  int64 // bytes, validated against DType and Shape at load

	raw       []byte       // embedded data, aliasing the model's buffer; nil for external data
	ext       *externalRef // external data; nil for embedded data
	store     *weightStore
	shapeOnly bool // NewShapeTensor: no bytes at all
}

// ErrNoData is what Bytes wraps for a weight made by NewShapeTensor, which has none.
var ErrNoData = errors.New("the weight is declared by its shape only and has no data")

// NewShapeTensor returns a weight declared by its dtype and shape only: Size is the bytes the
// weight would take, but it has none, and Bytes returns an error wrapping ErrNoData. A model
// built with such weights validates, infers and plans as one with the weights does (no
// kernel's choice depends on a floating-point weight's values), so a capacity planner can
// build a model from its configuration without allocating gigabytes of weights; it cannot
// run. Integer weights should carry their data (NewTensor): shape arithmetic reads them.
func NewShapeTensor(name string, dt DType, shape []int64) (*Tensor, error) {
	if err := checkDType(dt); err != nil {
		return nil, &ModelError{Tensor: name, Problem: err.Error()}
	}
	size, err := ByteSize(dt, shape)
	if err != nil {
		return nil, &ModelError{Tensor: name, Problem: "bad shape", Err: err}
	}
	return &Tensor{Name: name, DType: dt, Shape: slices.Clone(shape), Size: size, shapeOnly: true}, nil
}

// ShapeOnly reports whether the weight was declared by its shape only (NewShapeTensor).
func (t *Tensor) ShapeOnly() bool { return t.shapeOnly }

// externalRef locates a tensor's bytes in an external data file.
type externalRef struct {
	file   *extFile
	offset int64
	length int64
}

// ExternalData describes where an external tensor's bytes are.
type ExternalData struct {
	Location string // relative to the model's directory
	Offset   int64
	Length   int64
}

// External reports where the tensor's bytes are stored when they are in an external file.
func (t *Tensor) External() (ExternalData, bool) {
	if t.ext == nil {
		return ExternalData{}, false
	}
	return ExternalData{Location: t.ext.file.location, Offset: t.ext.offset, Length: t.ext.length}, true
}

// Bytes returns the tensor's little-endian bytes, Size of them. They alias read-only memory
// (the model file or an external data file, memory-mapped) and must not be modified, nor
// used after Model.Close. For external data it maps the file on first use; a missing or
// unreadable file is an *ExternalDataError.
func (t *Tensor) Bytes() ([]byte, error) {
	if t.shapeOnly {
		return nil, fmt.Errorf("graph: tensor %q: %w", t.Name, ErrNoData)
	}
	if t.ext == nil {
		return t.raw, nil
	}
	data, err := t.ext.file.mapped()
	if err != nil {
		return nil, &ExternalDataError{Tensor: t.Name, Location: t.ext.file.location, Err: err}
	}
	end := t.ext.offset + t.ext.length // validated at load: within the file
	if end > int64(len(data)) {
		return nil, &ExternalDataError{Tensor: t.Name, Location: t.ext.file.location,
			Err: fmt.Errorf("bytes [%d, %d) lie beyond the file's %d bytes (the file changed after load)", t.ext.offset, end, len(data))}
	}
	return data[t.ext.offset:end:end], nil
}

// Host returns the tensor as a HostTensor, its Data aliasing Bytes.
func (t *Tensor) Host() (*HostTensor, error) {
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	return &HostTensor{DType: t.DType, Shape: t.Shape, Data: b}, nil
}

// ExternalDataError reports a weight whose external data cannot be read.
type ExternalDataError struct {
	Tensor   string
	Location string
	Err      error
}

func (e *ExternalDataError) Error() string {
	return fmt.Sprintf("graph: external data of tensor %q in %q: %v", e.Tensor, e.Location, e.Err)
}

func (e *ExternalDataError) Unwrap() error { return e.Err }

// readInt reads one little-endian integer or bool element of type dt from b.
func readInt(dt DType, b []byte) (int64, bool) {
	switch dt {
	case Int64:
		return int64(binary.LittleEndian.Uint64(b)), true
	case Uint64:
		return int64(binary.LittleEndian.Uint64(b)), true
	case Int32:
		return int64(int32(binary.LittleEndian.Uint32(b))), true
	case Uint32:
		return int64(binary.LittleEndian.Uint32(b)), true
	case Int16:
		return int64(int16(binary.LittleEndian.Uint16(b))), true
	case Uint16:
		return int64(binary.LittleEndian.Uint16(b)), true
	case Int8:
		return int64(int8(b[0])), true
	case Uint8, Bool:
		return int64(b[0]), true
	}
	return 0, false
}

func int64Tensor(shape []int64, vals ...int64) *HostTensor {
	b := make([]byte, 0, 8*len(vals))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return &HostTensor{DType: Int64, Shape: shape, Data: b}
}

func float32Tensor(shape []int64, vals ...float32) *HostTensor {
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return &HostTensor{DType: Float32, Shape: shape, Data: b}
}

// encodeInts encodes integer values as a HostTensor of an integer or bool type.
func encodeInts(dt DType, shape []int64, vals []int64) *HostTensor {
	sz := dt.Size()
	b := make([]byte, 0, int64(len(vals))*sz)
	for _, v := range vals {
		switch sz {
		case 8:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		default:
			b = append(b, byte(v))
		}
	}
	return &HostTensor{DType: dt, Shape: shape, Data: b}
}
