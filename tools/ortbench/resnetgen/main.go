// Command resnetgen writes a ResNet-50-shaped ONNX model with random weights, for benchmarking
// the CPU backend against onnxruntime (tools/ortbench) without downloading or exporting a model.
//
//	go run ./tools/ortbench/resnetgen -out /tmp/resnet50.onnx        # BatchNormalization folded
//	go run ./tools/ortbench/resnetgen -out /tmp/resnet50bn.onnx -bn  # BatchNormalization nodes kept
//
// The graph is torchvision's resnet50 (v1.5: the stride in the 3x3 convolution of a stage's
// first bottleneck) as torch.onnx.export leaves it in eval mode (opset 17): Conv 7x7/2, Relu,
// MaxPool 3x3/2, 16 bottleneck blocks in stages of [3, 4, 6, 3] (1x1, 3x3, 1x1 convolutions,
// a 1x1 downsample where the shape changes, the residual Add and Relu), GlobalAveragePool,
// Flatten and Gemm 2048 -> 1000 (transB). By default each convolution's BatchNormalization is
// folded into its weights and bias, as the exporter's constant folding does; with -bn the
// convolutions have no bias and BatchNormalization nodes follow them. Both forms compute the
// same function of the same seeded parameters: He-initialized convolutions and BatchNormalization
// with random scale, shift, mean and positive variance. The input is float32 [batch, 3, 224,
// 224] named input; the output is float32 [batch, 1000] named output.
//
// The protobuf is encoded by hand, as in gpt2gen, to keep the tool free of dependencies.
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"carve.dev/tools/ortbench/internal/onnxenc"
)

func main() {
	out := flag.String("out", "", "output .onnx `file`")
	bn := flag.Bool("bn", false, "keep BatchNormalization nodes instead of folding them into the convolutions")
	size := flag.Int("size", 224, "input height and width")
	seed := flag.Uint64("seed", 1, "random seed of the weights")
	flag.Parse()
	if *out == "" || *size < 32 {
		fmt.Fprintln(os.Stderr, "resnetgen: want -out FILE and -size >= 32")
		flag.Usage()
		os.Exit(2)
	}
	g := &builder{rng: rand.New(rand.NewPCG(*seed, 2)), bn: *bn}
	g.resnet50(*size)
	if err := onnxenc.WriteFile(*out, g.Model("resnet50", "carve resnetgen", 17)); err != nil {
		fmt.Fprintln(os.Stderr, "resnetgen:", err)
		os.Exit(1)
	}
}

// ---------------------------------------------------------------- graph building

type builder struct {
	rng *rand.Rand
	bn  bool // BatchNormalization nodes kept
	onnxenc.Graph
}

var (
	ai = onnxenc.IntAttr
	af = onnxenc.FloatAttr
	as = onnxenc.IntsAttr
)

// normal is n draws of N(0, std).
func (g *builder) normal(n int, std float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(std * g.rng.NormFloat64())
	}
	return v
}

// uniform is n draws of U(lo, hi).
func (g *builder) uniform(n int, lo, hi float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(lo + (hi-lo)*g.rng.Float64())
	}
	return v
}

const bnEps = 1e-5

// convBN adds a k x k convolution of cin to cout channels (stride s, padding k/2) and its
// BatchNormalization, folded or as a node (builder.bn), then Relu when relu is set. The
// weights are He-initialized; gamma scales the BatchNormalization's scale (a block's last one
// is damped, so that the residual stream does not grow by a factor per block).
func (g *builder) convBN(name, x string, cin, cout, k, s int, gamma float64, relu bool) string {
	w := g.normal(cout*cin*k*k, math.Sqrt(2/float64(cin*k*k)))
	scale := g.uniform(cout, 0.5*gamma, 1.5*gamma)
	shift := g.normal(cout, 0.1)
	mean := g.normal(cout, 0.1)
	variance := g.uniform(cout, 0.5, 1.5)
	wdims := []int64{int64(cout), int64(cin), int64(k), int64(k)}
	attrs := []onnxenc.Attr{as("kernel_shape", int64(k), int64(k)), as("strides", int64(s), int64(s)),
		as("pads", int64(k/2), int64(k/2), int64(k/2), int64(k/2)), as("dilations", 1, 1), ai("group", 1)}
	var y string
	if g.bn {
		y = g.Op1("Conv", []string{x, g.Floats(name+".weight", wdims, w)}, attrs...)
		c := []int64{int64(cout)}
		y = g.Op1("BatchNormalization", []string{y, g.Floats(name+".bn.weight", c, scale), g.Floats(name+".bn.bias", c, shift),
			g.Floats(name+".bn.running_mean", c, mean), g.Floats(name+".bn.running_var", c, variance)},
			af("epsilon", bnEps), af("momentum", 0.9))
	} else {
		// folded: w' = w * scale / sqrt(var + eps), b' = shift - mean * scale / sqrt(var + eps)
		b := make([]float32, cout)
		per := cin * k * k
		for o := range cout {
			f := float64(scale[o]) / math.Sqrt(float64(variance[o])+bnEps)
			for i := range per {
				w[o*per+i] = float32(float64(w[o*per+i]) * f)
			}
			b[o] = float32(float64(shift[o]) - float64(mean[o])*f)
		}
		y = g.Op1("Conv", []string{x, g.Floats(name+".weight", wdims, w), g.Floats(name+".bias", []int64{int64(cout)}, b)}, attrs...)
	}
	if relu {
		y = g.Op1("Relu", []string{y})
	}
	return y
}

// bottleneck is torchvision's Bottleneck (expansion 4) with the stride in its 3x3.
func (g *builder) bottleneck(name, x string, cin, width, stride int) string {
	cout := 4 * width
	y := g.convBN(name+".conv1", x, cin, width, 1, 1, 1, true)
	y = g.convBN(name+".conv2", y, width, width, 3, stride, 1, true)
	y = g.convBN(name+".conv3", y, width, cout, 1, 1, 0.3, false)
	id := x
	if stride != 1 || cin != cout {
		id = g.convBN(name+".downsample", x, cin, cout, 1, stride, 1, false)
	}
	return g.Op1("Relu", []string{g.Op1("Add", []string{y, id})})
}

func (g *builder) resnet50(size int) {
	g.Inputs = append(g.Inputs, onnxenc.ValueInfo("input", onnxenc.TFloat, "batch", 3, size, size))
	g.Outputs = append(g.Outputs, onnxenc.ValueInfo("output", onnxenc.TFloat, "batch", 1000))
	x := g.convBN("conv1", "input", 3, 64, 7, 2, 1, true)
	x = g.Op1("MaxPool", []string{x}, as("kernel_shape", 3, 3), as("strides", 2, 2), as("pads", 1, 1, 1, 1), as("dilations", 1, 1), ai("ceil_mode", 0))
	cin := 64
	for s, blocks := range []int{3, 4, 6, 3} {
		width := 64 << s
		for b := range blocks {
			stride := 1
			if b == 0 && s > 0 {
				stride = 2
			}
			x = g.bottleneck(fmt.Sprintf("layer%d.%d", s+1, b), x, cin, width, stride)
			cin = 4 * width
		}
	}
	x = g.Op1("Flatten", []string{g.Op1("GlobalAveragePool", []string{x})}, ai("axis", 1))
	w := g.Floats("fc.weight", []int64{1000, 2048}, g.uniform(1000*2048, -1/math.Sqrt(2048), 1/math.Sqrt(2048)))
	b := g.Floats("fc.bias", []int64{1000}, g.uniform(1000, -1/math.Sqrt(2048), 1/math.Sqrt(2048)))
	g.Op("Gemm", []string{x, w, b}, 0, af("alpha", 1), af("beta", 1), ai("transB", 1))
	g.Nodes[len(g.Nodes)-1].Str(2, "output") // name the last node's output
}
