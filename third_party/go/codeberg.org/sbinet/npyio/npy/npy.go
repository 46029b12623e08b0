// Copyright 2016 The npyio Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package npy provides read/write access to files following the NumPy data file format:
//
//	https://numpy.org/neps/nep-0001-npy-format.html
//
// # Supported types
//
// npy supports r/w of scalars, arrays, slices and gonum/mat.Dense.
// Supported scalars are:
//   - bool,
//   - (u)int{8,16,32,64},
//   - float{32,64},
//   - complex{64,128}
//
// # Reading
//
// Reading from a NumPy data file can be performed like so:
//
//	f, err := os.Open("data.npy")
//	var m mat.Dense
//	err = npy.Read(f, &m)
//	fmt.Printf("data = %v\n", mat.Formatted(&m, mat.Prefix("       "))))
//
// npy can also read data directly into slices, arrays or scalars, provided
// the on-disk data type and the provided one match.
//
// Example:
//
//	var data []float64
//	err = npy.Read(f, &data)
//
//	var data uint64
//	err = npy.Read(f, &data)
//
// # Writing
//
// Writing into a NumPy data file can be done like so:
//
//	f, err := os.Create("data.npy")
//	var m mat.Dense = ...
//	err = npy.Write(f, m)
//
// Scalars, arrays and slices are also supported:
//
//	var data []float64 = ...
//	err = npy.Write(f, data)
//
//	var data int64 = 42
//	err = npy.Write(f, data)
//
//	var data [42]complex128 = ...
//	err = npy.Write(f, data)
package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"

	"codeberg.org/sbinet/npyio/npy/float16"
)

var (
	errNilPtr = errors.New("npy: nil pointer")
	errNotPtr = errors.New("npy: expected a pointer to a value")
	errDims   = errors.New("npy: invalid dimensions")
	errNoConv = errors.New("npy: no legal type conversion")

	// ErrInvalidNumPyFormat is the error returned by NewReader when
	// the underlying io.Reader is not a valid or recognized NumPy data
	// file format.
	ErrInvalidNumPyFormat = errors.New("npy: not a valid NumPy file format")

	// ErrTypeMismatch is the error returned by Reader when the on-disk
	// data type and the user provided one do NOT match.
	ErrTypeMismatch = errors.New("npy: types don't match")

	// ErrInvalidType is the error returned by Reader and Writer when
	// confronted with a type that is not supported or can not be
	// reliably (de)serialized.
	ErrInvalidType = errors.New("npy: invalid or unsupported type")

	// Magic header present at the start of a NumPy data file format.
	// See https://numpy.org/neps/nep-0001-npy-format.html
	Magic = [6]byte{'\x93', 'N', 'U', 'M', 'P', 'Y'}
)

// Header describes the data content of a NumPy data file.
type Header struct {
	Major byte // data file major version
	Minor byte // data file minor version
	Descr struct {
		Type    string // data type of array elements ('<i8', '<f4', ...)
		Fortran bool   // whether the array data is stored in Fortran-order (col-major)
		Shape   []int  // array shape (e.g. [2,3] a 2-rows, 3-cols array
	}
}

// newHeader creates a new Header with the major/minor version numbers that
// npy currently supports.
func newHeader() Header {
	return Header{
		Major: 2,
		Minor: 0,
	}
}

func (h Header) String() string {
	return fmt.Sprintf("Header{Major:%v, Minor:%v, Descr:{Type:%v, Fortran:%v, Shape:%v}}",
		int(h.Major),
		int(h.Minor),
		h.Descr.Type,
		h.Descr.Fortran,
		h.Descr.Shape,
	)
}

// Descr is the interface implemented by types that can describe their
// numpy-binary format layout.
type Descr interface {
	DescrNPy() string
}

// Marshaler is the interface implemented by types that can marshal themselves
// into valid numpy binary format.
type Marshaler interface {
	MarshalNPy(bo binary.ByteOrder) ([]byte, error)
}

// Unmarshaler is the interface implemented by types that can unmarshal
// themselves from a valid numpy binary format.
type Unmarshaler interface {
	UnmarshalNPy(bo binary.ByteOrder, buf []byte) error
}

var (
	boolType       = reflect.TypeFor[bool]()
	uint8Type      = reflect.TypeFor[uint8]()
	uint16Type     = reflect.TypeFor[uint16]()
	uint32Type     = reflect.TypeFor[uint32]()
	uint64Type     = reflect.TypeFor[uint64]()
	int8Type       = reflect.TypeFor[int8]()
	int16Type      = reflect.TypeFor[int16]()
	int32Type      = reflect.TypeFor[int32]()
	int64Type      = reflect.TypeFor[int64]()
	float16Type    = reflect.TypeFor[float16.Num]()
	float32Type    = reflect.TypeFor[float32]()
	float64Type    = reflect.TypeFor[float64]()
	complex64Type  = reflect.TypeFor[complex64]()
	complex128Type = reflect.TypeFor[complex128]()
	stringType     = reflect.TypeFor[string]()
	anyType        = reflect.TypeFor[any]()

	trueUint8  = []byte{1}
	falseUint8 = []byte{0}

	go2kind = map[reflect.Type]string{
		boolType:       "bool",
		uint8Type:      "uint8",
		uint16Type:     "uint16",
		uint32Type:     "uint32",
		uint64Type:     "uint64",
		int8Type:       "int8",
		int16Type:      "int16",
		int32Type:      "int32",
		int64Type:      "int64",
		float16Type:    "float16",
		float32Type:    "float32",
		float64Type:    "float64",
		complex64Type:  "complex64",
		complex128Type: "complex128",
	}
)

var nativeEndian struct {
	binary.ByteOrder
}

func init() {
	v := uint16(1)
	switch byte(v >> 8) {
	case 0:
		nativeEndian.ByteOrder = binary.LittleEndian
	case 1:
		nativeEndian.ByteOrder = binary.BigEndian
	}
}

func diskEndian(v binary.ByteOrder) binary.ByteOrder {
	switch v {
	case binary.LittleEndian, binary.BigEndian:
		return v
	case nativeEndian, nil:
		return diskEndian(nativeEndian.ByteOrder)
	default:
		panic("impossible")
	}
}

func orderToString(v binary.ByteOrder) string {
	switch v {
	case binary.LittleEndian:
		return "<"
	case binary.BigEndian:
		return ">"
	case nativeEndian:
		return "="
	case nil:
		return "|"
	default:
		return "?"
	}
}
