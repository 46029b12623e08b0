package cuda

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Data movement: every op here is one or a few strided copies (carve_copy_*, csrc/elementwise.cu)
// moving up to 16-byte units, except Slice, whose starts, ends, axes and steps are tensors read
// on the device (carve_slice_*, csrc/indexing.cu).

// denseCopy copies all of input i to output j (skipped when the output is a view of the input).
func denseCopy(in, out int, dt graph.DType, shape []int64, t kernels.Target) ([]step, error) {
	l, err := contiguous(numel(shape))
	if err != nil {
		return nil, err
	}
	steps, err := copySteps(l, dt.Size(), inp(in), outp(out), t)
	for i := range steps {
		steps[i].skipSame = [2]param{inp(in), outp(out)}
	}
	return steps, err
}

// fillSteps sets every element of output j (n elements of es bytes) to the value in bits.
func fillSteps(out param, n, es int64, bits int64, t kernels.Target) []step {
	if n == 0 {
		return nil
	}
	return []step{{kernel: fmt.Sprintf("carve_fill_%d", es), grid: grid1(n, 1, t), block: block1,
		params: []param{out, i64p(n), i64p(bits)}}}
}

// selectView is every op whose output holds the input's bytes unchanged: Reshape, Flatten,
// Squeeze, Unsqueeze, Identity, Dropout (inference; its mask output is filled with true). When
// the planner made the output a view of the input there is nothing to launch.
func selectView(minIn, maxIn int) func(n *kernels.Node, t kernels.Target) (plan, error) {
	return func(n *kernels.Node, t kernels.Target) (plan, error) {
		mask, err := kernels.CheckView(n, minIn, maxIn)
		if err != nil {
			return plan{}, err
		}
		in := n.Inputs[0]
		es := in.DType.Size()
		if es != 1 && es != 2 && es != 4 && es != 8 {
			return plan{}, errDType("the input", in.DType, "a type of 1, 2, 4 or 8 bytes")
		}
		prog, err := denseCopy(0, 0, in.DType, in.Shape, t)
		if err != nil {
			return plan{}, err
		}
		if mask {
			prog = append(prog, fillSteps(outp(1), numel(in.Shape), 1, 1, t)...)
		}
		return plan{tactic: "view", prog: prog}, nil
	}
}

func selectExpand(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckExpand(n); err != nil {
		return plan{}, err
	}
	in, out := n.Inputs[0], n.Outputs[0].Shape
	st, err := broadcastStrides(out, in.Shape)
	if err != nil {
		return plan{}, err
	}
	l, err := newLayout(out, st, stridesOf(out))
	if err != nil {
		return plan{}, err
	}
	steps, err := copySteps(l, in.DType.Size(), inp(0), outp(0), t)
	return plan{tactic: "direct", prog: steps}, err
}

func selectTranspose(n *kernels.Node, t kernels.Target) (plan, error) {
	perm, outShape, err := kernels.TransposePerm(n)
	if err != nil {
		return plan{}, err
	}
	in := n.Inputs[0]
	ist := stridesOf(in.Shape)
	st := make([]int64, len(perm))
	for i, p := range perm {
		st[i] = ist[p]
	}
	l, err := newLayout(outShape, st, stridesOf(outShape))
	if err != nil {
		return plan{}, err
	}
	steps, err := copySteps(l, in.DType.Size(), inp(0), outp(0), t)
	return plan{tactic: "direct", prog: steps}, err
}

// selectTile copies the input repeated along every dim. Output dim i splits into (repeat,
// input dim) with input strides (0, stride): Tile is an Expand over the interleaved shape. The
// repeats input must agree with the output shape, which the graph inferred from it.
func selectTile(n *kernels.Node, t kernels.Target) (plan, error) {
	reps, err := kernels.CheckTile(n)
	if err != nil {
		return plan{}, err
	}
	in := n.Inputs[0]
	var dims, src []int64
	ist := stridesOf(in.Shape)
	for i := range in.Shape {
		dims = append(dims, reps[i], in.Shape[i])
		src = append(src, 0, ist[i])
	}
	l, err := newLayout(dims, src, stridesOf(dims))
	if err != nil {
		return plan{}, err
	}
	steps, err := copySteps(l, in.DType.Size(), inp(0), outp(0), t)
	return plan{tactic: "direct", prog: steps}, err
}

// selectConcat copies each input into its slab of the output.
func selectConcat(n *kernels.Node, t kernels.Target) (plan, error) {
	axis, out, err := kernels.CheckConcat(n)
	if err != nil {
		return plan{}, err
	}
	first := n.Inputs[0]
	es := first.DType.Size()
	ost := stridesOf(out)
	var prog program
	pos := int64(0)
	for i, v := range n.Inputs {
		l, err := newLayout(v.Shape, stridesOf(v.Shape), ost)
		if err != nil {
			return plan{}, err
		}
		steps, err := copySteps(l, es, inp(i), outp(0).at(pos*ost[axis]*es), t)
		if err != nil {
			return plan{}, err
		}
		prog = append(prog, steps...)
		pos += v.Shape[axis]
	}
	return plan{tactic: "direct", prog: prog}, nil
}

// selectSplit copies each output's slab of the input; the split sizes are the outputs' shapes.
func selectSplit(n *kernels.Node, t kernels.Target) (plan, error) {
	axis, err := kernels.CheckSplit(n)
	if err != nil {
		return plan{}, err
	}
	in := n.Inputs[0]
	es := in.DType.Size()
	ist := stridesOf(in.Shape)
	var prog program
	var sum int64
	for i, v := range n.Outputs {
		l, err := newLayout(v.Shape, ist, stridesOf(v.Shape))
		if err != nil {
			return plan{}, err
		}
		steps, err := copySteps(l, es, inp(0).at(sum*ist[axis]*es), outp(i), t)
		if err != nil {
			return plan{}, err
		}
		prog = append(prog, steps...)
		sum += v.Shape[axis]
	}
	return plan{tactic: "direct", prog: prog}, nil
}

// selectSlice reads starts, ends, axes and steps on the device (they are tensors): the output's
// shape was inferred from them, so only each axis's first element and step are computed there.
func selectSlice(n *kernels.Node, t kernels.Target) (plan, error) {
	k, err := kernels.CheckSlice(n)
	if err != nil {
		return plan{}, err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	idxTypes := 0
	for i := 1; i < 5; i++ {
		if v, ok := n.Input(i); ok && v.DType == graph.Int64 {
			idxTypes |= 1 << (i - 1)
		}
	}
	r := len(in.Shape)
	if r > maxRank || k > int64(r) {
		return plan{}, fmt.Errorf("rank %d with %d sliced axes; the CUDA kernel takes rank <= %d", r, k, maxRank)
	}
	es := in.DType.Size()
	if es != 1 && es != 2 && es != 4 && es != 8 {
		return plan{}, errDType("the input", in.DType, "a type of 1, 2, 4 or 8 bytes")
	}
	ind, od, err := indexDims(in.Shape, out.Shape)
	if err != nil {
		return plan{}, err
	}
	total := numel(out.Shape)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	axes, steps := nullp(), nullp()
	if _, ok := n.Input(3); ok {
		axes = inp(3)
	}
	if _, ok := n.Input(4); ok {
		steps = inp(4)
	}
	st := step{kernel: fmt.Sprintf("carve_slice_%d", es), grid: grid1(total, 1, t), block: block1, params: []param{
		outp(0), inp(0), inp(1), axes, steps, i32p(int(k)), i32p(idxTypes), i32p(r),
		pack32(ind[0], ind[1]), pack32(ind[2], ind[3]), pack32(ind[4], ind[5]),
		pack32(od[0], od[1]), pack32(od[2], od[3]), pack32(od[4], od[5]), i64p(total),
	}}
	return plan{tactic: "direct", prog: program{st}}, nil
}

func movementOps() []*op {
	view := func(name string, minIn, maxIn int) *op {
		return &op{key: kernels.Key("", name), tactics: []kernels.TacticInfo{{Name: "view", Summary: "copies the input bytes unless the output aliases them"}}, sel: selectView(minIn, maxIn)}
	}
	mk := func(name string, sel func(*kernels.Node, kernels.Target) (plan, error)) *op {
		return &op{key: kernels.Key("", name), tactics: direct, sel: sel}
	}
	return []*op{
		view("Reshape", 2, 2), view("Flatten", 1, 1), view("Squeeze", 1, 2), view("Unsqueeze", 1, 2),
		view("Identity", 1, 1), view("Dropout", 1, 3),
		mk("Expand", selectExpand), mk("Transpose", selectTranspose), mk("Tile", selectTile),
		mk("Concat", selectConcat), mk("Split", selectSplit), mk("Slice", selectSlice),
	}
}
