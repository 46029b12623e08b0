package cpu

import (
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/vec"
)

// softmax is Softmax and LogSoftmax along one axis (opset >= 13), or over the flattened
// trailing dims from axis on (opset < 13, where axis defaults to 1). Rows are (outer, inner)
// pairs; each is normalized in float32 after subtracting its maximum.
type softmax struct {
	log               bool
	outer, dim, inner int
	dt                graph.DType
	bf                bool
	workers           int
}

func selectSoftmax(log bool) func(n *kernels.Node, d kernels.Target) (plan, error) {
	return func(n *kernels.Node, d kernels.Target) (plan, error) {
		g, err := kernels.CheckSoftmax(n)
		if err != nil {
			return plan{}, err
		}
		dt := n.Inputs[0].DType
		s := &softmax{log: log, dt: dt, bf: dt == graph.BFloat16, outer: int(g.Outer), dim: int(g.Dim), inner: int(g.Inner), workers: d.Workers}
		return plan{tactic: "direct", r: s}, nil
	}
}

func (s *softmax) run(in, out []kernels.Tensor, _ wsParts) error {
	runRanges(s, in, out, s.outer, s.dim*s.inner, weightTranscendental, s.workers)
	return nil
}

// runRange normalizes the rows of outer indices [lo, hi).
func (s *softmax) runRange(in, out []kernels.Tensor, lo, hi int) {
	n := s.dim * s.inner
	switch {
	case s.dt == graph.Float32 && s.inner == 1:
		softmaxF32(s, in[0].Float32s()[lo*n:hi*n], out[0].Float32s()[lo*n:hi*n])
	case s.dt == graph.Float32:
		softmaxRows(s, in[0].Float32s()[lo*n:hi*n], out[0].Float32s()[lo*n:hi*n])
	default:
		softmaxRows(s, in[0].Uint16s()[lo*n:hi*n], out[0].Uint16s()[lo*n:hi*n])
	}
}

// softmaxF32 is the contiguous float32 case: each row is max-shifted and exponentiated in
// place in float32 (package vec), then scaled by the sum's inverse (or, for LogSoftmax, the
// shifted row minus the log of the sum).
func softmaxF32(s *softmax, x, y []float32) {
	for o := 0; o < len(x)/max(s.dim, 1); o++ {
		src, dst := x[o*s.dim:(o+1)*s.dim], y[o*s.dim:(o+1)*s.dim]
		m := vec.Max(src)
		if s.log {
			var sum float32
			for _, v := range src {
				sum += vec.Exp32(v - m)
			}
			ls := float32(math.Log(float64(sum)))
			for k, v := range src {
				dst[k] = v - m - ls
			}
			continue
		}
		sum := vec.ExpShift(dst, src, m)
		vec.Scale(dst, 1/sum)
	}
}

// softmaxRows is the general case: strided rows and 16-bit floats, in float32.
func softmaxRows[E elt](s *softmax, x, y []E) {
	for o := 0; o < len(x)/max(s.dim*s.inner, 1); o++ {
		for i := 0; i < s.inner; i++ {
			base := o*s.dim*s.inner + i
			m := float32(math.Inf(-1))
			for k := 0; k < s.dim; k++ {
				m = max(m, ld(x[base+k*s.inner], s.bf))
			}
			var sum float32
			for k := 0; k < s.dim; k++ {
				sum += vec.Exp32(ld(x[base+k*s.inner], s.bf) - m)
			}
			ls, inv := float32(math.Log(float64(sum))), 1/sum
			for k := 0; k < s.dim; k++ {
				v := ld(x[base+k*s.inner], s.bf) - m
				if s.log {
					v -= ls
				} else {
					v = vec.Exp32(v) * inv
				}
				y[base+k*s.inner] = st[E](v, s.bf)
			}
		}
	}
}

func softmaxOps() []*op {
	return []*op{
		{key: kernels.Key("", "Softmax"), tactics: direct, sel: selectSoftmax(false)},
		{key: kernels.Key("", "LogSoftmax"), tactics: direct, sel: selectSoftmax(true)},
	}
}
