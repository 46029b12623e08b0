package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The normalizations over channels of [N, C, ...] tensors, on float32, float16 and bfloat16,
// with the checks of kernels.CheckChannelNorm and the CPU kernels' semantics
// (libs/kernels/cpu/channelnorm.go); statistics accumulate in float32 (csrc/channelnorm.cu):
//
//   - BatchNormalization (inference form): one elementwise launch, carve_batch_norm_*; its
//     parameters may each be X's type or float32.
//   - InstanceNormalization and GroupNormalization: each (image, group) item, C/num_groups
//     channels of the spatial elements (num_groups C for InstanceNormalization), normalized by
//     its mean and biased variance, then scaled and shifted per channel, or per group where the
//     scale has num_groups elements (GroupNormalization before opset 21). Tactic "direct": one
//     block an item (carve_group_norm_*), no workspace. Tactic "split", when there are fewer
//     items than multiprocessors and an item spans several chunks of chnormChunkMin elements:
//     each item's chunks are reduced by blocks of their own (carve_chnorm_part_*, two floats a
//     chunk in the "partials" part), then every chunk normalized by its item's combined
//     statistics (carve_chnorm_apply_*), so a GroupNormalization of 32 groups fills the GPU.

// flags of carve_group_norm_* and carve_chnorm_apply_* (csrc/channelnorm.cu)
const (
	cnPerGroup = 1
	cnCached   = 2
)

// The split tactic's geometry: chunks of at least chnormChunkMin elements (a multiple of
// chnormChunkAlign), at most about chnormWaves blocks a multiprocessor over all items.
const (
	chnormChunkMin   = 8192
	chnormChunkAlign = 256
	chnormWaves      = 2
	chnormPart       = "partials"
)

func channelNormOps() []*op {
	tac := []kernels.TacticInfo{
		{Name: "direct", Summary: "one block per (image, group) item, the item in shared memory when it fits, no workspace"},
		{Name: "split", Summary: "fewer items than multiprocessors: chunks of each item reduced by their own blocks, two floats a chunk of workspace", Workspace: true},
	}
	return []*op{
		{key: kernels.Key("", "BatchNormalization"), tactics: direct, sel: selectBatchNorm},
		{key: kernels.Key("", "InstanceNormalization"), tactics: tac, sel: selectGroupNorm, bound: boundGroupNorm},
		{key: kernels.Key("", "GroupNormalization"), tactics: tac, sel: selectGroupNorm, bound: boundGroupNorm},
	}
}

func selectBatchNorm(n *kernels.Node, t kernels.Target) (plan, error) {
	if _, err := kernels.CheckChannelNorm(n); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	if !isFloat(x.DType) {
		return plan{}, errDType("the input", x.DType, "float32, float16 or bfloat16")
	}
	pf32 := 0
	for i := 1; i <= 4; i++ {
		if n.Inputs[i].DType == graph.Float32 {
			pf32 |= 1 << (i - 1)
		}
	}
	total := numel(x.Shape)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	c := x.Shape[1]
	st := step{kernel: "carve_batch_norm_" + dtName(x.DType), grid: grid1(total, 16/x.DType.Size(), t), block: block1,
		params: []param{outp(0), inp(0), inp(1), inp(2), inp(3), inp(4), i64p(total), i64p(c), i64p(total / (x.Shape[0] * c)),
			f32p(n.Attrs.Float("epsilon", 1e-5)), i32p(pf32)}}
	return plan{tactic: "direct", prog: program{st}}, nil
}

// groupNormItems is the (image, group) items of an InstanceNormalization or GroupNormalization
// over x's shape, and each item's elements.
func groupNormItems(op string, attrs graph.Attributes, shape []int64) (items, groups, cpg, spatial int64) {
	c := shape[1]
	groups = c
	if op == "GroupNormalization" {
		groups = max(attrs.Int("num_groups", 1), 1)
	}
	spatial = numel(shape[2:])
	return shape[0] * groups, groups, c / groups, spatial
}

// chnormSplit is the split tactic's chunk size and count for items of length len on t; ok is
// false where the direct tactic is taken: enough items to fill the multiprocessors, or items of
// one chunk. Every chunk holds at least one element, and items * chunks < 3 * SMs.
func chnormSplit(items, length int64, t kernels.Target) (chunk, chunks int64, ok bool) {
	sms := int64(t.SMs)
	if items >= sms || length <= chnormChunkMin {
		return 0, 0, false
	}
	chunks = min((length+chnormChunkMin-1)/chnormChunkMin, (chnormWaves*sms+items-1)/items)
	chunk = ((length+chunks-1)/chunks + chnormChunkAlign - 1) / chnormChunkAlign * chnormChunkAlign
	return chunk, (length + chunk - 1) / chunk, true
}

// chnormPartsCap bounds the partials of any node on t: items * chunks < items * (2 SMs / items
// + 1) <= 3 SMs, two floats each.
func chnormPartsCap(t kernels.Target) int64 { return 3 * int64(t.SMs) * 2 * 4 }

func selectGroupNorm(n *kernels.Node, t kernels.Target) (plan, error) {
	if _, err := kernels.CheckChannelNorm(n); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	dt := x.DType
	if !isFloat(dt) {
		return plan{}, errDType("the input", dt, "float32, float16 or bfloat16")
	}
	items, groups, cpg, spatial := groupNormItems(n.Op, n.Attrs, x.Shape)
	length := cpg * spatial
	// the kernels index an item in int, a thread's last vector 1024 * 8 elements past its end
	if !fits32(length+1<<14, groups, cpg, spatial) {
		return plan{}, fmt.Errorf("items of %d elements: the CUDA kernels take fewer than 2^31", length)
	}
	if items*length == 0 {
		return plan{tactic: "direct"}, nil
	}
	flags := 0
	if n.Inputs[1].Shape[0] != x.Shape[1] {
		flags |= cnPerGroup
	}
	eps := f32p(n.Attrs.Float("epsilon", 1e-5))
	name := dtName(dt)
	vec := 16 / dt.Size()
	if chunk, chunks, ok := chnormSplit(items, length, t); ok {
		grid := Dim3{X: uint32(chunks), Y: uint32(items), Z: 1}
		block := rowBlock(chunk, vec)
		parts := []alloc.Part{{Name: chnormPart, Size: items * chunks * 2 * 4}}
		prog := program{
			{kernel: "carve_chnorm_part_" + name, grid: grid, block: block,
				params: []param{wsp(0), inp(0), i32p(int(cpg)), i32p(int(spatial)), i32p(int(chunk)), i32p(int(chunks))}},
			{kernel: "carve_chnorm_apply_" + name, grid: grid, block: block,
				params: []param{outp(0), inp(0), wsp(0), inp(1), inp(2), i32p(int(groups)), i32p(int(cpg)), i32p(int(spatial)),
					i32p(int(chunk)), i32p(int(chunks)), eps, i32p(flags)}},
		}
		return plan{tactic: "split", parts: parts, prog: prog}, nil
	}
	cached, shared := cachedRow(length, t)
	if cached {
		flags |= cnCached
	}
	st := step{kernel: "carve_group_norm_" + name, grid: rowsGrid(items, t), block: rowBlock(length, vec), shared: shared,
		params: []param{outp(0), inp(0), inp(1), inp(2), i64p(items), i32p(int(groups)), i32p(int(cpg)), i32p(int(spatial)), eps, i32p(flags)}}
	return plan{tactic: "direct", prog: program{st}}, nil
}

// boundGroupNorm is W over r: the partials' cap on t when some shape in r may take the split
// tactic (fewer items than multiprocessors at the range's low end, items longer than a chunk at
// its high end), else nothing.
func boundGroupNorm(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	x, ok := r.Input(0)
	if !ok || len(x.Dims) < 2 {
		return kernels.Bound{}, fmt.Errorf("input is %v, want rank 2 or more [N, C, ...]", x)
	}
	shape := func(hi bool) []int64 {
		s := make([]int64, len(x.Dims))
		for i, d := range x.Dims {
			s[i] = pick(d, hi)
		}
		return s
	}
	itemsLo, _, _, _ := groupNormItems(r.Op, r.Attrs, shape(false))
	_, _, cpg, spatial := groupNormItems(r.Op, r.Attrs, shape(true))
	if itemsLo >= int64(t.SMs) || cpg*spatial <= chnormChunkMin {
		return kernels.Bound{}, nil
	}
	return recipeBound("split", []alloc.Part{{Name: chnormPart, Size: chnormPartsCap(t)}})
}
