package cpu

import (
	"fmt"
	"slices"
	"unsafe"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/collective"
)

// collectiveOp is carve's AllReduce and AllGather (graph.DomainCarve) over the in-process group
// the attribute group names (package collective): every rank of a tensor-parallel split runs
// one, each on its own device, and the call is their rendezvous. AllReduce sums the ranks'
// tensors in rank order (float32 accumulation, one rounding for 16-bit types), so every rank
// gets the same bytes; AllGather concatenates them along axis. The output must not overlap the
// input (the ranks read each other's inputs while each writes its output).
//
// Tactic "direct": no workspace. A device backend's kernel (NCCL) has the same Select and
// attributes and may declare workspace: an all-gather along an axis other than the first
// lands in a workspace of ranks x the input before it is permuted into the output.
type collectiveOp struct {
	group       string
	rank, ranks int
	dt          graph.DType
	gather      bool
	outer       int // AllGather: the blocks of the input before axis
}

func selectCollective(n *kernels.Node, _ kernels.Target) (plan, error) {
	if err := kernels.CheckArity(n, 1, 1, 1, 1); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	if !halfOK(x.DType) {
		return plan{}, fmt.Errorf("X is %v; want one of float32, float16, bfloat16", x.DType)
	}
	c := &collectiveOp{group: n.Attrs.String("group", ""), rank: int(n.Attrs.Int("rank", -1)), ranks: int(n.Attrs.Int("ranks", 0)),
		dt: x.DType, gather: n.Op == "AllGather", outer: 1}
	if c.group == "" || c.ranks < 1 || c.rank < 0 || c.rank >= c.ranks {
		return plan{}, fmt.Errorf("group %q, rank %d of %d: want a group and 0 <= rank < ranks", c.group, c.rank, c.ranks)
	}
	shape := slices.Clone(x.Shape)
	if c.gather {
		axis := n.Attrs.Int("axis", 0)
		if axis < 0 {
			axis += int64(len(shape))
		}
		if axis < 0 || axis >= int64(len(shape)) {
			return plan{}, fmt.Errorf("axis %d of a rank-%d tensor", n.Attrs.Int("axis", 0), len(shape))
		}
		for _, d := range shape[:axis] {
			c.outer *= int(d)
		}
		shape[axis] *= int64(c.ranks)
	}
	if err := kernels.CheckOutput(n, 0, x.DType, shape); err != nil {
		return plan{}, err
	}
	return plan{tactic: "direct", r: c}, nil
}

func (c *collectiveOp) run(in, out []kernels.Tensor, _ wsParts) error {
	x, y := in[0].Data, out[0].Data
	if overlap(x, y) {
		return fmt.Errorf("the output overlaps the input")
	}
	g, err := collective.Lookup(c.group)
	if err != nil {
		return err
	}
	if g.Ranks() != c.ranks {
		return fmt.Errorf("group %q has %d ranks, the node %d", c.group, g.Ranks(), c.ranks)
	}
	if c.gather {
		return g.Exchange(c.rank, x, func(posted [][]byte) error { return c.gatherInto(posted, y) })
	}
	return g.Exchange(c.rank, x, func(posted [][]byte) error { return c.sumInto(posted, y) })
}

func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

func (c *collectiveOp) check(posted [][]byte, n int) error {
	for r, p := range posted {
		if len(p) != n {
			return fmt.Errorf("group %q: rank %d sends %d bytes, rank %d %d", c.group, r, len(p), c.rank, n)
		}
	}
	return nil
}

// sumInto sets y to the sum of the ranks' tensors, in rank order.
func (c *collectiveOp) sumInto(posted [][]byte, y []byte) error {
	if err := c.check(posted, len(y)); err != nil {
		return err
	}
	if c.dt == graph.Float32 {
		out := kernels.ViewAs[float32](y)
		copy(out, kernels.ViewAs[float32](posted[0]))
		for _, p := range posted[1:] {
			for i, v := range kernels.ViewAs[float32](p)[:len(out)] {
				out[i] += v
			}
		}
		return nil
	}
	bf := c.dt == graph.BFloat16
	out := kernels.ViewAs[uint16](y)
	for i := range out {
		var acc float32
		for _, p := range posted {
			acc += ld(kernels.ViewAs[uint16](p)[i], bf)
		}
		out[i] = st[uint16](acc, bf)
	}
	return nil
}

// gatherInto sets y to the ranks' tensors concatenated along the axis: for each of the outer
// blocks, the ranks' blocks in rank order.
func (c *collectiveOp) gatherInto(posted [][]byte, y []byte) error {
	if err := c.check(posted, len(y)/c.ranks); err != nil {
		return err
	}
	inner := len(y) / c.ranks / c.outer
	for o := range c.outer {
		for r, p := range posted {
			copy(y[(o*c.ranks+r)*inner:][:inner], p[o*inner:][:inner])
		}
	}
	return nil
}

func collectiveOps() []*op {
	return []*op{
		{key: kernels.Key(kernels.DomainCarve, "AllReduce"), sel: selectCollective, tactics: []kernels.TacticInfo{{Name: "direct",
			Summary: "a rendezvous of the ranks in process (package collective): their tensors summed in rank order, no workspace"}}},
		{key: kernels.Key(kernels.DomainCarve, "AllGather"), sel: selectCollective, tactics: []kernels.TacticInfo{{Name: "direct",
			Summary: "a rendezvous of the ranks in process (package collective): their tensors concatenated along the axis, no workspace"}}},
	}
}
