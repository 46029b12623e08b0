package cuda

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Indexing ops read their indices on the device (csrc/indexing.cu). An index outside [-dim,
// dim) yields zeros (gathers) or skips the update (ScatterND) instead of the CPU kernels' error:
// a kernel cannot report an error without synchronizing.

func elemSize(dt graph.DType) (int64, error) {
	es := dt.Size()
	if es != 1 && es != 2 && es != 4 && es != 8 {
		return 0, errDType("the data", dt, "a type of 1, 2, 4 or 8 bytes")
	}
	return es, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// selectGather is Gather: out[outer, idx..., inner] = data[outer, indices[idx...], inner], moving
// the inner run in the widest unit (up to 16 bytes) its size allows.
func selectGather(n *kernels.Node, t kernels.Target) (plan, error) {
	axis, err := kernels.CheckGather(n)
	if err != nil {
		return plan{}, err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	es, err := elemSize(data.DType)
	if err != nil {
		return plan{}, err
	}
	outer, axisDim, nidx := numel(data.Shape[:axis]), data.Shape[axis], numel(idx.Shape)
	innerB := numel(data.Shape[axis+1:]) * es
	if outer*nidx*innerB == 0 {
		return plan{tactic: "direct"}, nil
	}
	mk := func(u int64) step {
		inner := innerB / u
		return step{kernel: fmt.Sprintf("carve_gather_%d", u), grid: grid1(outer*nidx*inner, 1, t), block: block1,
			params: []param{outp(0), inp(0), inp(1), i64p(outer), i64p(axisDim), i64p(nidx), i64p(inner), i32p(boolInt(idx.DType == graph.Int64))}}
	}
	base := mk(es)
	u := int64(16)
	for u > es && innerB%u != 0 {
		u /= 2
	}
	if u == es {
		return plan{tactic: "direct", prog: program{base}}, nil
	}
	st := mk(u)
	// the indices are read element by element: only the data pointers need the unit's alignment
	st.align, st.alignOnly, st.fallback = u, []int{0, 1}, &base
	return plan{tactic: "direct", prog: program{st}}, nil
}

// selectGatherElements is ONNX's GatherElements and carve's GatherElements(data, indices,
// shape) (ONNX's of the indices expanded to shape, the indices read where they broadcast
// instead): kernels.CheckGatherElements gives the axis and the output's shape, the indices
// broadcast to it.
func selectGatherElements(n *kernels.Node, t kernels.Target) (plan, error) {
	axis, out, err := kernels.CheckGatherElements(n)
	if err != nil {
		return plan{}, err
	}
	return planGatherElements(n, t, axis, out)
}

// planGatherElements launches carve_gather_elements_<E> for an output of shape out, the indices
// n.Inputs[1] broadcast to it.
func planGatherElements(n *kernels.Node, t kernels.Target, axis int, out []int64) (plan, error) {
	data, idx := n.Inputs[0], n.Inputs[1]
	r := len(data.Shape)
	if r > maxRank {
		return plan{}, fmt.Errorf("rank %d; the CUDA kernel takes rank <= %d", r, maxRank)
	}
	es, err := elemSize(data.DType)
	if err != nil {
		return plan{}, err
	}
	total := numel(out)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	var od, st, ist [maxRank]int64
	copy(od[:], out)
	copy(st[:], stridesOf(data.Shape))
	is, lead := stridesOf(idx.Shape), r-len(idx.Shape)
	for i := lead; i < r; i++ {
		if idx.Shape[i-lead] != 1 || out[i] == 1 {
			ist[i] = is[i-lead] // 0 where the indices broadcast
		}
	}
	if !fits32(od[:]...) {
		return plan{}, fmt.Errorf("output shape %v is too large for the CUDA kernel", out)
	}
	s := step{kernel: fmt.Sprintf("carve_gather_elements_%d", es), grid: grid1(total, 1, t), block: block1, params: []param{
		outp(0), inp(0), inp(1), i64p(total), i32p(r), i32p(axis), i32p(boolInt(idx.DType == graph.Int64)),
		pack32(od[0], od[1]), pack32(od[2], od[3]), pack32(od[4], od[5]),
		i64p(st[0]), i64p(st[1]), i64p(st[2]), i64p(st[3]), i64p(st[4]), i64p(st[5]), i64p(data.Shape[axis]),
		i64p(ist[0]), i64p(ist[1]), i64p(ist[2]), i64p(ist[3]), i64p(ist[4]), i64p(ist[5]),
	}}
	return plan{tactic: "direct", prog: program{s}}, nil
}

// ndGeom is the index geometry of GatherND and ScatterND.
type ndGeom struct {
	batch, tuples, m, dataBatch, slab int64 // slab in elements
	dims                              [maxRank]int64
}

func (g ndGeom) dimParams() []param {
	return []param{pack32(g.dims[0], g.dims[1]), pack32(g.dims[2], g.dims[3]), pack32(g.dims[4], g.dims[5])}
}

func selectGatherND(n *kernels.Node, t kernels.Target) (plan, error) {
	b, m, err := kernels.CheckGatherND(n)
	if err != nil {
		return plan{}, err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	q := len(idx.Shape)
	if m > maxRank {
		return plan{}, fmt.Errorf("index tuples of length %d; the CUDA kernel takes at most %d", m, maxRank)
	}
	es, err := elemSize(data.DType)
	if err != nil {
		return plan{}, err
	}
	g := ndGeom{batch: numel(data.Shape[:b]), tuples: numel(idx.Shape[b : q-1]), m: int64(m),
		dataBatch: numel(data.Shape[b:]), slab: numel(data.Shape[b+m:])}
	copy(g.dims[:], data.Shape[b:b+m])
	if !fits32(g.dims[:]...) {
		return plan{}, fmt.Errorf("data dims %v are too large for the CUDA kernel", data.Shape)
	}
	nt := g.batch * g.tuples
	if nt*g.slab == 0 {
		return plan{tactic: "direct"}, nil
	}
	s := step{kernel: fmt.Sprintf("carve_gather_nd_%d", es), grid: grid1(nt*g.slab, 1, t), block: block1,
		params: append([]param{outp(0), inp(0), inp(1), i64p(nt), i64p(g.tuples), i64p(g.dataBatch), i64p(g.slab),
			i32p(m), i32p(boolInt(idx.DType == graph.Int64))}, g.dimParams()...)}
	return plan{tactic: "direct", prog: program{s}}, nil
}

// selectScatterND copies data to the output (unless it is a view of it), then writes each update
// slab at its index tuple. Only reduction "none" is built for CUDA.
func selectScatterND(n *kernels.Node, t kernels.Target) (plan, error) {
	m, red, err := kernels.CheckScatterND(n)
	if err != nil {
		return plan{}, err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	q := len(idx.Shape)
	if m > maxRank {
		return plan{}, fmt.Errorf("index tuples of length %d; the CUDA kernel takes at most %d", m, maxRank)
	}
	if red != "none" {
		return plan{}, fmt.Errorf("reduction %q is not built for CUDA (only none)", red)
	}
	es, err := elemSize(data.DType)
	if err != nil {
		return plan{}, err
	}
	prog, err := denseCopy(0, 0, data.DType, data.Shape, t)
	if err != nil {
		return plan{}, err
	}
	g := ndGeom{tuples: numel(idx.Shape[:q-1]), m: int64(m), slab: numel(data.Shape[m:])}
	copy(g.dims[:], data.Shape[:m])
	if !fits32(g.dims[:]...) {
		return plan{}, fmt.Errorf("data dims %v are too large for the CUDA kernel", data.Shape)
	}
	if g.tuples*g.slab > 0 {
		prog = append(prog, step{kernel: fmt.Sprintf("carve_scatter_nd_%d", es), grid: grid1(g.tuples*g.slab, 1, t), block: block1,
			params: append([]param{outp(0), inp(1), inp(2), i64p(g.tuples), i64p(g.slab), i32p(m), i32p(boolInt(idx.DType == graph.Int64))}, g.dimParams()...)})
	}
	return plan{tactic: "direct", prog: prog}, nil
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
