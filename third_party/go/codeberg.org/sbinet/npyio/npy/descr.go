// Copyright 2023 The npyio Authors. All rights reserved.
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
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"codeberg.org/sbinet/npyio/internal/dtp"
	"codeberg.org/sbinet/npyio/internal/dtp/ast"
	"codeberg.org/sbinet/npyio/internal/dtp/token"
	"codeberg.org/sbinet/npyio/npy/float16"
	py "github.com/nlpodyssey/gopickle/types"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode/utf32"
)

// Kind is the kind of numpy array ('f', 'i', 'u', ...).
type Kind byte

func (k Kind) String() string {
	return string(k)
}

const (
	npyItemRefCount  = 0x01 // The item must be reference counted when it is inserted or extracted
	npyItemHasObject = 0x01 // Same as needing refcount
	npyListPickle    = 0x02 // Convert to list for pickling
	npyItemIsPointer = 0x04 // The item is a POINTER
	npyNeedsInit     = 0x08 // memory needs to be initialized for this data-type
	npyNeedsPyAPI    = 0x10 // operations need Python C-API so don't give-up thread
	npyUseGetItem    = 0x20 // Use f.getitem when extracting elements of this data-type
	npyUseSetItem    = 0x40 // Use f.setitem when setting creating 0-d array from this data-type
	npyAlignedStruct = 0x80 // A sticky flag specifically for structured arrays

	// These are inherited for global data-type if any data-types in the
	// field have them

	npyFromFields       = npyItemRefCount | npyListPickle | npyNeedsInit | npyNeedsPyAPI
	npyObjectDtypeFlags = npyItemRefCount | npyListPickle | npyItemIsPointer | npyNeedsInit | npyNeedsPyAPI | npyUseGetItem
)

/*
 * offset:    A starting offset.
 * alignment: A power-of-two alignment.
 *
 * This macro returns the smallest value >= 'offset'
 * that is divisible by 'alignment'. Because 'alignment'
 * is a power of two and integers are twos-complement,
 * it is possible to use some simple bit-fiddling to do this.
 */
func npyNextAlignedOffset(offset, alignment uint32) uint32 {
	//#define NPY_NEXT_ALIGNED_OFFSET(offset, alignment) \
	//   (((offset) + (alignment) - 1) & (-(alignment)))
	return (offset + alignment - 1) & (-alignment)
}

func npyFieldNameOf(n string) string {
	return "NPY_" + n
}

func go2npyIndexOf(typ reflect.Type, name string) int {
	for i := 0; i < typ.NumField(); i++ {
		ft := typ.Field(i)
		tag, _ := parseMetaDescr(ft.Tag.Get("npy"))
		if tag == name {
			return i
		}
		if ft.Name == name {
			return i
		}
	}
	return -1
}

func parseMetaDescr(meta string) (name, descr string) {
	toks := strings.Split(meta, ",")

	switch len(toks) {
	case 0:
		return
	case 1:
		name = strings.TrimSpace(toks[0])
		return name, ""
	default:
		name = strings.TrimSpace(toks[0])
		idx := strings.Index(meta, "descr=")
		switch idx {
		case -1:
			return name, ""
		default:
			descr = meta[idx+len("descr="):]
			return name, descr
		}
	}
}

// ArrayDescr describes a numpy data type.
type ArrayDescr struct {
	kind  Kind
	order binary.ByteOrder
	flags int // flags describing data type
	esize int // element size in bytes
	align int // alignment needed for this type

	subarr *subarrayDescr // non-nil if this type is an array (C-continguous) of some other type.
	names  []string       // fields' names (if any)
	fields structFields   // fields (if any)
	meta   map[string]any

	rt reflect.Type // non-nil if this type was synthesized from a Go type.
}

func newDescrFrom(v any, align bool) (*ArrayDescr, error) {
	switch v := v.(type) {
	case nil:
		return &ArrayDescr{kind: 'f', order: nativeEndian, esize: 8, align: 8}, nil
	case *ArrayDescr:
		return v, nil
	case *ast.Literal:
		str, err := dtp.String(v)
		if err != nil {
			return nil, err
		}
		return newDescrFromStr(str, align)
	case *ast.List:
		return newDescrFromList(v, align)
	case *ast.Tuple:
		return newDescrFromTuple(v, align)
	case string:
		return newDescrFromStr(v, align)
	default:
		return nil, fmt.Errorf("invalid type %T for dtype ctor", v)
	}
}

func newDescrFromStr(typ string, align bool) (*ArrayDescr, error) {
	if len(typ) == 0 {
		return nil, fmt.Errorf("data type %q not understood", typ)
	}

	dt := new(ArrayDescr)

	descr := typ
	switch {
	case strings.HasPrefix(typ, "<"):
		descr = descr[1:]
		dt.order = binary.LittleEndian
	case strings.HasPrefix(typ, "="):
		descr = descr[1:]
		dt.order = nativeEndian
	case strings.HasPrefix(typ, "|"):
		descr = descr[1:]
		dt.order = nil
	case strings.HasPrefix(typ, ">"):
		descr = descr[1:]
		dt.order = binary.BigEndian
	}

	if len(descr) == 0 {
		return nil, fmt.Errorf("data type %v not understood", typ)
	}

	if isDatetimeStr(descr) {
		// FIXME(sbinet)
		return nil, fmt.Errorf("datetime string not implemented")
	}

	switch descr {
	case "bool":
		descr = "b1"
	case "uint8":
		descr = "u1"
	case "uint16":
		descr = "u2"
	case "uint32":
		descr = "u4"
	case "uint64", "uint":
		descr = "u8"
	case "int8":
		descr = "i1"
	case "int16":
		descr = "i2"
	case "int32":
		descr = "i4"
	case "int64", "int":
		descr = "i8"
	case "float16":
		descr = "f2"
	case "float32":
		descr = "f4"
	case "float64":
		descr = "f8"
	case "complex64":
		descr = "c8"
	case "complex128":
		descr = "c16"
	case "object":
		descr = "O"
	case "void":
		descr = "V"
	case "bytes":
		descr = "S"
	case "str":
		descr = "U"
	}

	err := dt.init(descr)
	if err != nil {
		return nil, err
	}

	return dt, nil
}

func newDescrFromList(lst *ast.List, align bool) (descr *ArrayDescr, err error) {
	descr = &ArrayDescr{
		kind:   'V',
		align:  1,
		fields: make(structFields, len(lst.X)),
	}
	var (
		dtflags         = npyNeedsPyAPI // types with fields need the Python C API for field access
		maxalign        = 1
		totalsz  uint32 = 0
	)

	for i := range lst.X {
		item, ok := lst.X[i].(*ast.Tuple)
		if !ok {
			return nil, fmt.Errorf("field elements must be 2- or 3-tuples, got=%T", lst.X[i])
		}
		if len(item.X) < 2 {
			return nil, fmt.Errorf("field elements must be 2- or 3-tuples, len=%d", len(item.X))
		}

		var (
			name  string
			title string

			// maybePadding remembers when a field is probably a padding field.
			// This is to detect the round-trip impedance mismatch of an array with
			// dtype:
			//   numpy.dtype([('f1', '<i4'), ('f2', 'S1'), ('f3', '<i4')], align=True)
			//
			// which will have the following dt.descr:
			//   [('f1', '<i4'), ('f2', '|S1'), ('', '|V3'), ('f3', '<i4')]
			// maybePadding is to correctly detect the third element ('', '|V3') as padding,
			// and not collect it into the .fields and .names struct fields of ArrayDescr.
			maybePadding bool // note when a field is actually a padding field.
		)
		switch x0 := item.X[0].(type) {
		case *ast.Literal:
			v, err := dtp.String(x0)
			if err != nil {
				return nil, fmt.Errorf("could not extract field tuple name: %w", err)
			}
			name = v
			if name == "" {
				maybePadding = true
			}

		case *ast.Tuple:
			if len(x0.X) != 2 {
				return nil, fmt.Errorf("first element of field tuple must have 2 elements, got=%d", len(x0.X))
			}

			x00, ok := x0.X[0].(*ast.Literal)
			if !ok {
				return nil, fmt.Errorf("invalid title type for field tuple: %T", x0.X[0])
			}

			title, err = dtp.String(x00)
			if err != nil {
				return nil, fmt.Errorf("could not extract title from field tuple: %w", err)
			}

			x01, ok := x0.X[1].(*ast.Literal)
			if !ok {
				return nil, fmt.Errorf("invalid name type for field tuple: %T", x0.X[1])
			}

			name, err = dtp.String(x01)
			if err != nil {
				return nil, fmt.Errorf("could not extract name from field tuple: %w", err)
			}

		default:
			return nil, fmt.Errorf("first element of field tuple is neither a tuple nor a string: %T", x0)
		}

		if name == "" {
			switch title {
			case "":
				name = "f" + strconv.FormatInt(int64(i), 10)
			default:
				name = title
			}
		}

		var sub *ArrayDescr

		switch len(item.X) {
		case 2:
			sub, err = newDescrFrom(item.X[1], align)
			if err != nil {
				return nil, err
			}
		case 3:
			sli := *item
			sli.X = make([]ast.Node, 2)
			copy(sli.X, item.X[1:3])

			sub, err = newDescrFrom(&sli, align)
			if err != nil {
				return nil, err
			}

		default:
			return nil, fmt.Errorf("field elements must be 2- or 3-tuples, len=%d", len(item.X))
		}

		if maybePadding && sub.kind == 'V' && len(sub.fields) == 0 && sub.subarr == nil {
			if align {
				if sub.align > 1 {
					totalsz = npyNextAlignedOffset(totalsz, uint32(sub.align))
				}
				maxalign = max(maxalign, sub.align)
			}
			totalsz += uint32(sub.esize)
			continue
		}

		if _, dup := descr.fields[name]; dup {
			return nil, fmt.Errorf("field %q occurs more than once", name)
		}
		if _, dup := descr.fields[title]; dup && title != "" {
			return nil, fmt.Errorf("field %q occurs more than once", name)
		}

		dtflags |= sub.flags & npyFromFields
		if align {
			if sub.align > 1 {
				totalsz = npyNextAlignedOffset(totalsz, uint32(sub.align))
			}
			maxalign = max(maxalign, sub.align)
		}
		descr.names = append(descr.names, name)
		descr.fields[name] = structField{
			dtype:  *sub,
			offset: totalsz,
			title:  title,
		}
		if title != "" {
			descr.fields[title] = structField{
				dtype:  *sub,
				offset: totalsz,
				title:  title,
			}
		}
		totalsz += uint32(sub.esize)
	}

	if maxalign > 1 {
		totalsz = npyNextAlignedOffset(totalsz, uint32(maxalign))
	}
	descr.esize = int(totalsz)
	descr.flags = dtflags

	// Structured arrays get a sticky aligned bit
	if align {
		descr.flags |= npyAlignedStruct
		descr.align = maxalign
	}

	return descr, nil
}

func newDescrFromTuple(tpl *ast.Tuple, align bool) (*ArrayDescr, error) {
	if len(tpl.X) != 2 {
		return nil, fmt.Errorf("invalid tuple size: got=%d, want=2", len(tpl.X))
	}

	typ, err := newDescrFrom(tpl.X[0], align)
	if err != nil {
		return nil, err
	}

	var (
		sub subarrayDescr
	)

	switch x1 := tpl.X[1].(type) {
	case *ast.Literal:
		switch x1.Kind {
		case token.String:
			// FIXME(sbinet): we don't support dtype inheritance.
			return nil, fmt.Errorf("dtype inheritance is not supported (yet?)")
		case token.Number:
			v, err := dtp.Int(x1)
			if err != nil {
				return nil, fmt.Errorf("invalid shape: %w", err)
			}

			// unsized data type.
			// interpret `v` as a typesize.
			if typ.esize == 0 && len(typ.names) == 0 {
				if typ.kind == 'U' {
					if v > math.MaxInt/4 {
						v = -1
					} else {
						v *= 4
					}
				}
				typ.esize = v
				return typ, nil
			}
			sub.shape = append(sub.shape, v)

		default:
			return nil, fmt.Errorf("unknown token kind %v", x1.Kind)
		}

	case *ast.Tuple:
		// expect a shape.
		for i := range x1.X {
			v, ok := x1.X[i].(*ast.Literal)
			if !ok {
				return nil, fmt.Errorf("invalid shape element %d: %v", i, x1.X[i])
			}
			vv, err := dtp.Int(v)
			if !ok {
				return nil, fmt.Errorf("invalid shape element %d: %w", i, err)
			}
			sub.shape = append(sub.shape, vv)
		}

	default:
		return nil, fmt.Errorf("invalid element type %T", x1)
	}

	descr, err := newDescrFromStr(`V`, align)
	if err != nil {
		return nil, err
	}

	// FIXME(sbinet): check overflow for shape.
	items := 1
	for _, v := range sub.shape {
		items *= v
	}
	descr.esize = typ.esize * items
	descr.subarr = &sub
	descr.subarr.dtype = *typ
	descr.flags = typ.flags
	descr.align = typ.align

	return descr, nil
}

func isDatetimeStr(typ string) bool {
	if len(typ) < 2 {
		return false
	}
	switch {
	case strings.HasPrefix(typ, "M8"), strings.HasPrefix(typ, "datetime64"):
		return true
	case strings.HasPrefix(typ, "m8"), strings.HasPrefix(typ, "timedelta64"):
		return true
	}
	return false
}

func (dt *ArrayDescr) bo() binary.ByteOrder {
	if dt.order == nil {
		return nativeEndian
	}
	return dt.order
}

func (dt *ArrayDescr) init(descr string) error {
	switch len(descr) {
	case 0:
		return fmt.Errorf("invalid typecode %q", descr)

	case 1: // a typecode like "d", "f", ...
		dt.kind = Kind(descr[0])

	default:
		dt.kind = Kind(descr[0])
		v, err := strconv.ParseUint(descr[1:], 10, 64)
		if err != nil {
			return fmt.Errorf("could not parse typecode %q: %w", descr, err)
		}
		dt.esize = int(v)
	}

	switch dt.kind {
	case 'b', 'i', 'u', 'f', 'm', 'M':
		dt.align = dt.esize
		if dt.esize == 1 {
			dt.order = nil
		}
	case 'c':
		dt.align = dt.esize / 2
	case 'O':
		dt.esize = 8
		dt.align = 8
		dt.order = nil
		dt.flags = npyObjectDtypeFlags
	case 'S':
		dt.align = 1
		dt.order = nil
	case 'U':
		dt.esize *= utf8.UTFMax
		dt.align = utf8.UTFMax
		dt.flags = npyNeedsInit
	case 'V':
		dt.align = 1
		dt.order = nil
	}

	return nil
}

type structFields map[string]structField
type structField struct {
	dtype  ArrayDescr
	offset uint32
	title  string
}

type subarrayDescr struct {
	dtype ArrayDescr
	shape []int
}

var (
	_ py.Callable        = (*ArrayDescr)(nil)
	_ py.PyStateSettable = (*ArrayDescr)(nil)
)

func (*ArrayDescr) Call(args ...any) (any, error) {
	switch sz := len(args); {
	case sz < 1, sz > 3:
		return nil, fmt.Errorf("invalid tuple length (got=%d)", sz)
	}

	descr, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("invalid descr type %T", args[0])
	}

	const align = false
	return newDescrFromStr(descr, align)
}

func (dt *ArrayDescr) PySetState(arg any) error {
	tuple, ok := arg.(*py.Tuple)
	if !ok {
		return fmt.Errorf("invalid argument type %T", arg)
	}

	if tuple == nil {
		// FIXME(sbinet): is a nil tuple a valid value ?
		return fmt.Errorf("invalid __setstate__ argument %+v", tuple)
	}

	var (
		vers   int = 4
		order  string
		subarr py.Tuple
		names  py.Tuple
		fields py.Dict
		meta   py.Dict
		esize  = -1
		align  = -1
		flags  = 0
	)

	switch tuple.Len() {
	case 9:
		err := parseTuple(tuple, &vers, &order, &subarr, &names, &fields, &esize, &align, &flags, &meta)
		if err != nil {
			return fmt.Errorf("could not parse tuple: %w", err)
		}
	case 8:
		err := parseTuple(tuple, &vers, &order, &subarr, &names, &fields, &esize, &align, &flags)
		if err != nil {
			return fmt.Errorf("could not parse tuple: %w", err)
		}
	case 7:
		err := parseTuple(tuple, &vers, &order, &subarr, &names, &fields, &esize, &align)
		if err != nil {
			return fmt.Errorf("could not parse tuple: %w", err)
		}
	case 6:
		err := parseTuple(tuple, &vers, &order, &subarr, &fields, &esize, &align)
		if err != nil {
			return fmt.Errorf("could not parse tuple: %w", err)
		}
	case 5:
		vers = 0
		err := parseTuple(tuple, &order, &subarr, &fields, &esize, &align)
		if err != nil {
			return fmt.Errorf("could not parse tuple: %w", err)
		}
	default:
		switch {
		case tuple.Len() > 5:
			v, ok := tuple.Get(0).(int)
			if !ok {
				return fmt.Errorf("invalid __setstate__ arg[0]: got=%T, want=int", tuple.Get(0))
			}
			vers = v
		default:
			vers = -1
		}
	}

	if vers < 0 || vers > 4 {
		return fmt.Errorf("invalid version=%d for numpy.dtype pickle", vers)
	}

	if vers == 0 || vers == 1 {
		return fmt.Errorf("unhandled version=%d for numpy.dtype pickle", vers)
	}

	switch order {
	case "<":
		dt.order = binary.LittleEndian
	case ">":
		dt.order = binary.BigEndian
	case "=":
		dt.order = nativeEndian
	case "|":
		dt.order = nil
	}

	if subarr.Len() > 0 {
		var (
			subdt ArrayDescr
			tuple py.Tuple
			shape []int
		)
		err := parseTuple(&subarr, &subdt, &tuple)
		if err != nil {
			return fmt.Errorf("could not parse subarray tuple: %w", err)
		}
		for i := range tuple {
			v, ok := tuple[i].(int)
			if !ok {
				return fmt.Errorf("could not parse subarray shape[%d]: type=%T", i, tuple[i])
			}
			shape = append(shape, v)
		}
		dt.subarr = &subarrayDescr{
			dtype: subdt,
			shape: shape,
		}
	}

	if names.Len() > 0 {
		for _, v := range names {
			name, ok := v.(string)
			if !ok {
				return fmt.Errorf("invalid field name type %T", v)
			}
			dt.names = append(dt.names, name)
		}
	}

	if fields.Len() > 0 {
		dt.fields = make(structFields, fields.Len())
		for i := 0; i < fields.Len(); i++ {
			v, ok := fields.Get(dt.names[i])
			if !ok {
				return fmt.Errorf("invalid field offset name %q", dt.names[i])
			}
			tup, ok := v.(*py.Tuple)
			if !ok {
				return fmt.Errorf("invalid field offset type %T", v)
			}
			if got, want := tup.Len(), 2; got != want {
				return fmt.Errorf("invalid field offset tuple length (got=%d, want=%d)", got, want)
			}
			fdt, ok := tup.Get(0).(*ArrayDescr)
			if !ok {
				return fmt.Errorf("invalid field offset dtype")
			}
			offset, ok := tup.Get(1).(int)
			if !ok {
				return fmt.Errorf("invalid field offset")
			}
			dt.fields[dt.names[i]] = structField{dtype: *fdt, offset: uint32(offset)}
		}
	}

	if esize >= 0 {
		dt.esize = esize
	}
	if align >= 0 {
		dt.align = align
	}
	if flags >= 0 {
		dt.flags = flags
	}

	if meta.Len() > 0 {
		return fmt.Errorf("dtype with metadata not handled (yet?)")
	}

	return nil
}

func (dt ArrayDescr) unmarshal(raw []byte, shape []int) (any, error) {
	// FIXME(sbinet): handle ndims
	// FIXME(sbinet): handle sub-arrays ?
	// FIXME(sbinet): handle strides

	bo := dt.bo()

	if dt.subarr != nil {
		return dt.subarr.dtype.unmarshal(raw, dt.subarr.shape)
	}

	switch dt.kind {
	case 'b':
		data := make([]bool, len(raw))
		for i, v := range raw {
			if v == 0 {
				continue
			}
			data[i] = true
		}
		return data, nil

	case 'i':
		switch dt.esize {
		case 1:
			data := make([]int8, len(raw))
			for i, v := range raw {
				data[i] = int8(v)
			}
			return data, nil

		case 2:
			data := make([]int16, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, int16(bo.Uint16(raw[i:])))
			}
			return data, nil

		case 4:
			data := make([]int32, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, int32(bo.Uint32(raw[i:])))
			}
			return data, nil

		case 8:
			data := make([]int64, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, int64(bo.Uint64(raw[i:])))
			}
			return data, nil

		default:
			return nil, fmt.Errorf("unhandled esize=%d for kind=%q", dt.esize, dt.kind)
		}

	case 'u':
		switch dt.esize {
		case 1:
			data := make([]uint8, len(raw))
			copy(data, raw)
			return data, nil

		case 2:
			data := make([]uint16, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, bo.Uint16(raw[i:]))
			}
			return data, nil

		case 4:
			data := make([]uint32, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, bo.Uint32(raw[i:]))
			}
			return data, nil

		case 8:
			data := make([]uint64, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, bo.Uint64(raw[i:]))
			}
			return data, nil

		default:
			return nil, fmt.Errorf("unhandled esize=%d for kind=%q", dt.esize, dt.kind)
		}

	case 'f':
		switch dt.esize {
		case 2:
			data := make([]float16.Num, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, float16.Float16Frombits(bo.Uint16(raw[i:])))
			}
			return data, nil

		case 4:
			data := make([]float32, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, math.Float32frombits(bo.Uint32(raw[i:])))
			}
			return data, nil

		case 8:
			data := make([]float64, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, math.Float64frombits(bo.Uint64(raw[i:])))
			}
			return data, nil

		default:
			return nil, fmt.Errorf("unhandled esize=%d for kind=%q", dt.esize, dt.kind)
		}

	case 'c':
		switch dt.esize {
		case 8:
			data := make([]complex64, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, complex(
					math.Float32frombits(bo.Uint32(raw[i+0:])),
					math.Float32frombits(bo.Uint32(raw[i+4:])),
				))
			}
			return data, nil

		case 16:
			data := make([]complex128, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, complex(
					math.Float64frombits(bo.Uint64(raw[i+0:])),
					math.Float64frombits(bo.Uint64(raw[i+8:])),
				))
			}
			return data, nil

		default:
			return nil, fmt.Errorf("unhandled esize=%d for kind=%q", dt.esize, dt.kind)
		}

	case 'S':
		switch len(shape) {
		case 0:
			return string(bytes.TrimRight(raw, "\x00")), nil // FIXME(sbinet): use subset ? (shape/dims/...)
		default:
			data := make([]string, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				data = append(data, string(bytes.TrimRight(raw[i:i+dt.esize], "\x00"))) // FIXME(sbinet): no-alloc ?
			}
			return data, nil
		}

	case 'U':
		order := utf32.BigEndian
		switch bo {
		case binary.LittleEndian:
			order = utf32.LittleEndian
		case nativeEndian:
			switch nativeEndian.ByteOrder {
			case binary.LittleEndian:
				order = utf32.LittleEndian
			}
		}
		dec := utf32.UTF32(order, utf32.IgnoreBOM).NewDecoder()
		switch len(shape) {
		case 0:
			data, err := decodeUTF(dec, raw)
			if err != nil {
				return nil, fmt.Errorf("could not decode utf array: %w", err)
			}
			return data, nil

		default:
			data := make([]string, 0, len(raw)/dt.esize)
			for i := 0; i < len(raw); i += dt.esize {
				v, err := decodeUTF(dec, raw[i:i+dt.esize])
				if err != nil {
					return nil, fmt.Errorf("could not decode utf array element %d: %w", i/dt.esize, err)
				}
				data = append(data, v)
			}
			return data, nil
		}

	case 'O':
		pkl := newUnpickler(bytes.NewReader(raw))
		data, err := pkl.Load()
		if err != nil {
			return nil, fmt.Errorf("could not unpickle data: %w", err)
		}
		return data, nil

	case 'V':
		//log.Printf("data:\n%s", hex.Dump(raw))
		rt := dt.rtype()
		//log.Printf("-- rt=%T - shape=%v -- nelms=%d", reflect.New(rt).Interface(), shape, numElems(shape))
		nelms := numElems(shape)
		tbl := make([]int, len(dt.names))
		for fi, name := range dt.names {
			idx := go2npyIndexOf(rt, name)
			if idx < 0 {
				return nil, fmt.Errorf("%T has no field named %q", reflect.New(rt), name)
			}
			tbl[fi] = idx
		}
		arr := reflect.MakeSlice(reflect.SliceOf(rt), nelms, nelms)
		for i := range nelms {
			var (
				x = arr.Index(i)
			)
			for fi, name := range dt.names {
				field, ok := dt.fields[name]
				if !ok {
					return nil, fmt.Errorf("could not retrieve %d-th field %q", fi, name)
				}
				ptr := int(field.offset)
				//log.Printf("sub[%d,%d](%s): %+v -- shape=%v", i, fi, name, field, shape[1:])
				vv, err := field.dtype.unmarshal(raw[ptr:ptr+field.dtype.esize], subShape(shape))
				if err != nil {
					return nil, err
				}
				xf := x.Field(tbl[fi])
				switch field.dtype.kind {
				case 'U', 'S':
					switch len(subShape(shape)) {
					case 0:
						xf.Set(reflect.ValueOf(vv)) // FIXME(sbinet): regularize
					case 1:
						xf.Set(reflect.ValueOf(vv).Index(0)) // FIXME(sbinet): regularize
					default:
						panic("not implemented")
					}
				default:
					//log.Printf("dst: %T|%v, src: %T|%v", x.Field(fi).Interface(), x.Field(fi).Interface(), vv, vv)
					switch xf.Kind() {
					case reflect.Array:
						reflect.Copy(xf, reflect.ValueOf(vv))
					case reflect.Slice:
						slice := reflect.AppendSlice(xf, reflect.ValueOf(vv))
						xf.Set(slice)
					default:
						switch vf := reflect.ValueOf(vv); vf.Kind() {
						case reflect.Slice:
							xf.Set(reflect.ValueOf(vv).Index(0))
						default:
							xf.Set(reflect.ValueOf(vv))
						}
					}
				}
				//log.Printf("sub[%d](%s): data=%+v (%T)", fi, name, vv, vv)
			}
			raw = raw[dt.esize:]
		}

		//log.Printf(">>> rtype: %+v", rt)
		//log.Printf("arr: %+v", arr.Interface())
		if len(shape) == 0 {
			return arr.Index(0).Interface(), nil
		}
		return arr.Interface(), nil

	default:
		return nil, fmt.Errorf("unknown dtype [%c%d]", dt.kind, dt.esize)
	}
}

func (dt ArrayDescr) marshal(w io.Writer, v any, shape []int) error {
	if dt.subarr != nil {
		return dt.subarr.dtype.marshal(w, v, dt.subarr.shape)
	}

	bo := dt.bo()
	switch dt.kind {
	case 'b', 'u', 'i', 'f', 'c', 'U', 'S':
		switch v := v.(type) {
		case Marshaler:
			buf, err := v.MarshalNPy(bo)
			if err != nil {
				return err
			}
			_, err = w.Write(buf)
			return err

		case uint, []uint, int, []int:
			return ErrInvalidType

		case bool:
			switch v {
			case true:
				_, err := w.Write(trueUint8)
				return err
			default:
				_, err := w.Write(falseUint8)
				return err
			}
		case []bool:
			for _, vv := range v {
				switch vv {
				case true:
					_, err := w.Write(trueUint8)
					if err != nil {
						return err
					}
				case false:
					_, err := w.Write(falseUint8)
					if err != nil {
						return err
					}
				}
			}
			return nil

		case uint8:
			buf := [1]byte{v}
			_, err := w.Write(buf[:])
			return err

		case []uint8:
			_, err := w.Write(v)
			return err

		case uint16:
			var buf [2]byte
			bo.PutUint16(buf[:], v)
			_, err := w.Write(buf[:])
			return err

		case []uint16:
			var buf [2]byte
			for _, vv := range v {
				bo.PutUint16(buf[:], vv)
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case uint32:
			var buf [4]byte
			bo.PutUint32(buf[:], v)
			_, err := w.Write(buf[:])
			return err

		case []uint32:
			var buf [4]byte
			for _, vv := range v {
				bo.PutUint32(buf[:], vv)
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case uint64:
			var buf [8]byte
			bo.PutUint64(buf[:], v)
			_, err := w.Write(buf[:])
			return err

		case []uint64:
			var buf [8]byte
			for _, vv := range v {
				bo.PutUint64(buf[:], vv)
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case int8:
			buf := [1]byte{byte(v)}
			_, err := w.Write(buf[:])
			return err

		case []int8:
			var buf [1]byte
			for _, vv := range v {
				buf[0] = uint8(vv)
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case int16:
			var buf [2]byte
			bo.PutUint16(buf[:], uint16(v))
			_, err := w.Write(buf[:])
			return err

		case []int16:
			var buf [2]byte
			for _, vv := range v {
				bo.PutUint16(buf[:], uint16(vv))
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case int32:
			var buf [4]byte
			bo.PutUint32(buf[:], uint32(v))
			_, err := w.Write(buf[:])
			return err

		case []int32:
			var buf [4]byte
			for _, vv := range v {
				bo.PutUint32(buf[:], uint32(vv))
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case int64:
			var buf [8]byte
			bo.PutUint64(buf[:], uint64(v))
			_, err := w.Write(buf[:])
			return err

		case []int64:
			var buf [8]byte
			for _, vv := range v {
				bo.PutUint64(buf[:], uint64(vv))
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case float32:
			var buf [4]byte
			bo.PutUint32(buf[:], math.Float32bits(v))
			_, err := w.Write(buf[:])
			return err

		case []float32:
			var buf [4]byte
			for _, v := range v {
				bo.PutUint32(buf[:], math.Float32bits(v))
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case float64:
			var buf [8]byte
			bo.PutUint64(buf[:], math.Float64bits(v))
			_, err := w.Write(buf[:])
			return err

		case []float64:
			var buf [8]byte
			for _, v := range v {
				bo.PutUint64(buf[:], math.Float64bits(v))
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case complex64:
			var buf [8]byte
			bo.PutUint32(buf[0:4], math.Float32bits(real(v)))
			bo.PutUint32(buf[4:8], math.Float32bits(imag(v)))
			_, err := w.Write(buf[:])
			return err

		case []complex64:
			var buf [8]byte
			for _, v := range v {
				bo.PutUint32(buf[0:4], math.Float32bits(real(v)))
				bo.PutUint32(buf[4:8], math.Float32bits(imag(v)))
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case complex128:
			var buf [16]byte
			bo.PutUint64(buf[0:8], math.Float64bits(real(v)))
			bo.PutUint64(buf[8:16], math.Float64bits(imag(v)))
			_, err := w.Write(buf[:])
			return err

		case []complex128:
			var buf [16]byte
			for _, v := range v {
				bo.PutUint64(buf[0:8], math.Float64bits(real(v)))
				bo.PutUint64(buf[8:16], math.Float64bits(imag(v)))
				_, err := w.Write(buf[:])
				if err != nil {
					return err
				}
			}
			return nil

		case string:
			switch dt.kind {
			case 'U':
				n := dt.esize
				o := make([]byte, n)
				i := 0
				for _, s := range v {
					bo.PutUint32(o[i:i+utf8.UTFMax], uint32(s))
					i += utf8.UTFMax
				}
				_, err := w.Write(o)
				if err != nil {
					return err
				}

			case 'S':
				o := []byte(v)
				o = append(o, 0)
				_, err := w.Write(o)
				if err != nil {
					return err
				}
			}
			return nil

		case []string:
			n := dt.esize
			switch dt.kind {
			case 'U':
				for _, str := range v {
					o := make([]byte, n)
					i := 0
					for _, v := range str {
						bo.PutUint32(o[i:i+utf8.UTFMax], uint32(v))
						i += utf8.UTFMax
					}
					_, err := w.Write(o)
					if err != nil {
						return err
					}
				}

			case 'S':
				o := make([]byte, len(v)*n)
				for i, v := range v {
					copy(o[i:i+n], []byte(v))
				}
				_, err := w.Write(o)
				if err != nil {
					return err
				}
			}
			return nil

		}

		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Array, reflect.Slice:
			n := rv.Len()
			for i := range n {
				err := dt.marshal(w, rv.Index(i).Interface(), nil)
				if err != nil {
					return err
				}
			}
			return nil
		}

	case 'V':
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Struct:
			var (
				rt  = rv.Type()
				tbl = make([]int, len(dt.names))
			)
			for fi, name := range dt.names {
				idx := go2npyIndexOf(rt, name)
				if idx < 0 {
					return fmt.Errorf("%T has no field named %q", v, name)
				}
				tbl[fi] = idx
			}

			raw := make([]byte, dt.esize)
			for fi, name := range dt.names {
				field, ok := dt.fields[name]
				if !ok {
					return fmt.Errorf("could not retrieve %d-th field %q from %T", fi, name, v)
				}
				ptr := int(field.offset)
				sub := new(bytes.Buffer)
				err := field.dtype.marshal(sub, rv.Field(tbl[fi]).Interface(), subShape(shape))
				if err != nil {
					return err
				}
				n := copy(raw[ptr:ptr+field.dtype.esize], sub.Bytes())
				if n != len(sub.Bytes()) {
					panic(fmt.Errorf("could not copy %q field: got=%d, want=%d", field, n, field.dtype.esize))
				}
			}
			_, err := w.Write(raw)
			if err != nil {
				return err
			}

			return nil

		case reflect.Array, reflect.Slice:
			n := rv.Len()
			for i := range n {
				err := dt.marshal(w, rv.Index(i).Interface(), nil)
				if err != nil {
					return err
				}
			}
			return nil
		}

	case 'O':
		return fmt.Errorf("writing python objects: not implemented")

	default:
		return fmt.Errorf("unknown kind %q", dt.kind)
	}

	panic("not implemented")
}

func (dt *ArrayDescr) itemsize() int {
	if dt.esize < 0 {
		panic(fmt.Errorf("unknown dtype [%c%d]", dt.kind, dt.esize))
	}
	return dt.esize
}

func toHeaderDescr(dt *ArrayDescr) string {
	switch len(dt.names) {
	default:
		// a record array.
		// use .descr
		o := new(strings.Builder)
		if len(dt.fields) == 0 {
			o.WriteString("[('', ")
			o.WriteString("'")
			var (
				bo   = diskEndian(dt.order)
				size = dt.esize
			)
			if dt.esize == 1 {
				bo = nil
			}
			if dt.kind == 'U' {
				size >>= 2
			}
			switch dt.kind {
			case 'O':
				o.WriteString(orderToString(nil))
				o.WriteString(string(dt.kind))
			default:
				o.WriteString(orderToString(bo))
				o.WriteString(string(dt.kind))
				o.WriteString(strconv.FormatInt(int64(size), 10))
			}
			o.WriteString("'")
			o.WriteString(")]")
			return o.String()
		}
		return dt.typerepr()
	case 0:
		return dt.typestr()
	}
}

func (dt *ArrayDescr) typerepr() string {
	if len(dt.fields) == 0 {
		switch dt.subarr {
		case nil:
			switch len(dt.meta) {
			case 0:
				return dt.typestr()
			default:
				panic("not implemented")
			}
		default:
			o := new(strings.Builder)
			o.WriteString("(")
			o.WriteString((&dt.subarr.dtype).typerepr())
			o.WriteString(", ")
			o.WriteString(shapeString(dt.subarr.shape))
			o.WriteString(")")
			return o.String()
		}
	}

	var (
		o      = new(strings.Builder)
		offset uint32
	)
	o.WriteString("[")
	for i, name := range dt.names {
		if i > 0 {
			o.WriteString(", ")
		}
		ft := dt.fields[name]
		switch {
		case ft.offset > offset:
			pad := ft.offset - offset
			fmt.Fprintf(o, "('', '|V%d'), ", pad)
			offset += pad

		case ft.offset < offset:
			panic(fmt.Errorf("overlapping or out-of-order fields for %v", dt))
		}

		o.WriteString("(")
		switch ft.title {
		case "":
			fmt.Fprintf(o, "'%s', ", name)
		default:
			fmt.Fprintf(o, "('%s', '%s'), ", ft.title, name)
		}
		switch ft.dtype.subarr {
		case nil:
			o.WriteString((&ft.dtype).typerepr())
		default:
			fmt.Fprintf(o, "%s, %s", (&ft.dtype.subarr.dtype).typerepr(), shapeString(ft.dtype.subarr.shape))
		}
		o.WriteString(")")
		offset += uint32(ft.dtype.esize)
	}
	if uint32(dt.esize) > offset {
		pad := uint32(dt.esize) - offset
		fmt.Fprintf(o, ", ('', '|V%d')", pad)
	}
	o.WriteString("]")

	return o.String()
}

func (dt *ArrayDescr) typestr() string {
	o := new(strings.Builder)
	o.WriteString("'")
	var (
		bo   = diskEndian(dt.order)
		size = dt.esize
	)
	if dt.esize == 1 {
		bo = nil
	}
	if dt.kind == 'U' {
		size >>= 2
	}

	switch dt.kind {
	case 'V', 'S':
		bo = nil
	}

	switch dt.kind {
	case 'O':
		o.WriteString(orderToString(nil))
		o.WriteString(string(dt.kind))
	default:
		o.WriteString(orderToString(bo))
		o.WriteString(string(dt.kind))
		o.WriteString(strconv.FormatInt(int64(size), 10))
	}
	o.WriteString("'")
	return o.String()
}

func (dt ArrayDescr) String() string {
	o := new(strings.Builder)
	fmt.Fprintf(o,
		"ArrayDescr{kind: '%s', order: '%s', flags: %d, esize: %d, align: %d, subarr: %v, names: %v, fields: %v, meta: %v}",
		string(dt.kind),
		orderToString(dt.order),
		dt.flags,
		dt.esize,
		dt.align,
		dt.subarr,
		dt.names,
		dt.fields,
		dt.meta,
	)
	return o.String()
}

func (dt ArrayDescr) rtype() reflect.Type {
	if dt.rt != nil {
		return dt.rt
	}

	if dt.subarr != nil {
		//log.Printf("descr: %s - subarray: descr=%v | shape=%v", dt.dtypeStr(), dt.subarr.dtype.dtypeStr(), dt.subarr.shape)
		rt := dt.subarr.dtype.rtype()
		n := numElems(dt.subarr.shape)
		return reflect.ArrayOf(n, rt)
	}

	switch dt.kind {
	case 'b':
		return boolType

	case 'u':
		switch dt.esize {
		case 1:
			return uint8Type
		case 2:
			return uint16Type
		case 4:
			return uint32Type
		case 8:
			return uint64Type
		default:
			panic(fmt.Errorf("invalid uint element size %d", dt.esize))
		}

	case 'i':
		switch dt.esize {
		case 1:
			return int8Type
		case 2:
			return int16Type
		case 4:
			return int32Type
		case 8:
			return int64Type
		default:
			panic(fmt.Errorf("invalid int element size %d", dt.esize))
		}

	case 'f':
		switch dt.esize {
		case 2:
			return float16Type
		case 4:
			return float32Type
		case 8:
			return float64Type
		default:
			panic(fmt.Errorf("invalid float element size %d", dt.esize))
		}

	case 'c':
		switch dt.esize {
		case 8:
			return complex64Type
		case 16:
			return complex128Type
		default:
			panic(fmt.Errorf("invalid complex-float element size %d", dt.esize))
		}

	case 'O':
		return anyType

	case 'S':
		return stringType

	case 'U':
		return stringType

	case 'V':
		fts := make([]reflect.StructField, len(dt.names))
		for i, name := range dt.names {
			//log.Printf("names[%d]: %q...", i, name)
			sub, ok := dt.fields[name]
			if !ok {
				panic(fmt.Errorf("could not access %d-th field %q from descr array", i, name))
			}
			ft := sub.dtype.rtype()
			fts[i] = reflect.StructField{
				Name: npyFieldNameOf(name),
				Type: ft,
				Tag:  reflect.StructTag(`npy:"` + name + `"`),
			}
			//log.Printf("names[%d]: %q... ⇒ %+v", i, name, fts[i])
		}
		return reflect.StructOf(fts)

	case 'm', 'M':
		panic(fmt.Errorf("kind '%s' not (yet?) implemented", string(dt.kind)))

	default:
		panic(fmt.Errorf("unknown kind '%s'", string(dt.kind)))
	}
}

func (sfs structFields) String() string {
	o := new(strings.Builder)
	fmt.Fprintf(o, "{")
	keys := make([]string, 0, len(sfs))
	for k := range sfs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			fmt.Fprintf(o, ", ")
		}
		v := sfs[k]
		fmt.Fprintf(o, "%q: %v", k, v)
	}
	fmt.Fprintf(o, "}")
	return o.String()
}

func (sf structField) String() string {
	o := new(strings.Builder)
	fmt.Fprintf(o, "field{dtype: %v, offset: %d}", sf.dtype, sf.offset)
	return o.String()
}

func (sub subarrayDescr) String() string {
	o := new(strings.Builder)
	fmt.Fprintf(o, "subarr{dtype: %v, shape: %v}", sub.dtype, sub.shape)
	return o.String()
}

func decodeUTF(dec *encoding.Decoder, raw []byte) (string, error) {
	// FIXME(sbinet): use subset ? (shape/dims/...)
	vs := make([]byte, 0, utf8.RuneCount(raw))
	raw, err := dec.Bytes(raw)
	if err != nil {
		return "", err
	}
	i := 0
loop:
	for {
		r, sz := utf8.DecodeRune(raw[i:])
		switch r {
		case utf8.RuneError:
			if sz == 0 {
				break loop
			}
			return string(vs), fmt.Errorf("invalid rune")
		default:
			vs = utf8.AppendRune(vs, r)
			i += sz
		}
	}
	return string(bytes.TrimRight(vs, "\x00")), nil
}

// fixupDescrLayout adapts the dst offsets and byte-order to match the src one.
func fixupDescrLayout(dst *ArrayDescr, src ArrayDescr) {
	for _, name := range src.names {
		fsrc, ok := src.fields[name]
		if !ok {
			panic("impossible")
		}
		fdst, ok := dst.fields[name]
		if !ok {
			continue
		}
		if fsrc.dtype.subarr != nil {
			switch fdst.dtype.subarr {
			case nil:
				elem := fdst.dtype
				fdst.dtype.subarr = &subarrayDescr{
					dtype: elem,
					shape: fsrc.dtype.subarr.shape,
				}
				fixupDescrLayout(&fdst.dtype.subarr.dtype, fsrc.dtype.subarr.dtype)
			default:
				fixupDescrLayout(&fdst.dtype.subarr.dtype, fsrc.dtype.subarr.dtype)
			}
		}
		fixupDescrLayout(&fdst.dtype, fsrc.dtype)
		fdst.offset = fsrc.offset

		dst.fields[name] = fdst
	}
	dst.esize = src.esize

	// adapt byte order when it makes sense.
	// we don't want to be in the user's way (and games they may want to play),
	// thus the check on the dtype.kind.
	if dst.kind == src.kind && dst.order == nil {
		dst.order = src.order
	}
}
