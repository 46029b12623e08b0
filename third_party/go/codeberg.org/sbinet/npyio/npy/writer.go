// Copyright 2016 The npyio Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package npy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Write writes 'v' into 'w' in the NumPy data format.
//
//   - if v is a scalar, it must be of a supported type (bools, (u)ints, floats and complexes)
//   - if v is a slice or array, it must be a slice/array of a supported type.
//     the shape (len,) will be written out.
//   - if v is a mat.Dense, the correct shape will be transmitted. (ie: (nrows, ncols))
//
// The data-array will always be written out in C-order (row-major).
func Write(w io.Writer, v any) error {
	arr, err := arrayOf(v)
	if err != nil {
		return err
	}
	err = writeHeader(w, arr)
	if err != nil {
		return err
	}

	return writeData(w, arr)
}

func writeHeader(w io.Writer, arr Array) error {
	hdr := newHeader()
	hdr.Descr.Type = toHeaderDescr(arr.descr)
	hdr.Descr.Shape = arr.shape

	err := binary.Write(w, arr.descr.bo(), Magic[:])
	if err != nil {
		return err
	}
	err = binary.Write(w, arr.descr.bo(), hdr.Major)
	if err != nil {
		return err
	}
	err = binary.Write(w, arr.descr.bo(), hdr.Minor)
	if err != nil {
		return err
	}

	buf := new(bytes.Buffer)
	fmt.Fprintf(buf, "{'descr': %s, 'fortran_order': False, 'shape': %s, }",
		hdr.Descr.Type,
		shapeString(hdr.Descr.Shape),
	)
	var hdrSize int
	switch hdr.Major {
	case 1:
		hdrSize = 4 + len(Magic)
	case 2:
		hdrSize = 6 + len(Magic)
	default:
		return fmt.Errorf("npy: invalid major version number (%d)", hdr.Major)
	}

	padding := (hdrSize + buf.Len() + 1) % 16
	_, err = buf.Write(bytes.Repeat([]byte{'\x20'}, padding))
	if err != nil {
		return err
	}
	_, err = buf.Write([]byte{'\n'})
	if err != nil {
		return err
	}

	buflen := int64(buf.Len())
	switch hdr.Major {
	case 1:
		err = binary.Write(w, arr.descr.bo(), uint16(buflen))
	case 2:
		err = binary.Write(w, arr.descr.bo(), uint32(buflen))
	default:
		return fmt.Errorf("npy: invalid major version number (%d)", hdr.Major)
	}

	if err != nil {
		return err
	}

	n, err := io.Copy(w, buf)
	if err != nil {
		return err
	}
	if n < buflen {
		return io.ErrShortWrite
	}

	return nil
}

func writeData(w io.Writer, arr Array) error {
	var (
		dt = arr.descr
		bo = dt.bo()
	)

	if m, ok := arr.data.(*mat.Dense); ok {
		nrows, ncols := m.Dims()
		var buf [8]byte
		for i := range nrows {
			for j := range ncols {
				bo.PutUint64(buf[:], math.Float64bits(m.At(i, j)))
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
		}
		return nil
	}

	if arr.descr.subarr != nil {
		sub := arr.descr.subarr
		return sub.dtype.marshal(w, arr.data, sub.shape)
	}

	return arr.descr.marshal(w, arr.data, arr.shape)
}

func shapeFrom(rv reflect.Value) ([]int, error) {
	if m, ok := rv.Interface().(mat.Dense); ok {
		nrows, ncols := m.Dims()
		return []int{nrows, ncols}, nil
	}

	rt := rv.Type()
	switch rt.Kind() {
	case reflect.Array, reflect.Slice:
		if rv.Len() == 0 {
			return []int{0}, nil
		}
		eshape, err := shapeFrom(rv.Index(0))
		if err != nil {
			return nil, err
		}
		return append([]int{rv.Len()}, eshape...), nil

	case reflect.String:
		return nil, nil

	case reflect.Map, reflect.Chan, reflect.Interface, reflect.Struct:
		return nil, fmt.Errorf("npy: type %v not supported", rt)
	}

	// scalar.
	return nil, nil
}

func shapeString(shape []int) string {
	switch len(shape) {
	case 0:
		return "()"
	case 1:
		return fmt.Sprintf("(%d,)", shape[0])
	default:
		var str []string
		for _, v := range shape {
			str = append(str, strconv.Itoa(v))
		}
		return fmt.Sprintf("(%s)", strings.Join(str, ", "))
	}

}
