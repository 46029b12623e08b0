package rewrite

import (
	"encoding/binary"
	"fmt"
	"math"

	"carve.dev/libs/graph"
)

// BatchNormalization(Conv(x, W, b), scale, B, mean, var) in inference mode becomes one Conv(x,
// W', b') with W'[o] = W[o] * s[o] and b'[o] = (b[o] - mean[o]) * s[o] + B[o], s = scale /
// sqrt(var + epsilon): per output channel o, the normalisation is an affine map of the
// convolution's output, and a convolution is linear in its weights. The batch-normalised
// output is never written and the normalisation never runs. The folded weights are new
// initializers; the exported ones are dropped when nothing else reads them (apply), so the
// weights do not grow.
//
// It folds only what it can compute exactly at load: float32 weights and statistics, all
// initializers or Constants, the Conv's output read by the BatchNormalization alone. Anything
// else (training mode, a ConvTranspose, whose weights are laid out [in, out/groups, ...], half
// precision) is left as exported, and the Report says why.

// convBatchNormCandidate: a BatchNormalization whose input a Conv makes.
func convBatchNormCandidate(n *graph.Node) bool {
	return is(n, "BatchNormalization") && len(n.Inputs) == 5 && from(n.Inputs[0], "Conv") != nil
}

// matchConvBatchNorm matches the BatchNormalization bn.
func matchConvBatchNorm(bn *graph.Node) (*match, string) {
	conv := bn.Inputs[0].Producer
	if bn.Attrs.Int("training_mode", 0) != 0 {
		return nil, "it is in training mode"
	}
	if len(bn.Outputs) > 1 && bn.Outputs[1] != nil {
		return nil, "it outputs running statistics"
	}
	if why := exclusive(conv.Outputs[0], bn, "the convolution's output"); why != "" {
		return nil, why
	}
	if len(conv.Inputs) < 2 {
		return nil, "the convolution has no weight input"
	}
	w, ok := constData(conv.Inputs[1])
	if !ok {
		return nil, fmt.Sprintf("the convolution's weight %s is not known at load", conv.Inputs[1].Name)
	}
	if w.DType != graph.Float32 || len(w.Shape) < 3 {
		return nil, fmt.Sprintf("the convolution's weight %s is %s%v, not a float32 kernel", conv.Inputs[1].Name, w.DType, w.Shape)
	}
	outC := w.Shape[0]
	stats := make([][]float32, 4) // scale, B, mean, var
	for i := range stats {
		v := bn.Inputs[1+i]
		t, ok := constData(v)
		if !ok {
			return nil, fmt.Sprintf("%s is not known at load", v.Name)
		}
		if stats[i], ok = float32s(t, outC); !ok {
			return nil, fmt.Sprintf("%s is %s%v, not %d float32 values, one per output channel", v.Name, t.DType, t.Shape, outC)
		}
	}
	bias := make([]float32, outC)
	if len(conv.Inputs) > 2 && conv.Inputs[2] != nil {
		t, ok := constData(conv.Inputs[2])
		if !ok {
			return nil, fmt.Sprintf("the convolution's bias %s is not known at load", conv.Inputs[2].Name)
		}
		if bias, ok = float32s(t, outC); !ok {
			return nil, fmt.Sprintf("the convolution's bias %s is %s%v", conv.Inputs[2].Name, t.DType, t.Shape)
		}
	}
	wv, _ := float32s(w, -1)
	eps := float64(bn.Attrs.Float("epsilon", 1e-5))
	per := int64(len(wv)) / outC
	fw := make([]byte, 0, 4*len(wv))
	fb := make([]byte, 0, 4*outC)
	for o := range outC {
		s := float64(stats[0][o]) / math.Sqrt(float64(stats[3][o])+eps)
		for _, x := range wv[o*per : (o+1)*per] {
			fw = binary.LittleEndian.AppendUint32(fw, math.Float32bits(float32(float64(x)*s)))
		}
		b := (float64(bias[o])-float64(stats[2][o]))*s + float64(stats[1][o])
		fb = binary.LittleEndian.AppendUint32(fb, math.Float32bits(float32(b)))
	}
	y := bn.Outputs[0]
	wt, err := graph.NewTensor(bn.Name+"/folded_weight", graph.Float32, w.Shape, fw)
	if err != nil {
		return nil, err.Error()
	}
	bt, err := graph.NewTensor(bn.Name+"/folded_bias", graph.Float32, []int64{outC}, fb)
	if err != nil {
		return nil, err.Error()
	}
	return &match{
		kind: ConvBatchNorm, root: bn, interior: []*graph.Node{conv, bn},
		add: []graph.NodeSpec{{Name: bn.Name + "/Conv", OpType: "Conv",
			Inputs: []string{conv.Inputs[0].Name, wt.Name, bt.Name}, Outputs: []string{y.Name}, Attrs: conv.Attrs}},
		inits:  []*graph.Tensor{wt, bt},
		detail: fmt.Sprintf("into %s, %d channels, epsilon %s", conv.Name, outC, f32(eps)),
	}, ""
}

// float32s reads t as float32 values: n of them (any shape holding n), or all when n < 0.
func float32s(t *graph.HostTensor, n int64) ([]float32, bool) {
	if t.DType != graph.Float32 || len(t.Data)%4 != 0 || n >= 0 && int64(len(t.Data)) != 4*n {
		return nil, false
	}
	out := make([]float32, len(t.Data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return out, true
}
