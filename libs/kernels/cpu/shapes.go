package cpu

import (
	"fmt"

	"carve.dev/libs/graph"
)

// maxRank is the largest rank the strided loops handle after coalescing dims. Shapes of real
// models stay far below it; a larger one is a clear error at Select, never a panic.
const maxRank = 8

// numel is the element count of a shape already validated at Select (no overflow possible).
func numel(shape []int64) int {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	return n
}

// stridesOf is the row-major element strides of shape.
func stridesOf(shape []int64) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= int(shape[i])
	}
	return st
}

func isFloat(dt graph.DType) bool {
	return dt == graph.Float32 || dt == graph.Float64 || dt == graph.Float16 || dt == graph.BFloat16
}

func isInt(dt graph.DType) bool {
	switch dt {
	case graph.Int8, graph.Int16, graph.Int32, graph.Int64, graph.Uint8, graph.Uint16, graph.Uint32, graph.Uint64:
		return true
	}
	return false
}

func isNumeric(dt graph.DType) bool { return isFloat(dt) || isInt(dt) }

// bplan iterates an output shape and up to three inputs broadcast to it, as runs along the
// innermost (coalesced) dim. Strides are in elements; a broadcast dim has stride 0.
type bplan struct {
	rank  int
	nin   int
	dims  [maxRank]int
	st    [3][maxRank]int
	total int
}

// newBPlan plans the broadcast of ins to out. Output dims of size 1 are dropped and adjacent
// dims that are contiguous in every operand are merged, so most plans have rank 1 or 2.
func newBPlan(out []int64, ins ...[]int64) (bplan, error) {
	var p bplan
	p.nin = len(ins)
	p.total = numel(out)
	r := len(out)
	type dimInfo struct {
		d  int
		st [3]int
	}
	var infos []dimInfo
	var inSt [3][]int
	for k, s := range ins {
		if len(s) > r {
			return p, fmt.Errorf("shape %v does not broadcast to %v", s, out)
		}
		inSt[k] = stridesOf(s)
	}
	for i := 0; i < r; i++ {
		if out[i] == 1 {
			continue
		}
		di := dimInfo{d: int(out[i])}
		for k, s := range ins {
			j := i - (r - len(s))
			if j < 0 || s[j] == 1 {
				continue // stride 0
			}
			if s[j] != out[i] {
				return p, fmt.Errorf("shape %v does not broadcast to %v", s, out)
			}
			di.st[k] = inSt[k][j]
		}
		// merge with the previous dim when contiguous for every operand
		if n := len(infos); n > 0 {
			prev := &infos[n-1]
			ok := true
			for k := range ins {
				if prev.st[k] != di.st[k]*di.d {
					ok = false
					break
				}
			}
			if ok {
				prev.d *= di.d
				prev.st = di.st
				continue
			}
		}
		infos = append(infos, di)
	}
	if len(infos) > maxRank {
		return p, fmt.Errorf("broadcast of %v needs %d strided dims, more than %d", out, len(infos), maxRank)
	}
	if len(infos) == 0 {
		infos = append(infos, dimInfo{d: 1})
	}
	p.rank = len(infos)
	for i, di := range infos {
		p.dims[i] = di.d
		for k := range ins {
			p.st[k][i] = di.st[k]
		}
	}
	return p, nil
}

// inner is the run length; runs is the number of runs.
func (p *bplan) inner() int { return p.dims[p.rank-1] }

// splitRuns cuts runs longer than parGrainElems into runs of a divisor of their length between
// parGrainElems/16 and parGrainElems, for a kernel run by up to workers that splits its work at
// run boundaries (runRanges): without it, an op with one long run (operands of one shape, or a
// scalar one) ran on one worker however large. The elements, and the op on each, are the same,
// so the results are too. A run length without such a divisor stays as it is.
func (p *bplan) splitRuns(workers int) {
	d := p.inner()
	if workers <= 1 || p.rank >= maxRank || p.total < 2*parMinElems || d <= parGrainElems {
		return
	}
	for c := parGrainElems; c >= parGrainElems/16; c-- {
		if d%c != 0 {
			continue
		}
		r := p.rank - 1
		p.dims[r], p.dims[r+1] = d/c, c
		for k := 0; k < p.nin; k++ {
			p.st[k][r+1] = p.st[k][r]
			p.st[k][r] *= c
		}
		p.rank++
		return
	}
}

// cursor walks the runs of a plan: off[k] is operand k's element offset of the run's start.
type cursor struct {
	p   *bplan
	idx [maxRank]int
	off [3]int
}

// cursorAt returns a cursor at run index run (runs in row-major order of the outer dims).
func cursorAt(p *bplan, run int) cursor {
	c := cursor{p: p}
	for d := p.rank - 2; d >= 0 && run > 0; d-- {
		c.idx[d] = run % p.dims[d]
		run /= p.dims[d]
		for k := 0; k < p.nin; k++ {
			c.off[k] += c.idx[d] * p.st[k][d]
		}
	}
	return c
}

// next advances to the following run; false after the last one.
func (c *cursor) next() bool {
	p := c.p
	for d := p.rank - 2; d >= 0; d-- {
		c.idx[d]++
		for k := 0; k < p.nin; k++ {
			c.off[k] += p.st[k][d]
		}
		if c.idx[d] < p.dims[d] {
			return true
		}
		for k := 0; k < p.nin; k++ {
			c.off[k] -= p.st[k][d] * p.dims[d]
		}
		c.idx[d] = 0
	}
	return false
}
