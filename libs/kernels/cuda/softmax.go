package cuda

import "carve.dev/libs/kernels"

// selectSoftmax is Softmax and LogSoftmax along one axis (opset >= 13) or over the flattened
// trailing dims from axis on (opset < 13): a block per row when the axis is innermost, a thread
// per column otherwise.
func selectSoftmax(log bool) func(n *kernels.Node, t kernels.Target) (plan, error) {
	return func(n *kernels.Node, t kernels.Target) (plan, error) {
		g, err := kernels.CheckSoftmax(n)
		if err != nil {
			return plan{}, err
		}
		x := n.Inputs[0]
		outer, dim, inner := g.Outer, g.Dim, g.Inner
		if outer*dim*inner == 0 {
			return plan{tactic: "direct"}, nil
		}
		name := dtName(x.DType)
		if inner == 1 {
			cached, shared := cachedRow(dim, t)
			st := step{kernel: "carve_softmax_" + name, grid: rowsGrid(outer, t), block: rowBlock(dim, 1), shared: shared,
				params: []param{outp(0), inp(0), i64p(outer), i64p(dim), i32p(boolInt(log)), i32p(boolInt(cached))}}
			return plan{tactic: "direct", prog: program{st}}, nil
		}
		st := step{kernel: "carve_softmax_cols_" + name, grid: grid1(outer*inner, 1, t), block: block1,
			params: []param{outp(0), inp(0), i64p(outer), i64p(dim), i64p(inner), i32p(boolInt(log))}}
		return plan{tactic: "direct", prog: program{st}}, nil
	}
}

func softmaxOps() []*op {
	return []*op{directOp("", "Softmax", selectSoftmax(false)), directOp("", "LogSoftmax", selectSoftmax(true))}
}
