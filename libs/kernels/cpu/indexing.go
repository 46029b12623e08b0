package cpu

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// gather is Gather: out[outer, idx..., inner] = data[outer, indices[idx...], inner].
type gather struct {
	outer, axisDim, nidx, inner int // inner in bytes
}

func selectGather(n *kernels.Node, d kernels.Target) (plan, error) {
	axis, err := kernels.CheckGather(n)
	if err != nil {
		return plan{}, err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	return plan{tactic: "direct", r: &gather{
		outer: numel(data.Shape[:axis]), axisDim: int(data.Shape[axis]), nidx: numel(idx.Shape),
		inner: numel(data.Shape[axis+1:]) * int(data.DType.Size()),
	}}, nil
}

// index reads index i and resolves a negative one; ok is false when out of [-dim, dim).
func index(t kernels.Tensor, i, dim int) (int, bool) {
	var v int64
	if t.DType == graph.Int32 {
		v = int64(t.Int32s()[i])
	} else {
		v = t.Int64s()[i]
	}
	if v < 0 {
		v += int64(dim)
	}
	return int(v), v >= 0 && v < int64(dim)
}

func (g *gather) run(in, out []kernels.Tensor, _ wsParts) error {
	idx := in[1]
	for i := 0; i < g.nidx; i++ {
		if _, ok := index(idx, i, g.axisDim); !ok {
			return fmt.Errorf("index %d out of range for dim %d", loadI64(idx, i), g.axisDim)
		}
	}
	x, z := in[0].Data, out[0].Data
	pos := 0
	for o := 0; o < g.outer; o++ {
		base := o * g.axisDim * g.inner
		for i := 0; i < g.nidx; i++ {
			j, _ := index(idx, i, g.axisDim)
			copy(z[pos:pos+g.inner], x[base+j*g.inner:])
			pos += g.inner
		}
	}
	return nil
}

// gatherElements is GatherElements, and carve's GatherElements(data, indices, shape) whose
// indices broadcast to the output's shape: at each output position the output takes the data
// element whose axis coordinate is the index read at that position (the indices' coordinate 0
// where they broadcast).
type gatherElements struct {
	axis       int
	data, out  []int64 // shapes
	nidx       int     // elements of the indices tensor
	es         int
	dataStride []int
	// idxStride are the indices' element strides per output dim: 0 where they broadcast, the
	// dense strides of the output's shape for ONNX's GatherElements
	idxStride []int
	workers   int
}

// selectGatherElements is ONNX's GatherElements and carve's GatherElements(data, indices,
// shape) (ONNX's of the indices expanded to shape, the indices read where they broadcast
// instead): kernels.CheckGatherElements gives the axis and the output's shape, the indices
// broadcast to it.
func selectGatherElements(n *kernels.Node, d kernels.Target) (plan, error) {
	axis, out, err := kernels.CheckGatherElements(n)
	if err != nil {
		return plan{}, err
	}
	return newGatherElements(n, d, axis, out)
}

// newGatherElements plans a GatherElements whose output has shape out, the indices n.Inputs[1]
// broadcast to it.
func newGatherElements(n *kernels.Node, d kernels.Target, axis int, out []int64) (plan, error) {
	data, idx := n.Inputs[0], n.Inputs[1]
	if len(data.Shape) > 16 {
		return plan{}, fmt.Errorf("rank %d is more than 16", len(data.Shape))
	}
	g := &gatherElements{workers: d.Workers, axis: axis, data: data.Shape, out: out, nidx: numel(idx.Shape),
		es: int(data.DType.Size()), dataStride: stridesOf(data.Shape), idxStride: make([]int, len(out))}
	st, lead := stridesOf(idx.Shape), len(out)-len(idx.Shape)
	for i := lead; i < len(out); i++ {
		if idx.Shape[i-lead] != 1 || out[i] == 1 {
			g.idxStride[i] = st[i-lead]
		}
	}
	return plan{tactic: "direct", r: g}, nil
}

func (g *gatherElements) run(in, out []kernels.Tensor, _ wsParts) error {
	total := numel(g.out)
	dim := int(g.data[g.axis])
	idx := in[1]
	if g.rowsContiguous() && (g.es == 4 || g.es == 8 && idx.DType == graph.Int64) {
		// the output agrees with the data off the axis and each outer index reads one dense
		// block of indices: (outer, axis, inner) loops, over the outer index in parallel, each
		// part checking its indices
		outer, ai, inner := numel(g.out[:g.axis]), int(g.out[g.axis]), numel(g.out[g.axis+1:])
		if !forItems(gatherElemsRows, g, in, out, [4]int{ai, dim, inner}, outer, ai*inner, g.workers) {
			return gatherElemsRange(idx, g.nidx, dim)
		}
		return nil
	}
	if err := gatherElemsRange(idx, g.nidx, dim); err != nil {
		return err
	}
	var pos [16]int
	r := len(g.out)
	x, z, es := in[0].Data, out[0].Data, g.es
	for i := 0; i < total; i++ {
		io := 0
		for d := 0; d < r; d++ {
			io += pos[d] * g.idxStride[d]
		}
		j, _ := index(in[1], io, dim)
		off := 0
		for d := 0; d < r; d++ {
			c := pos[d]
			if d == g.axis {
				c = j
			}
			off += c * g.dataStride[d]
		}
		copy(z[i*es:(i+1)*es], x[off*es:])
		for d := r - 1; d >= 0; d-- {
			pos[d]++
			if pos[d] < int(g.out[d]) {
				break
			}
			pos[d] = 0
		}
	}
	return nil
}

// rowsContiguous reports whether the output has the data's shape off the axis and the indices
// are dense from the axis on, so that each outer index reads one block of out[axis:] indices.
func (g *gatherElements) rowsContiguous() bool {
	s := 1
	for d := len(g.out) - 1; d >= 0; d-- {
		if d != g.axis && g.out[d] != g.data[d] {
			return false
		}
		if d >= g.axis {
			if g.idxStride[d] != s && g.out[d] != 1 {
				return false
			}
			s *= int(g.out[d])
		}
	}
	return true
}

// idxRow is the offset in the indices of the block that outer index o reads (rowsContiguous).
func (g *gatherElements) idxRow(o int) int {
	off := 0
	for d := g.axis - 1; d >= 0 && o > 0; d-- {
		n := int(g.out[d])
		off += (o % n) * g.idxStride[d]
		o /= n
	}
	return off
}

// gatherElemsRange returns an error naming the first of the total indices out of range for
// dim, if any.
func gatherElemsRange(idx kernels.Tensor, total, dim int) error {
	if idx.DType == graph.Int64 {
		for _, v := range idx.Int64s()[:total] {
			if v < -int64(dim) || v >= int64(dim) {
				return fmt.Errorf("index %d out of range for dim %d", v, dim)
			}
		}
	} else {
		for _, v := range idx.Int32s()[:total] {
			if int(v) < -dim || int(v) >= dim {
				return fmt.Errorf("index %d out of range for dim %d", v, dim)
			}
		}
	}
	return nil
}

// gatherElemsRows gathers outer indices [lo, hi) of a GatherElements whose rows are contiguous
// (n holds the output's axis length, the data's and the inner size), failing the body on an
// index out of range.
func gatherElemsRows(b *itemsBody, lo, hi int) {
	g, idx := b.k.(*gatherElements), b.in[1]
	ai, dim, inner := b.n[0], b.n[1], b.n[2]
	ok := false
	switch {
	case g.es == 4 && idx.DType == graph.Int64:
		ok = gatherElemsDense(g, kernels.ViewAs[uint32](b.in[0].Data), kernels.ViewAs[uint32](b.out[0].Data), idx.Int64s(), lo, hi, ai, dim, inner)
	case g.es == 4:
		ok = gatherElemsDense(g, kernels.ViewAs[uint32](b.in[0].Data), kernels.ViewAs[uint32](b.out[0].Data), idx.Int32s(), lo, hi, ai, dim, inner)
	default:
		ok = gatherElemsDense(g, kernels.ViewAs[uint64](b.in[0].Data), kernels.ViewAs[uint64](b.out[0].Data), idx.Int64s(), lo, hi, ai, dim, inner)
	}
	if !ok {
		b.failed.Store(true)
	}
}

// gatherElemsDense is GatherElements with rows contiguous: z[o, a, i] = x[o, idx[row(o), a, i], i],
// the indices checked.
func gatherElemsDense[E any, I int32 | int64](g *gatherElements, x, z []E, idx []I, lo, hi, ai, dim, inner int) bool {
	for o := lo; o < hi; o++ {
		xo := x[o*dim*inner : (o+1)*dim*inner]
		io := g.idxRow(o)
		if inner == 1 { // gathering along the last axis: one row of indices into one data row
			zr, ir := z[o*ai:(o+1)*ai], idx[io:io+ai]
			for i, j := range ir {
				jj := int(j)
				if jj < 0 {
					jj += dim
				}
				if uint(jj) >= uint(dim) {
					return false
				}
				zr[i] = xo[jj]
			}
			continue
		}
		for a := 0; a < ai; a++ {
			zr, ir := z[(o*ai+a)*inner:(o*ai+a+1)*inner], idx[io+a*inner:io+(a+1)*inner]
			for i, j := range ir {
				jj := int(j)
				if jj < 0 {
					jj += dim
				}
				if uint(jj) >= uint(dim) {
					return false
				}
				zr[i] = xo[jj*inner+i]
			}
		}
	}
	return true
}

// gatherND is GatherND with batch_dims: each index tuple of length m selects a slab of
// data[batch..., i1..im, rest...].
type gatherND struct {
	batch, tuples, m int // batch count, tuples per batch, tuple length
	dims             []int64
	dataBatch        int // elements of data per batch
	slab             int // bytes per selected slab
	es               int
	bd               int
}

func selectGatherND(n *kernels.Node, d kernels.Target) (plan, error) {
	b, m, err := kernels.CheckGatherND(n)
	if err != nil {
		return plan{}, err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	q := len(idx.Shape)
	es := int(data.DType.Size())
	g := &gatherND{
		batch: numel(data.Shape[:b]), tuples: numel(idx.Shape[b : q-1]), m: m, dims: data.Shape, bd: b,
		dataBatch: numel(data.Shape[b:]), slab: numel(data.Shape[b+m:]) * es, es: es,
	}
	return plan{tactic: "direct", r: g}, nil
}

// offset resolves tuple t of batch bi to a data element offset within the batch.
func (g *gatherND) offset(idx kernels.Tensor, t int) (int, error) {
	off := 0
	for k := 0; k < g.m; k++ {
		dim := int(g.dims[g.bd+k])
		j, ok := index(idx, t*g.m+k, dim)
		if !ok {
			return 0, fmt.Errorf("index %d out of range for dim %d", loadI64(idx, t*g.m+k), dim)
		}
		off = off*dim + j
	}
	return off * (g.slab / g.es), nil
}

func (g *gatherND) run(in, out []kernels.Tensor, _ wsParts) error {
	nt := g.batch * g.tuples
	for t := 0; t < nt; t++ {
		if _, err := g.offset(in[1], t); err != nil {
			return err
		}
	}
	x, z := in[0].Data, out[0].Data
	for t := 0; t < nt; t++ {
		off, _ := g.offset(in[1], t)
		src := ((t/g.tuples)*g.dataBatch)*g.es + off*g.es
		copy(z[t*g.slab:(t+1)*g.slab], x[src:src+g.slab])
	}
	return nil
}

// scatterND is ScatterND: out = data, then out[indices[t]] = updates[t] (or reduced into it).
type scatterND struct {
	gather    gatherND // the index geometry is GatherND's with batch_dims 0
	reduction string
	dt        graph.DType
}

func selectScatterND(n *kernels.Node, d kernels.Target) (plan, error) {
	m, red, err := kernels.CheckScatterND(n)
	if err != nil {
		return plan{}, err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	q := len(idx.Shape)
	if red != "none" && data.DType != graph.Float32 && data.DType != graph.Int64 && data.DType != graph.Int32 && data.DType != graph.Float64 {
		return plan{}, fmt.Errorf("reduction %q on %v is not supported", red, data.DType)
	}
	es := int(data.DType.Size())
	s := &scatterND{reduction: red, dt: data.DType, gather: gatherND{
		batch: 1, tuples: numel(idx.Shape[:q-1]), m: m, dims: data.Shape,
		dataBatch: numel(data.Shape), slab: numel(data.Shape[m:]) * es, es: es,
	}}
	return plan{tactic: "direct", r: s}, nil
}

func (s *scatterND) run(in, out []kernels.Tensor, _ wsParts) error {
	g := &s.gather
	for t := 0; t < g.tuples; t++ {
		if _, err := g.offset(in[1], t); err != nil {
			return err
		}
	}
	if !sameMemory(in[0].Data, out[0].Data) {
		copy(out[0].Data, in[0].Data[:len(out[0].Data)])
	}
	z, u := out[0], in[2]
	per := g.slab / g.es
	for t := 0; t < g.tuples; t++ {
		off, _ := g.offset(in[1], t)
		if s.reduction == "none" {
			copy(z.Data[off*g.es:off*g.es+g.slab], u.Data[t*g.slab:(t+1)*g.slab])
			continue
		}
		for i := 0; i < per; i++ {
			a, b := loadF64(z, off+i), loadF64(u, t*per+i)
			var r float64
			switch s.reduction {
			case "add":
				r = a + b
			case "mul":
				r = a * b
			case "max":
				r = max(a, b)
			case "min":
				r = min(a, b)
			}
			storeF64(z, off+i, r)
		}
	}
	return nil
}

func indexingOps() []*op {
	mk := func(name string, sel func(*kernels.Node, kernels.Target) (plan, error)) *op {
		return &op{key: kernels.Key("", name), tactics: direct, sel: sel}
	}
	return []*op{
		mk("Gather", selectGather), mk("GatherElements", selectGatherElements),
		mk("GatherND", selectGatherND), mk("ScatterND", selectScatterND),
		{key: kernels.Key(kernels.DomainCarve, "GatherElements"), tactics: direct, sel: selectGatherElements},
	}
}
