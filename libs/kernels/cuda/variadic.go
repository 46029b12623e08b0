package cuda

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// selectVariadic is Max, Min, Sum and Mean over one or more broadcast operands: the first two are
// combined into the output and every further operand is folded into it in place; Mean then
// scales by 1/n.
func selectVariadic(op ewOp, mean bool) func(n *kernels.Node, t kernels.Target) (plan, error) {
	return func(n *kernels.Node, t kernels.Target) (plan, error) {
		shape, err := kernels.CheckVariadic(n)
		if err != nil {
			return plan{}, err
		}
		dt := n.Inputs[0].DType
		if !isFloat(dt) && !isInt(dt) {
			return plan{}, errDType("the inputs' type", dt, "float32, float16, bfloat16, int64 or int32")
		}
		shapes := make([][]int64, len(n.Inputs))
		for i, v := range n.Inputs {
			shapes[i] = v.Shape
		}
		var prog program
		if len(shapes) == 1 {
			st, err := broadcastStrides(shape, shapes[0])
			if err != nil {
				return plan{}, err
			}
			l, err := newLayout(shape, st, stridesOf(shape))
			if err != nil {
				return plan{}, err
			}
			steps, err := copySteps(l, dt.Size(), inp(0), outp(0), t)
			if err != nil {
				return plan{}, err
			}
			prog = append(prog, steps...)
		} else {
			steps, err := ewSteps(dt, op, graph.Undefined, shape, outp(0), operand{inp(0), shapes[0]}, operand{inp(1), shapes[1]}, absent(), 0, 0, t)
			if err != nil {
				return plan{}, err
			}
			prog = append(prog, steps...)
			for k := 2; k < len(shapes); k++ {
				steps, err := ewSteps(dt, op, graph.Undefined, shape, outp(0), operand{outp(0), shape}, operand{inp(k), shapes[k]}, absent(), 0, 0, t)
				if err != nil {
					return plan{}, err
				}
				prog = append(prog, steps...)
			}
		}
		if mean {
			steps, err := ewSteps(dt, ewScale, graph.Undefined, shape, outp(0), operand{outp(0), shape}, absent(), absent(), float32(1/float64(len(shapes))), 0, t)
			if err != nil {
				return plan{}, err
			}
			prog = append(prog, steps...)
		}
		return plan{tactic: "direct", prog: prog}, nil
	}
}

// selectPow is Pow(X, Y): X float or integer, Y float or integer, broadcast.
func selectPow(n *kernels.Node, t kernels.Target) (plan, error) {
	shape, err := kernels.CheckPow(n)
	if err != nil {
		return plan{}, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if !isFloat(a.DType) && !isInt(a.DType) || !isFloat(b.DType) && !isInt(b.DType) {
		return plan{}, errDType(fmt.Sprintf("Pow of %v by", a.DType), b.DType, "float32, float16, bfloat16, int64 or int32 operands")
	}
	bdt := graph.Undefined
	if b.DType != a.DType {
		bdt = b.DType
	}
	steps, err := ewSteps(a.DType, ewPow, bdt, shape, outp(0), operand{inp(0), a.Shape}, operand{inp(1), b.Shape}, absent(), 0, 0, t)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: "direct", prog: steps}, nil
}

// selectWhere is Where(cond, X, Y) with three-way broadcasting, moving elements by size.
func selectWhere(n *kernels.Node, t kernels.Target) (plan, error) {
	shape, err := kernels.CheckWhere(n)
	if err != nil {
		return plan{}, err
	}
	c, x, y := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	es := x.DType.Size()
	if es != 1 && es != 2 && es != 4 && es != 8 {
		return plan{}, errDType("the branches' type", x.DType, "a type of 1, 2, 4 or 8 bytes")
	}
	l, err := broadcastLayout(shape, c.Shape, x.Shape, y.Shape)
	if err != nil {
		return plan{}, err
	}
	total := numel(shape)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	ps := append([]param{outp(0), inp(0), inp(1), inp(2), i64p(total)}, l.params()...)
	st := step{kernel: fmt.Sprintf("carve_where_%d", es), grid: grid1(total, 1, t), block: block1, params: ps}
	if ve := 16 / es; l.rank > 0 && l.dims[l.rank-1]%ve == 0 {
		if contig, ok := innerContig(l); ok {
			base := st
			rows := append([]param{outp(0), inp(0), inp(1), inp(2), i64p(total), i32p(contig)}, l.params()...)
			st = step{kernel: fmt.Sprintf("carve_where_rows_%d", es), grid: grid1(total, ve, t), block: block1, params: rows,
				align: 16, alignOnly: []int{0, 2, 3}, fallback: &base}
		}
	}
	return plan{tactic: "direct", prog: program{st}}, nil
}

// innerContig reports whether every operand of l is contiguous (stride 1) or broadcast (stride
// 0) along the innermost dim, and which are contiguous: bit k for operand k.
func innerContig(l layout) (contig int, ok bool) {
	if l.rank == 0 {
		return 0, false
	}
	for k := range 3 {
		switch l.st[k][l.rank-1] {
		case 1:
			contig |= 1 << k
		case 0:
		default:
			return 0, false
		}
	}
	return contig, true
}

func variadicOps() []*op {
	return []*op{
		directOp("", "Max", selectVariadic(ewMax, false)), directOp("", "Min", selectVariadic(ewMin, false)),
		directOp("", "Sum", selectVariadic(ewAdd, false)), directOp("", "Mean", selectVariadic(ewAdd, true)),
		directOp("", "Pow", selectPow), directOp("", "Where", selectWhere),
	}
}
