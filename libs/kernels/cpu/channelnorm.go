package cpu

import (
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The normalizations over channels of [N, C, ...] tensors, on float32, with the checks of
// kernels.CheckChannelNorm. One tactic, "direct", no workspace:
//
//   - BatchNormalization (inference form): y = (x - mean) / sqrt(var + epsilon) * scale + B per
//     channel, one multiply-add an element; parallel over (image, channel) planes.
//     training_mode 1 and the training outputs are refused.
//   - InstanceNormalization: each (image, channel) plane normalized by its own mean and
//     (biased) variance, then scaled and shifted per channel.
//   - GroupNormalization: each (image, group) normalized over its channels and spatial dims,
//     then scaled and shifted per channel (opset 21) or per group (opset 18).
//
// Statistics accumulate in float64, as the reference does in double precision for the sums.
type channelNorm struct {
	op       string
	eps      float64
	n, c     int
	groups   int // groups of channels with one statistic (C for InstanceNormalization)
	perGroup bool
	spatial  int
	workers  int
}

func channelNormOps() []*op {
	return []*op{
		{key: kernels.Key("", "BatchNormalization"), tactics: direct, sel: selectChannelNorm},
		{key: kernels.Key("", "InstanceNormalization"), tactics: direct, sel: selectChannelNorm},
		{key: kernels.Key("", "GroupNormalization"), tactics: direct, sel: selectChannelNorm},
	}
}

func selectChannelNorm(n *kernels.Node, d kernels.Target) (plan, error) {
	groups, err := kernels.CheckChannelNorm(n)
	if err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	if x.DType != graph.Float32 {
		return plan{}, fmt.Errorf("input is %v: the CPU %s computes float32 only", x.DType, n.Op)
	}
	for i := 1; i < len(n.Inputs); i++ {
		if n.Inputs[i].DType != graph.Float32 {
			return plan{}, fmt.Errorf("input %d is %v: the CPU %s computes float32 only", i, n.Inputs[i].DType, n.Op)
		}
	}
	cn := &channelNorm{op: n.Op, eps: float64(n.Attrs.Float("epsilon", 1e-5)), n: int(x.Shape[0]), c: int(x.Shape[1]),
		groups: int(groups), spatial: numel(x.Shape[2:]), workers: d.Workers}
	cn.perGroup = n.Op == "GroupNormalization" && n.Inputs[1].Shape[0] != x.Shape[1]
	return plan{tactic: "direct", r: cn}, nil
}

func (cn *channelNorm) run(in, out []kernels.Tensor, _ wsParts) error {
	// items: (image, group) pairs, each covering C/groups planes
	per := cn.c / max(cn.groups, 1) * cn.spatial
	runRanges(cn, in, out, cn.n*cn.groups, per, weightRow, cn.workers)
	return nil
}

// runRange normalizes (image, group) items [lo, hi).
func (cn *channelNorm) runRange(in, out []kernels.Tensor, lo, hi int) {
	x, y := in[0].Float32s(), out[0].Float32s()
	scale, bias := in[1].Float32s(), in[2].Float32s()
	cpg := cn.c / cn.groups
	for it := lo; it < hi; it++ {
		img, grp := it/cn.groups, it%cn.groups
		base := (img*cn.c + grp*cpg) * cn.spatial
		xs, ys := x[base:base+cpg*cn.spatial], y[base:base+cpg*cn.spatial]
		if cn.op == "BatchNormalization" {
			mean, vr := in[3].Float32s(), in[4].Float32s()
			c := grp
			a := float32(float64(scale[c]) / math.Sqrt(float64(vr[c])+cn.eps))
			m, b := mean[c], bias[c]
			for i, v := range xs {
				ys[i] = (v-m)*a + b
			}
			continue
		}
		var s, ss float64
		for _, v := range xs {
			s += float64(v)
		}
		mu := s / float64(max(len(xs), 1))
		for _, v := range xs {
			dv := float64(v) - mu
			ss += dv * dv
		}
		inv := 1 / math.Sqrt(ss/float64(max(len(xs), 1))+cn.eps)
		for ci := range cpg {
			c := grp*cpg + ci
			pc := c
			if cn.perGroup {
				pc = grp
			}
			a := float32(float64(scale[pc]) * inv)
			m, b := float32(mu), bias[pc]
			row, yr := xs[ci*cn.spatial:(ci+1)*cn.spatial], ys[ci*cn.spatial:(ci+1)*cn.spatial]
			for i, v := range row {
				yr[i] = (v-m)*a + b
			}
		}
	}
}
