package graph

import "slices"

// Collectives: carve's ops that exchange a tensor among the ranks of a tensor-parallel split
// (carve.dev/libs/graph/shard makes them; a backend's kernels reach the communicator the
// attribute group names).
//
//   - AllReduce(x) = the elementwise sum of x over the ranks, on every rank: x's type and shape.
//     Attributes group (the communicator's name), rank, ranks; reduce "sum" (the only one).
//   - AllGather(x) = the ranks' x concatenated along axis, in rank order, on every rank: x's
//     type, and x's shape with that dim times ranks. Attributes group, rank, ranks, axis.
//
// Both take float32, float16 or bfloat16 tensors; rank must lie in [0, ranks).

// CollectiveOps are the collective ops of DomainCarve.
var CollectiveOps = []string{"AllReduce", "AllGather"}

func inferCollective(c *ictx) error {
	x := c.in(0)
	switch x.DType {
	case Float32, Float16, BFloat16:
	default:
		return c.errf("%s needs a float32, float16 or bfloat16 tensor, has %s", c.n.OpType, x.DType)
	}
	a := c.n.Attrs
	ranks, rank := a.Int("ranks", 0), a.Int("rank", -1)
	if ranks < 1 || rank < 0 || rank >= ranks {
		return c.errf("%s: rank %d of %d ranks", c.n.OpType, rank, ranks)
	}
	if a.String("group", "") == "" {
		return c.errf("%s names no communicator (attribute group)", c.n.OpType)
	}
	shape := slices.Clone(x.Shape)
	switch c.n.OpType {
	case "AllReduce":
		if r := a.String("reduce", "sum"); r != "sum" {
			return c.errf("AllReduce: reduce %q, want sum", r)
		}
	case "AllGather":
		axis := a.Int("axis", 0)
		if axis < 0 {
			axis += int64(len(shape))
		}
		if axis < 0 || axis >= int64(len(shape)) {
			return c.errf("AllGather: axis %d of a rank-%d tensor", a.Int("axis", 0), len(shape))
		}
		shape[axis] = shape[axis].Mul(Const(ranks))
	}
	c.out(0, x.DType, shape)
	return nil
}
