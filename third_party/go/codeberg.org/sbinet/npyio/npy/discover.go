// Copyright 2025 The npyio Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package npy

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"codeberg.org/sbinet/npyio/internal/dtp"
	"codeberg.org/sbinet/npyio/npy/float16"
)

// TODO(sbinet): discovery of array descr from Go values could do some refactorization.
//
// Right now, we inspect a Go value, creating a descr.
// For scalar values and arrays/slices of builtins, it's pretty straightforward.
// But for structs, matters starts to complicate a bit:
//  - we create a descr from the initial struct value, recursing into each field's value
//    creating a descr from that. But that field may have a struct-tag that modifies the
//    descr (kind and size).
//    The field may also be an array/slice (that modifies the size).
//  - modifying the size/type of a field impacts the offsets of the following fields.
//  - the whole procedure needs to also take into account later values of the struct, if
//  that struct is in a slice/array,
//  - offsets may also be modified by alignment.
//
// We could perhaps modify the procedure by:
//  - creating a descr from the type alone,
//  - associating discoIndex with a string-descr or some ad hoc type,
//  - modifying the associated type when iterating over the Go value(s)
//  - and do a final consolidating phase.

const (
	npyMaxDims = 64
)

// discoIndex represents an index into a numpy array value.
//
// discoIndex folds items of a sequence (slice or array) into the same
// index 'x'.
// Fields of a struct are noted by their index into the struct.
// e.g.:
//
//	type T struct {
//	  A int8
//	  B string
//	  C []float64
//	}
//	array: T{} → '0'     : index of the whole scalar value T{}
//	           → '0.0'   : index of T{}.A
//	           → '0.1'   : index of T{}.B
//	           → '0.2'   : index of T{}.C
//	           → '0.2.x' : index of all T{}.C (folded) values
//
//	array: []T{{0,"a",{1,2,3}}, {1,"b",{4,5,6}}}
//	  → 'x.0'   : index of all T{}.A values
//	  → 'x.1'   : index of all T{}.B values
//	  → 'x.2'   : index of T{}.C
//	  → 'x.2.x' : index of all T{}.C (folded) values
//
// Folding is used to detect when arrays are ragged, or to promote
// strings to larger values (e.g. '<U2' to '<U5'.)
type discoIndex string

func discoIndexFor(v any) discoIndex {
	if ((*discoCtx)(nil)).isScalar(v) {
		return "0"
	}
	rt := reflect.TypeOf(v)
	switch rt.Kind() {
	case reflect.Array, reflect.Slice:
		return "x"
	case reflect.Struct:
		return "0"
	default:
		panic(fmt.Errorf("unhandled type %T", v))
	}
}

func (di discoIndex) pop() discoIndex {
	pos := strings.LastIndex(string(di), ".")
	if pos < 0 {
		return ""
		//panic(fmt.Errorf("no parent for %q", di))
	}
	return discoIndex(di[:pos])
}

// FIXME(sbinet): differentiate between indices into slices/arrays
// and indices into struct-fields ?
// e.g: 'x.1' and 'x.f1' ?
// This would need 2 different 'push' functions and probably
// more logic into 'tail' (or 2 different 'tail' functions.

func (di discoIndex) push(idx int) discoIndex {
	if len(di) != 0 {
		di += "."
	}
	switch {
	case idx < 0:
		return discoIndex(di + "x")
	default:
		return discoIndex(string(di) + strconv.FormatInt(int64(idx), 10))
	}
}

func (di discoIndex) tail() int {
	pos := strings.LastIndex(string(di), ".")
	if pos < 0 {
		return -1
	}
	v, err := strconv.ParseInt(string(di[pos+1:]), 10, 64)
	if err != nil {
		panic(err)
	}
	return int(v)
}

type discoChange struct {
	old string
	new string
}
type discoChanges []discoChange

func (chngs discoChanges) has(chng discoChange) bool {
	var (
		beg = -1
	)
	for i, v := range chngs {
		if v == chng {
			return true
		}
		// now trying with multi-leg changes.
		// ie: a change with 'old' at index i
		//   and with 'new' at index i+n (with n>0)
		if v.old == chng.old {
			beg = i
		}
		if v.new == chng.new && beg >= 0 {
			return true
		}
	}

	return false
}

var deletedNode = new(discoNode)

type discoNode struct {
	idx   discoIndex
	typ   reflect.Type
	len   int
	descr *ArrayDescr
}

func (node *discoNode) isvalid() bool {
	return !(node == nil || node == deletedNode)
}

// discoCtx holds context data to discover the matching dtype for
// a given Go value.
type discoCtx struct {
	nodes map[discoIndex]*discoNode
	chngs map[discoIndex]discoChanges

	align bool
	descr *ArrayDescr
	shape []int
}

func discover(v any, align bool) (descr *ArrayDescr, shape []int, err error) {
	if arr, ok := v.(Array); ok {
		return arr.descr, arr.shape, nil
	}

	ctx := &discoCtx{
		nodes: make(map[discoIndex]*discoNode),
		chngs: make(map[discoIndex]discoChanges),
		align: align,
	}

	err = ctx.disco(v)
	if err != nil {
		return nil, nil, err
	}

	for k, n := range ctx.nodes {
		if !n.isvalid() {
			delete(ctx.nodes, k)
		}
	}

	switch {
	case ctx.has("0"):
		// scalar.
		root := ctx.nodes["0"]
		ctx.descr = root.descr
		ctx.shape = nil
		return ctx.descr, ctx.shape, nil

	case ctx.has("x"):
		idx := discoIndex("x")
		if n := ctx.nodes[idx].len; n > 0 {
			ctx.shape = append(ctx.shape, n)
		}
		for ndim := 2; ndim < npyMaxDims; ndim++ {
			sub := idx.push(-1)
			node, ok := ctx.nodes[sub]
			if !ok {
				break
			}
			if node.len < 0 {
				//log.Printf("   → ragged array !!")
				panic("impossible ?")
				break
			}
			if node.len > 0 {
				ctx.shape = append(ctx.shape, node.len)
			}
			idx = sub
		}

		node := ctx.nodes[idx]
		ctx.descr = node.descr
		return ctx.descr, ctx.shape, nil

	default:
		panic("invalid node tree")
	}
}

func (ctx *discoCtx) has(idx discoIndex) bool {
	_, ok := ctx.nodes[idx]
	return ok
}

func (ctx *discoCtx) disco(v any) error {
	err := ctx.rdisco(v, discoIndexFor(v))
	if err != nil {
		return err
	}

	return nil
}

func (ctx *discoCtx) rdisco(v any, idx discoIndex) error {
	if ctx.isScalar(v) {
		return ctx.handleScalar(v, idx)
	}

	var (
		rv = reflect.ValueOf(v)
		rt = rv.Type()
	)

	if v, ok := v.(Descr); ok {
		node, err := dtp.Parse(v.DescrNPy())
		if err != nil {
			panic(err)
			return fmt.Errorf("could not parse description: %w", err)
		}

		descr, err := newDescrFrom(node, ctx.align)
		if err != nil {
			return err
		}
		// FIXME(sbinet): update fields' names, offsets and alignments
		_ /*cur*/ = ctx.node(&discoNode{
			idx:   idx,
			typ:   rt,
			descr: descr,
		})
		return nil
	}

	switch rt.Kind() {
	case reflect.Struct:
		descr, err := newDescrFromGo(v, ctx.align)
		if err != nil {
			return err
		}

		cur := ctx.node(&discoNode{
			idx:   idx,
			typ:   rt,
			descr: descr,
		})

		tbl := make([]int, len(cur.descr.names))
		for fi, name := range cur.descr.names {
			idx := go2npyIndexOf(rt, name)
			if idx < 0 {
				return fmt.Errorf("%T has no field named %q", v, name)
			}
			tbl[fi] = idx
		}

		var update bool
		for fi, name := range cur.descr.names {
			var (
				fidx = cur.idx.push(fi)
				ftyp = cur.descr.fields[name]
				fv   = rv.Field(tbl[fi])
			)
			ptr, ok := ctx.nodes[fidx] // refetch as it may have been removed
			if ok && (!ptr.isvalid() || ptr.descr.kind == 'O') || ftyp.dtype.kind == 'O' {
				continue
			}

			err := ctx.rdisco(fv.Interface(), fidx)
			if err != nil {
				return err
			}

			// this endianness may come from a struct-tag.
			// prefer it over the one derived from the value (which should be nil).
			bo := ftyp.dtype.order
			if bo != nil && ctx.nodes[fidx].descr.order == nil {
				ctx.nodes[fidx].descr.order = bo
			}
			if farr, sub := ftyp.dtype.subarr, ctx.nodes[fidx].descr.subarr; farr != nil && sub != nil {
				bo := ftyp.dtype.subarr.dtype.order
				if bo != nil && sub.dtype.order == nil {
					ctx.nodes[fidx].descr.subarr.dtype.order = bo
				}

				// also handle shape coming from a struct-tag (if any).
				// but make sure the number of elements matches.
				var (
					tagNum = numElems(farr.shape)
					valNum = numElems(sub.shape)
				)
				if tagNum == valNum {
					// keep shape from struct-tag.
					ctx.nodes[fidx].descr.subarr.shape = ftyp.dtype.subarr.shape
				}
			}
			ftyp.dtype = *ctx.nodes[fidx].descr
			ftyp.offset = ctx.nodes[idx].descr.fields[name].offset // offset may have been updated by up-propagation.
			update = update || cur.descr.fields[name].dtype.esize != ftyp.dtype.esize
			cur.descr.fields[name] = ftyp
		}

		if update {
			var (
				maxalign = 1
				totalsz  uint32
				align    = cur.descr.flags&npyAlignedStruct != 0
			)
			for _, name := range cur.descr.names {
				ftyp := cur.descr.fields[name]
				if align {
					if ftyp.dtype.align > 1 {
						totalsz = npyNextAlignedOffset(totalsz, uint32(ftyp.dtype.align))
					}
					maxalign = max(maxalign, ftyp.dtype.align)
				}
				ftyp.offset = totalsz
				cur.descr.fields[name] = ftyp
				totalsz += uint32(ftyp.dtype.esize)
			}
			if maxalign > 1 {
				totalsz = npyNextAlignedOffset(totalsz, uint32(maxalign))
			}
			if align {
				cur.descr.align = maxalign
			}
			cur.descr.esize = int(totalsz)
			ctx.update(idx.pop(), idx)
		}
		return nil

	case reflect.Array:
		descr, err := newDescrFromGo(v, ctx.align)
		if err != nil {
			return err
		}

		cur := ctx.node(&discoNode{
			idx:   idx,
			len:   rt.Len(),
			typ:   rt,
			descr: descr,
		})

		if !cur.isvalid() || cur.descr.kind == 'O' {
			// no need to inspect.
			return nil
		}

		n := rt.Len()
		for i := range n {
			cur := ctx.nodes[cur.idx] // refetch as it may have been removed
			if !cur.isvalid() || cur.descr.kind == 'O' {
				break
			}
			err := ctx.rdisco(rv.Index(i).Interface(), cur.idx.push(-1))
			if err != nil {
				return err
			}
		}

		return nil

	case reflect.Slice:
		descr, err := newDescrFromGo(v, ctx.align)
		if err != nil {
			return err
		}

		var (
			rv = reflect.ValueOf(v)
			n  = rv.Len()
		)

		cur := ctx.node(&discoNode{
			idx:   idx,
			len:   n,
			typ:   rt,
			descr: descr,
		})

		if !cur.isvalid() || cur.descr.kind == 'O' {
			// no need to inspect.
			return nil
		}

		for i := range n {
			cur := ctx.nodes[idx] // refetch as it may have been removed
			if !cur.isvalid() || cur.descr.kind == 'O' {
				break
			}
			err := ctx.rdisco(rv.Index(i).Interface(), cur.idx.push(-1))
			if err != nil {
				return err
			}
		}

		return nil

	case reflect.Invalid, reflect.Chan, reflect.Func, reflect.Interface, reflect.Map:
		return fmt.Errorf("type not supported: %v", rt)
	}

	panic("impossible")
}

func (ctx *discoCtx) isScalar(v any) bool {
	switch v.(type) {
	case bool,
		int8, int16, int32, int64,
		uint8, uint16, uint32, uint64,
		float16.Num, float32, float64,
		complex64, complex128,
		string:
		return true
	default:
		return false
	}
}

func (ctx *discoCtx) handleScalar(v any, idx discoIndex) error {
	// this is a scalar. find the descriptor.
	descr, err := newDescrFromGo(v, ctx.align)
	if err != nil {
		return err
	}

	_ = ctx.node(&discoNode{
		idx:   idx,
		typ:   reflect.TypeOf(v),
		descr: descr,
	})

	return nil
}

func (ctx *discoCtx) node(node *discoNode) *discoNode {
	prev, dup := ctx.nodes[node.idx]
	if !dup {
		ctx.nodes[node.idx] = node
		return node
	}

	if prev == deletedNode {
		return nil
	}

	chngs, ok := ctx.chngs[node.idx]
	if ok {
		// did we already apply that change ?
		chng := discoChange{
			old: toHeaderDescr(node.descr),
			new: toHeaderDescr(prev.descr),
		}
		seen := chngs.has(chng)
		if seen {
			return prev
		}
	}

	switch {
	case prev.typ != node.typ:
		panic(
			fmt.Errorf(
				"impossible ? idx=%q prev=%T, node=%T",
				prev.idx,
				reflect.New(prev.typ).Elem().Interface(),
				reflect.New(node.typ).Elem().Interface(),
			),
		)
	case prev.descr.kind == node.descr.kind:
		var (
			updateSize = prev.descr.esize != node.descr.esize
			isRagged   = prev.len != node.len
			doUpdate   = updateSize || isRagged

			chng = discoChange{
				old: toHeaderDescr(prev.descr),
				new: toHeaderDescr(node.descr),
			}
		)
		switch prev.descr.kind {
		case 'U', 'S', 'V':
			switch {
			case prev.descr.esize > node.descr.esize:
				// ok.
			case node.descr.esize > prev.descr.esize:
				*prev.descr = *node.descr
			}
		}
		if prev.len != node.len {
			prev.len = -1 // mark as ragged array.
			descr, err := newDescrFromStr("O", ctx.align)
			if err != nil {
				panic(err)
			}
			descr.rt = anyType
			prev.descr = descr
			prev.typ = anyType
			chng.new = toHeaderDescr(descr)
		}
		if doUpdate {
			ctx.chngs[prev.idx] = append(ctx.chngs[prev.idx], chng)
			ctx.update(prev.idx.pop(), prev.idx)
		}
	default:
		panic(
			fmt.Errorf(
				"impossible ? idx=%q prev=%T, node=%T",
				prev.idx,
				reflect.New(prev.typ).Elem().Interface(),
				reflect.New(node.typ).Elem().Interface(),
			),
		)
	}

	return ctx.nodes[node.idx]
}

func (ctx *discoCtx) update(pidx, idx discoIndex) {
	var (
		top, ok = ctx.nodes[pidx]
		bot     = ctx.nodes[idx]
	)
	if !ok {
		return
	}

	chng := discoChange{
		old: toHeaderDescr(top.descr),
	}

	var update bool
	switch {
	case top.descr.subarr != nil:
		switch {
		case bot.len == -1:
			descr, err := newDescrFromStr("O", false)
			if err != nil {
				panic(err)
			}
			descr.rt = anyType
			top.descr = descr
			top.typ = anyType
			ctx.nodes[top.idx] = top
			ctx.nodes[bot.idx] = deletedNode

			update = true

		default:
			n := numElems(top.descr.subarr.shape)
			top.descr.subarr.dtype = *bot.descr

			update = top.descr.esize != n*bot.descr.esize
			top.descr.esize = n * bot.descr.esize
			if len(top.descr.fields) != 0 {
				// a descr with fields *and* a subarray isn't possible, is it ?
				panic("impossible")
			}
		}

	case len(top.descr.fields) != 0:
		// translate child node index into descr field index/name
		fidx := bot.idx.tail()
		name := top.descr.names[fidx]
		ftyp := top.descr.fields[name]
		ftyp.dtype = *bot.descr
		top.descr.fields[name] = ftyp

		var (
			dtflags         = npyNeedsPyAPI // types with fields need the Python C-API for field access
			maxalign        = 1
			totalsz  uint32 = 0
			align           = top.descr.flags&npyAlignedStruct != 0
		)
		for _, name := range top.descr.names {
			sub := top.descr.fields[name]
			dtflags |= sub.dtype.flags & npyFromFields
			if align {
				if sub.dtype.align > 1 {
					totalsz = npyNextAlignedOffset(totalsz, uint32(sub.dtype.align))
				}
				maxalign = max(maxalign, sub.dtype.align)
			}
			update = update || sub.offset != totalsz
			sub.offset = totalsz
			top.descr.fields[name] = sub
			totalsz += uint32(sub.dtype.esize)
		}

		if maxalign > 1 {
			totalsz = npyNextAlignedOffset(totalsz, uint32(maxalign))
		}
		update = update || top.descr.esize != int(totalsz) || top.descr.flags != dtflags
		top.descr.esize = int(totalsz)
		top.descr.flags = dtflags

		if align {
			update = update || top.descr.align != maxalign
			top.descr.align = maxalign

			flags := top.descr.flags
			top.descr.flags |= npyAlignedStruct
			update = update || top.descr.flags == flags
		}

	default:
		panic("not implemented")
	}

	if update {
		chng.new = toHeaderDescr(top.descr)
		ctx.chngs[top.idx] = append(ctx.chngs[top.idx], chng)

		ctx.update(pidx.pop(), pidx)
	}
}

func newDescrFromGo(v any, align bool) (*ArrayDescr, error) {
	rt := reflect.TypeOf(v)
	if kind, ok := go2kind[rt]; ok {
		dt, err := newDescrFromStr(kind, align)
		if err != nil {
			return nil, err
		}
		dt.rt = rt
		return dt, nil
	}

	if v, ok := v.(Descr); ok {
		node, err := dtp.Parse(v.DescrNPy())
		if err != nil {
			return nil, fmt.Errorf("could not parse description: %w", err)
		}

		dt, err := newDescrFrom(node, align)
		if err != nil {
			return nil, err
		}
		dt.rt = rt
		return dt, nil
	}

	if rt == nil {
		return nil, fmt.Errorf("no support for %q: %w", reflect.Interface, errNoConv)
	}

	switch rt.Kind() {
	case reflect.Chan, reflect.Interface, reflect.Map, reflect.Uintptr:
		return nil, fmt.Errorf("no support for %q: %w", rt.Kind(), errNoConv)

	case reflect.Int, reflect.Uint:
		// FIXME(sbinet): auto-convert to (u)int64 ?
		return nil, fmt.Errorf("no support for %q: %w", rt.Kind(), errNoConv)

	case reflect.String:
		str := v.(string)
		dt, err := newDescrFromStr("U"+strconv.FormatInt(int64(utf8.RuneCountInString(str)), 10), align)
		if err != nil {
			return nil, err
		}
		dt.rt = stringType
		return dt, nil

	case reflect.Array:
		var (
			n  = rt.Len()
			rv = reflect.ValueOf(v)
		)
		switch {
		case rt.Elem() == anyType:
			dt, err := newDescrFromStr("O", align)
			if err != nil {
				return nil, err
			}
			dt.rt = anyType
			return dt, nil

		case n == 0:
			ev := reflect.New(rt.Elem()).Elem().Interface()
			dt, err := newDescrFromGo(ev, align)
			if err != nil {
				return nil, err
			}
			dt.rt = rt.Elem()
			return dt, nil

		default:
			typ, err := newDescrFromGo(rv.Index(0).Interface(), align)
			if err != nil {
				return nil, err
			}
			dt, err := newDescrFromStr("|V"+strconv.FormatInt(int64(n*typ.esize), 10), align)
			if err != nil {
				return nil, err
			}
			switch {
			case typ.subarr != nil:
				// fold n-dim arrays
				dt.subarr = &subarrayDescr{
					dtype: typ.subarr.dtype,
					shape: append([]int{n}, typ.subarr.shape...),
				}
			default:
				dt.subarr = &subarrayDescr{
					dtype: *typ,
					shape: []int{n},
				}
			}
			dt.align = typ.align
			dt.flags = typ.flags
			dt.rt = rt

			return dt, nil
		}

	case reflect.Slice:
		var (
			rv = reflect.ValueOf(v)
			n  = rv.Len()
		)
		switch {
		case rt.Elem() == anyType:
			dt, err := newDescrFromStr("O", align)
			if err != nil {
				return nil, err
			}
			dt.rt = anyType
			return dt, nil

		case n == 0:
			ev := reflect.New(rt.Elem()).Elem().Interface()
			dt, err := newDescrFromGo(ev, align)
			if err != nil {
				return nil, err
			}
			dt.rt = rt.Elem()
			return dt, nil

		default:
			typ, err := newDescrFromGo(rv.Index(0).Interface(), align)
			if err != nil {
				return nil, err
			}
			dt, err := newDescrFromStr("|V"+strconv.FormatInt(int64(n*typ.esize), 10), align)
			if err != nil {
				return nil, err
			}
			switch {
			case typ.subarr != nil:
				// fold n-dim arrays
				dt.subarr = &subarrayDescr{
					dtype: typ.subarr.dtype,
					shape: append([]int{n}, typ.subarr.shape...),
				}
			default:
				dt.subarr = &subarrayDescr{
					dtype: *typ,
					shape: []int{n},
				}
			}
			dt.align = typ.align
			dt.flags = typ.flags
			dt.rt = rt

			return dt, nil
		}

	case reflect.Struct:
		descr := &ArrayDescr{
			kind:   'V',
			align:  1,
			fields: make(structFields, rt.NumField()),
		}

		var (
			dtflags         = npyNeedsPyAPI // types with fields need the Python C API for field access
			maxalign        = 1
			totalsz  uint32 = 0
			rv              = reflect.ValueOf(v)
		)
		for i := 0; i < rt.NumField(); i++ {
			ft := rt.Field(i)
			if !ft.IsExported() {
				continue
			}

			if ft.Anonymous {
				// FIXME(sbinet)
				return nil, fmt.Errorf("structs with anonymous fields: not supported")
			}

			name, meta := parseMetaDescr(ft.Tag.Get("npy"))
			if name == "" {
				name = ft.Name
			}

			if name == "-" {
				continue
			}

			var (
				sub *ArrayDescr
				err error
				fv  = rv.Field(i)
			)
			switch meta {
			case "":
				sub, err = newDescrFromGo(fv.Interface(), align)
				if err != nil {
					return nil, err
				}
			default:
				// prevent users from specifying a meta-descr for struct-fields.
				// FIXME(sbinet): allow it but make sure everything lines up ?
				if ft.Type.Kind() == reflect.Struct {
					return nil, fmt.Errorf("invalid struct-tag for %q: specifying meta-descr for struct fields is not supported", ft.Name)
				}

				v, err := dtp.Parse(meta)
				if err != nil {
					return nil, fmt.Errorf("could not parse struct-tag metadata %q: %w", ft.Tag.Get("npy"), err)
				}
				sub, err = newDescrFrom(v, align)
				if err != nil {
					return nil, err
				}
				sub.rt = sub.rtype()
				// FIXME(sbinet):
				//  - check conversion ft.type ←→ sub.rt
				//  - check (numpy) promotion rules
				if !ft.Type.ConvertibleTo(sub.rt) {
					return nil, fmt.Errorf("invalid specification for field %q: no conversion from %q to %q", name, ft.Type.Kind(), sub.rt.Kind())
				}

				switch sub.rt.Kind() {
				case reflect.Array:
					sub.subarr.dtype.rt = sub.rt.Elem()
				}
			}

			if _, dup := descr.fields[name]; dup {
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
		descr.rt = rt

		return descr, nil

	default:
		return nil, fmt.Errorf("no support for %q: %w", rt.Kind(), errNoConv)
	}
}
