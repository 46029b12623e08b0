package cpu

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Clip (opset 11 and later): y = min(max(x, min), max) elementwise, with min and max optional
// scalar inputs (kernels.CheckClip) read at run time, so a model may compute them. It is
// onnxruntime's std::min(std::max(x, min), max): a NaN x stays NaN, a NaN bound clips nothing,
// and a min above the max gives the max (as numpy and PyTorch do). An absent bound clips
// nothing. Every numeric dtype, each in its own type: integers are never rounded through
// float64, and a 16-bit float's result is one of its operands, so it is exact too.
type clip struct {
	dt      graph.DType
	workers int
}

func clipOps() []*op {
	return []*op{{key: kernels.Key("", "Clip"), tactics: direct, sel: selectClip}}
}

func selectClip(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckClip(n); err != nil {
		return plan{}, err
	}
	if dt := n.Inputs[0].DType; !isNumeric(dt) {
		return plan{}, fmt.Errorf("input is %v, not supported", dt)
	}
	// In place: clipRange reads each element, then writes it; min and max are other inputs.
	return plan{tactic: "direct", r: &clip{dt: n.Inputs[0].DType, workers: d.Workers}, inPlace: kernels.ElementwiseInPlace(n, 0)}, nil
}

func (c *clip) run(in, out []kernels.Tensor, _ wsParts) error {
	n := numel(in[0].Shape)
	runRanges(c, in, out, (n+parGrainElems-1)/parGrainElems, parGrainElems, weightPlain, c.workers)
	return nil
}

// runRange clips chunks [lo, hi) of parGrainElems elements.
func (c *clip) runRange(in, out []kernels.Tensor, lo, hi int) {
	n := numel(in[0].Shape)
	i, j := lo*parGrainElems, min(hi*parGrainElems, n)
	switch c.dt {
	case graph.Float32:
		clipRange[float32](in, out, i, j)
	case graph.Float64:
		clipRange[float64](in, out, i, j)
	case graph.Int64:
		clipRange[int64](in, out, i, j)
	case graph.Int32:
		clipRange[int32](in, out, i, j)
	case graph.Int16:
		clipRange[int16](in, out, i, j)
	case graph.Int8:
		clipRange[int8](in, out, i, j)
	case graph.Uint64:
		clipRange[uint64](in, out, i, j)
	case graph.Uint32:
		clipRange[uint32](in, out, i, j)
	case graph.Uint16:
		clipRange[uint16](in, out, i, j)
	case graph.Uint8:
		clipRange[uint8](in, out, i, j)
	case graph.Float16, graph.BFloat16:
		load := f16
		if c.dt == graph.BFloat16 {
			load = bf16
		}
		x, z := in[0].Uint16s()[i:j], out[0].Uint16s()[i:j]
		bmin, bmax := clipBound[uint16](in, 1), clipBound[uint16](in, 2)
		var vmin, vmax float32
		if bmin != nil {
			vmin = load(*bmin)
		}
		if bmax != nil {
			vmax = load(*bmax)
		}
		for k, u := range x {
			v := load(u)
			if bmin != nil && v < vmin {
				v, u = vmin, *bmin
			}
			if bmax != nil && v > vmax {
				u = *bmax
			}
			z[k] = u // one of the operands' bits: nothing to round
		}
	}
}

// clipBound is bound input i's element, nil where the input is absent.
func clipBound[T number](in []kernels.Tensor, i int) *T {
	if i >= len(in) || in[i].Data == nil {
		return nil
	}
	return &kernels.ViewAs[T](in[i].Data)[0]
}

// clipRange clips elements [i, j) of a tensor of T.
func clipRange[T number](in, out []kernels.Tensor, i, j int) {
	x, z := kernels.ViewAs[T](in[0].Data)[i:j], kernels.ViewAs[T](out[0].Data)[i:j]
	bmin, bmax := clipBound[T](in, 1), clipBound[T](in, 2)
	switch {
	case bmin != nil && bmax != nil:
		lo, hi := *bmin, *bmax
		for k, v := range x {
			if v < lo {
				v = lo
			}
			if v > hi {
				v = hi
			}
			z[k] = v
		}
	case bmin != nil:
		lo := *bmin
		for k, v := range x {
			if v < lo {
				v = lo
			}
			z[k] = v
		}
	case bmax != nil:
		hi := *bmax
		for k, v := range x {
			if v > hi {
				v = hi
			}
			z[k] = v
		}
	default:
		copy(z, x)
	}
}
