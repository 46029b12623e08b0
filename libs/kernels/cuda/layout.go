package cuda

import (
	"fmt"

	"carve.dev/libs/kernels"
)

// maxRank is the most dims a layout has after dropping size-1 dims and merging contiguous ones;
// the kernels' LAYOUT_PARAMS (csrc/common.cuh) carry this many.
const maxRank = 6

// layout walks a dense shape in row-major order and maps each element to offsets, in elements,
// in up to three operands (stride 0 where an operand is broadcast). It is the Go side of the
// kernels' Layout.
type layout struct {
	rank int
	dims [maxRank]int64
	st   [3][maxRank]int64
}

// newLayout builds the layout of dims with one stride list per operand (each len(dims) long),
// dropping dims of size 1 and merging adjacent dims that are contiguous in every operand. Most
// layouts end with rank 1 or 2.
func newLayout(dims []int64, sts ...[]int64) (layout, error) {
	var l layout
	if len(sts) > 3 {
		return l, fmt.Errorf("layout of %d operands", len(sts))
	}
	type dim struct {
		d  int64
		st [3]int64
	}
	var ds []dim
	for i, d := range dims {
		if d == 1 {
			continue
		}
		cur := dim{d: d}
		for k, st := range sts {
			cur.st[k] = st[i]
		}
		if n := len(ds); n > 0 {
			prev := &ds[n-1]
			merge := true
			for k := range sts {
				if prev.st[k] != cur.st[k]*cur.d {
					merge = false
					break
				}
			}
			if merge {
				prev.d *= cur.d
				prev.st = cur.st
				continue
			}
		}
		ds = append(ds, cur)
	}
	if len(ds) == 0 {
		ds = append(ds, dim{d: 1})
	}
	if len(ds) > maxRank {
		return l, fmt.Errorf("shape %v needs %d strided dims; the CUDA kernels take at most %d", dims, len(ds), maxRank)
	}
	l.rank = len(ds)
	for i, d := range ds {
		if d.d >= 1<<32 {
			return l, fmt.Errorf("dim %d of %v is too large for the CUDA kernels", d.d, dims)
		}
		l.dims[i] = d.d
		for k := range sts {
			l.st[k][i] = d.st[k]
		}
	}
	return l, nil
}

// broadcastStrides is the element strides of an operand of shape s broadcast to out: 0 for
// dims it lacks or has as 1.
func broadcastStrides(out, s []int64) ([]int64, error) {
	if len(s) > len(out) {
		return nil, fmt.Errorf("shape %v does not broadcast to %v", s, out)
	}
	st := stridesOf(s)
	full := make([]int64, len(out))
	off := len(out) - len(s)
	for i := range out {
		j := i - off
		if j < 0 || s[j] == 1 {
			continue
		}
		if s[j] != out[i] {
			return nil, fmt.Errorf("shape %v does not broadcast to %v", s, out)
		}
		full[i] = st[j]
	}
	return full, nil
}

// broadcastLayout is the layout of out with each input broadcast to it.
func broadcastLayout(out []int64, ins ...[]int64) (layout, error) {
	sts := make([][]int64, len(ins))
	for k, s := range ins {
		st, err := broadcastStrides(out, s)
		if err != nil {
			return layout{}, err
		}
		sts[k] = st
	}
	return newLayout(out, sts...)
}

// params is the layout as the kernels' LAYOUT_PARAMS: rank, dims packed two per parameter,
// then six strides for each of three operands.
func (l layout) params() []param {
	ps := make([]param, 0, 22)
	ps = append(ps, i32p(l.rank))
	for i := 0; i < maxRank; i += 2 {
		ps = append(ps, i64p(int64(uint64(l.dims[i])|uint64(l.dims[i+1])<<32)))
	}
	for k := 0; k < 3; k++ {
		for i := 0; i < maxRank; i++ {
			ps = append(ps, i64p(l.st[k][i]))
		}
	}
	return ps
}

// total is the element count the layout walks.
func (l layout) total() int64 {
	n := int64(1)
	for i := 0; i < l.rank; i++ {
		n *= l.dims[i]
	}
	return n
}

// widen re-expresses a copy layout (operand 0 the source, 1 the destination, element size es
// bytes, base offsets srcOff and dstOff in bytes) in the widest unit of at most 16 bytes that
// every stride, the contiguous innermost run and both offsets are multiples of. It returns the
// layout in units and the unit; the unit is es when nothing wider fits.
func widen(l layout, es, srcOff, dstOff int64) (layout, int64) {
	r := l.rank - 1
	if l.st[0][r] != 1 || l.st[1][r] != 1 {
		return l, es
	}
	for u := int64(16); u > es; u /= 2 {
		ok := (l.dims[r]*es)%u == 0 && srcOff%u == 0 && dstOff%u == 0
		for i := 0; i < r && ok; i++ {
			ok = (l.st[0][i]*es)%u == 0 && (l.st[1][i]*es)%u == 0
		}
		if !ok {
			continue
		}
		w := l
		w.dims[r] = l.dims[r] * es / u
		for i := 0; i < r; i++ {
			w.st[0][i] = l.st[0][i] * es / u
			w.st[1][i] = l.st[1][i] * es / u
		}
		return w, u
	}
	return l, es
}

// copySteps copies through a layout (operand 0 read from src, operand 1 written to dst; refs
// with byte offsets srcOff and dstOff already applied) in the widest unit the layout allows,
// falling back to es-byte units when the addresses given at run time are not aligned to it.
// It returns no step for an empty copy.
func copySteps(l layout, es int64, src, dst param, t kernels.Target) ([]step, error) {
	if l.total() == 0 {
		return nil, nil
	}
	if es != 1 && es != 2 && es != 4 && es != 8 {
		return nil, fmt.Errorf("element size %d", es)
	}
	mk := func(l layout, u int64) step {
		per := int64(1)
		return step{
			kernel: fmt.Sprintf("carve_copy_%d", u),
			grid:   grid1(l.total(), per, t), block: block1,
			params: append([]param{dst, src, i64p(l.total())}, l.params()...),
		}
	}
	base := mk(l, es)
	w, u := widen(l, es, src.off, dst.off)
	if u == es {
		return []step{base}, nil
	}
	st := mk(w, u)
	st.align, st.fallback = u, &base
	return []step{st}, nil
}

// contiguous is the layout of a dense copy of n elements.
func contiguous(n int64) (layout, error) {
	return newLayout([]int64{n}, []int64{1}, []int64{1})
}
