package cpu

import (
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/vec"
)

// biasAct is com.microsoft BiasGelu (erf GELU of A + B) and FastGelu (tanh GELU of X + bias,
// bias optional); the bias is broadcast over the last dim.
type biasAct struct {
	op      unOp
	dt      graph.DType
	bf      bool
	h       int
	bias    bool
	workers int
}

func selectBiasAct(o unOp) func(n *kernels.Node, d kernels.Target) (plan, error) {
	return func(n *kernels.Node, d kernels.Target) (plan, error) {
		h, bias, err := kernels.CheckBiasAct(n)
		if err != nil {
			return plan{}, err
		}
		dt := n.Inputs[0].DType
		return plan{tactic: "direct", r: &biasAct{op: o, dt: dt, bf: dt == graph.BFloat16, h: int(h), bias: bias, workers: d.Workers}}, nil
	}
}

func (a *biasAct) run(in, out []kernels.Tensor, _ wsParts) error {
	if a.dt == graph.Float32 {
		n := numel(in[0].Shape)
		runRanges(a, in, out, n/max(a.h, 1), a.h, weightTranscendental, a.workers)
	} else {
		biasActRun[uint16](a, in, out)
	}
	return nil
}

// runRange computes float32 rows [lo, hi): the bias added in the output, then the activation
// in place.
func (a *biasAct) runRange(in, out []kernels.Tensor, lo, hi int) {
	x, y := in[0].Float32s()[lo*a.h:hi*a.h], out[0].Float32s()[lo*a.h:hi*a.h]
	if a.bias {
		b := in[1].Float32s()[:a.h]
		for r := 0; r < len(x); r += a.h {
			vec.VV(vec.Add, y[r:r+a.h], x[r:r+a.h], b)
		}
		x = y
	}
	unaryF32(a.op, y, x, 0)
}

func biasActRun[E elt](a *biasAct, in, out []kernels.Tensor) {
	x, y := kernels.ViewAs[E](in[0].Data), kernels.ViewAs[E](out[0].Data)
	var b []E
	if a.bias {
		b = kernels.ViewAs[E](in[1].Data)
	}
	n := numel(in[0].Shape)
	for i := 0; i < n; i++ {
		v := ld(x[i], a.bf)
		if b != nil {
			v += ld(b[i%a.h], a.bf)
		}
		y[i] = st[E](float32(unaryF(a.op, float64(v), 0, 0)), a.bf)
	}
}

func geluOps() []*op {
	ms := kernels.DomainMicrosoft
	return []*op{
		{key: kernels.Key(ms, "BiasGelu"), tactics: direct, sel: selectBiasAct(uGelu)},
		{key: kernels.Key(ms, "FastGelu"), tactics: direct, sel: selectBiasAct(uGeluTanh)},
		{key: kernels.Key(ms, "BiasAdd"), tactics: direct, sel: selectBiasAdd},
	}
}

// biasAdd is com.microsoft.BiasAdd: Y = X + bias + skip, X and skip [B, S, C], bias [C].
type biasAdd struct {
	dt graph.DType
	bf bool
	c  int
}

func selectBiasAdd(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckBiasAdd(n); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	return plan{tactic: "direct", r: &biasAdd{dt: x.DType, bf: x.DType == graph.BFloat16, c: int(x.Shape[2])}}, nil
}

func (a *biasAdd) run(in, out []kernels.Tensor, _ wsParts) error {
	if a.dt == graph.Float32 {
		biasAddRun[float32](a, in, out)
	} else {
		biasAddRun[uint16](a, in, out)
	}
	return nil
}

func biasAddRun[E elt](a *biasAdd, in, out []kernels.Tensor) {
	x, b, s, y := kernels.ViewAs[E](in[0].Data), kernels.ViewAs[E](in[1].Data), kernels.ViewAs[E](in[2].Data), kernels.ViewAs[E](out[0].Data)
	n := numel(in[0].Shape)
	for i := 0; i < n; i++ {
		y[i] = st[E](ld(x[i], a.bf)+ld(b[i%a.c], a.bf)+ld(s[i], a.bf), a.bf)
	}
}
