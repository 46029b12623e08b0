// Command vitgen writes a ViT-B/16-shaped ONNX model with random weights, for benchmarking the
// CPU backend against onnxruntime (tools/ortbench) without downloading or exporting a model.
//
//	go run ./tools/ortbench/vitgen -out /tmp/vit_b_16.onnx          # ViT-B/16: 86.6M parameters
//	go run ./tools/ortbench/vitgen -out tiny.onnx -size 32 -patch 8 -layers 2 -hidden 32 -heads 4 -mlp 64
//
// The graph is torchvision's vit_b_16 (VisionTransformer: image 224, patch 16, 12 layers,
// hidden 768, 12 heads, MLP 3072, 1000 classes) in the form torch.onnx.export (dynamo, opset
// 20) writes it with nn.MultiheadAttention's fast path off, as the zoo's vit_tv export
// (tools/zoo/make_zoo_vision.py) is: the patch Conv 16x16/16, Reshape and Transpose to
// [batch, 196, 768], the class token Expanded and Concatenated, the position embedding Added;
// per layer LayerNormalization (epsilon 1e-6), the sequence-first attention (Transpose to
// [197, batch, 768], the packed in-projection as MatMul and Add, q, k and v Gathered from it
// and reshaped into [batch, heads, 197, 64] through Transposes, k transposed through its
// Shape's Slices, q and k each scaled by head_dim^-1/4, MatMul, Softmax, MatMul), the out
// projection as Gemm (transB), back to batch-first and the residual Add; LayerNormalization,
// the MLP (MatMul and Add, exact Gelu, MatMul and Add) and its residual Add; a final
// LayerNormalization, the class token Gathered and the head's Gemm. The input is float32 [batch,
// 3, size, size] named input; the output is float32 [batch, 1000] named output.
//
// Weights are random and seeded, of torchvision's initialization where it is not zero (the
// patch projection N(0, 1/fan_in), the position embedding N(0, 0.02), Xavier-uniform
// projections); the class token, the LayerNormalizations, the biases and the head (which
// torchvision zeroes, so that every logit would be its bias) are random too, so that outputs
// compare something. The protobuf is encoded by hand (onnxenc), as in gpt2gen and resnetgen.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"carve.dev/tools/ortbench/internal/onnxenc"
)

func main() {
	out := flag.String("out", "", "output .onnx `file`")
	size := flag.Int("size", 224, "input height and width")
	patch := flag.Int("patch", 16, "patch size (the patch convolution's kernel and stride)")
	layers := flag.Int("layers", 12, "encoder layers")
	hidden := flag.Int("hidden", 768, "hidden size")
	heads := flag.Int("heads", 12, "attention heads")
	mlp := flag.Int("mlp", 3072, "MLP hidden size")
	classes := flag.Int("classes", 1000, "classifier outputs")
	seed := flag.Uint64("seed", 1, "random seed of the weights")
	flag.Parse()
	if *out == "" || *patch < 1 || *size < *patch || *size%*patch != 0 || *heads < 1 || *hidden%*heads != 0 || *layers < 1 || *mlp < 1 || *classes < 1 {
		fmt.Fprintln(os.Stderr, "vitgen: want -out FILE, size a multiple of patch, hidden a multiple of heads, layers >= 1")
		flag.Usage()
		os.Exit(2)
	}
	g := &builder{rng: rand.New(rand.NewPCG(*seed, 2))}
	g.vit(vitShape{size: *size, patch: *patch, layers: *layers, hidden: *hidden, heads: *heads, mlp: *mlp, classes: *classes})
	if err := onnxenc.WriteFile(*out, g.Model("vit_b_16", "carve vitgen", 20)); err != nil {
		fmt.Fprintln(os.Stderr, "vitgen:", err)
		os.Exit(1)
	}
}

// ---------------------------------------------------------------- graph building

type builder struct {
	rng *rand.Rand
	onnxenc.Graph
}

var (
	ai = onnxenc.IntAttr
	af = onnxenc.FloatAttr
	as = onnxenc.IntsAttr
)

// normal is n draws of N(mean, std).
func (g *builder) normal(n int, mean, std float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(mean + std*g.rng.NormFloat64())
	}
	return v
}

// xavier is a fanIn x fanOut matrix of Xavier-uniform draws.
func (g *builder) xavier(fanIn, fanOut int) []float32 {
	a := math.Sqrt(6 / float64(fanIn+fanOut))
	v := make([]float32, fanIn*fanOut)
	for i := range v {
		v[i] = float32(a * (2*g.rng.Float64() - 1))
	}
	return v
}

// int64Scalar is an int64 initializer of shape [].
func (g *builder) int64Scalar(name string, v int64) string {
	return g.Init(name, onnxenc.TInt64, nil, binary.LittleEndian.AppendUint64(nil, uint64(v)))
}

type vitShape struct {
	size, patch, layers, hidden, heads, mlp, classes int
}

func (g *builder) vit(s vitShape) {
	H, nh := int64(s.hidden), int64(s.heads)
	D := H / nh
	grid := int64(s.size / s.patch)
	S := grid*grid + 1 // the patches and the class token
	g.Inputs = append(g.Inputs, onnxenc.ValueInfo("input", onnxenc.TFloat, "batch", 3, s.size, s.size))
	g.Outputs = append(g.Outputs, onnxenc.ValueInfo("output", onnxenc.TFloat, "batch", s.classes))

	// constants, shared by the layers as the exporter shares them
	batch := g.Op1("Shape", []string{"input"}, ai("start", 0), ai("end", 1))
	one1, zero1 := g.Ints("one_1", 1), g.Ints("zero_1", 0)
	minus2 := g.Ints("minus2_1", -2)
	minus1, maxInt, minInt := g.Ints("minus1_1", -1), g.Ints("int64_max", math.MaxInt64), g.Ints("int64_min", math.MinInt64)
	sel := []string{g.int64Scalar("idx0", 0), g.int64Scalar("idx1", 1), g.int64Scalar("idx2", 2)}
	patches := g.Ints("patches_shape", -1, H, grid*grid)
	qkv5 := g.Ints("qkv_shape", S, -1, 3, H)
	seqHeads := g.Ints("seq_heads_shape", S, -1, D)
	bhsd := g.Ints("bhsd_shape", -1, nh, S, D)
	rows := g.Ints("rows_shape", -1, H)
	seqFirst := g.Ints("seq_first_shape", S, -1, H)
	scale := g.Floats("qk_scale", []int64{1}, []float32{float32(math.Pow(float64(D), -0.25))})

	// patch embedding and class token
	fan := 3 * s.patch * s.patch
	w := g.Floats("conv_proj.weight", []int64{H, 3, int64(s.patch), int64(s.patch)}, g.normal(s.hidden*fan, 0, math.Sqrt(1/float64(fan))))
	b := g.Floats("conv_proj.bias", []int64{H}, g.normal(s.hidden, 0, 0.02))
	p := int64(s.patch)
	x := g.Op1("Conv", []string{"input", w, b}, as("kernel_shape", p, p), as("strides", p, p), as("pads", 0, 0, 0, 0), as("dilations", 1, 1), ai("group", 1))
	x = g.Op1("Transpose", []string{g.Op1("Reshape", []string{x, patches}, ai("allowzero", 1))}, as("perm", 0, 2, 1))
	cls := g.Floats("class_token", []int64{1, 1, H}, g.normal(s.hidden, 0, 0.02))
	cls = g.Op1("Expand", []string{cls, g.Op1("Concat", []string{batch, one1, one1}, ai("axis", 0))})
	x = g.Op1("Concat", []string{cls, x}, ai("axis", 1))
	x = g.Op1("Add", []string{x, g.Floats("encoder.pos_embedding", []int64{1, S, H}, g.normal(int(S)*s.hidden, 0, 0.02))})

	layerNorm := func(name, x string) string {
		return g.Op1("LayerNormalization", []string{x, g.Floats(name+".weight", []int64{H}, g.normal(s.hidden, 1, 0.1)),
			g.Floats(name+".bias", []int64{H}, g.normal(s.hidden, 0, 0.02))}, ai("axis", -1), af("epsilon", 1e-6), ai("stash_type", 1))
	}
	for l := range s.layers {
		name := fmt.Sprintf("encoder.layers.encoder_layer_%d", l)
		// self-attention, sequence-first as nn.MultiheadAttention computes it
		y := g.Op1("Transpose", []string{layerNorm(name+".ln_1", x)}, as("perm", 1, 0, 2))
		y = g.Op1("MatMul", []string{y, g.Floats(name+".self_attention.in_proj_weight_t", []int64{H, 3 * H}, g.xavier(s.hidden, 3*s.hidden))})
		y = g.Op1("Add", []string{y, g.Floats(name+".self_attention.in_proj_bias", []int64{3 * H}, g.normal(3*s.hidden, 0, 0.02))})
		y = g.Op1("Reshape", []string{y, qkv5}, ai("allowzero", 1))
		y = g.Op1("Unsqueeze", []string{y, zero1})
		y = g.Op1("Transpose", []string{y}, as("perm", 3, 1, 2, 0, 4))
		y = g.Op1("Squeeze", []string{y, minus2})
		var qkv [3]string
		for i := range qkv {
			t := g.Op1("Gather", []string{y, sel[i]}, ai("axis", 0))
			t = g.Op1("Transpose", []string{g.Op1("Reshape", []string{t, seqHeads}, ai("allowzero", 1))}, as("perm", 1, 0, 2))
			qkv[i] = g.Op1("Reshape", []string{t, bhsd}, ai("allowzero", 1))
		}
		// k^T through its shape, as the exporter writes scaled_dot_product_attention
		shape := g.Op1("Shape", []string{qkv[1]}, ai("start", 0))
		last := g.Op1("Slice", []string{shape, minus1, maxInt})
		prev := g.Op1("Slice", []string{shape, minus2, minus1})
		lead := g.Op1("Slice", []string{shape, minInt, minus2})
		k := g.Op1("Reshape", []string{qkv[1], g.Op1("Concat", []string{minus1, prev, last}, ai("axis", 0))}, ai("allowzero", 0))
		k = g.Op1("Transpose", []string{k}, as("perm", 0, 2, 1))
		k = g.Op1("Reshape", []string{k, g.Op1("Concat", []string{lead, last, prev}, ai("axis", 0))}, ai("allowzero", 0))
		q := g.Op1("Mul", []string{qkv[0], scale})
		k = g.Op1("Mul", []string{k, scale})
		a := g.Op1("MatMul", []string{g.Op1("Softmax", []string{g.Op1("MatMul", []string{q, k})}, ai("axis", -1)), qkv[2]})
		a = g.Op1("Reshape", []string{g.Op1("Transpose", []string{a}, as("perm", 2, 0, 1, 3)), rows}, ai("allowzero", 1))
		a = g.Op1("Gemm", []string{a, g.Floats(name+".self_attention.out_proj.weight", []int64{H, H}, g.xavier(s.hidden, s.hidden)),
			g.Floats(name+".self_attention.out_proj.bias", []int64{H}, g.normal(s.hidden, 0, 0.02))}, af("alpha", 1), af("beta", 1), ai("transA", 0), ai("transB", 1))
		a = g.Op1("Transpose", []string{g.Op1("Reshape", []string{a, seqFirst}, ai("allowzero", 1))}, as("perm", 1, 0, 2))
		x = g.Op1("Add", []string{a, x})
		// MLP
		y = layerNorm(name+".ln_2", x)
		y = g.Op1("Add", []string{g.Op1("MatMul", []string{y, g.Floats(name+".mlp.0.weight_t", []int64{H, int64(s.mlp)}, g.xavier(s.hidden, s.mlp))}),
			g.Floats(name+".mlp.0.bias", []int64{int64(s.mlp)}, g.normal(s.mlp, 0, 0.02))})
		y = g.Op1("Gelu", []string{y}, onnxenc.StringAttr("approximate", "none"))
		y = g.Op1("Add", []string{g.Op1("MatMul", []string{y, g.Floats(name+".mlp.3.weight_t", []int64{int64(s.mlp), H}, g.xavier(s.mlp, s.hidden))}),
			g.Floats(name+".mlp.3.bias", []int64{H}, g.normal(s.hidden, 0, 0.02))})
		x = g.Op1("Add", []string{x, y})
	}
	x = g.Op1("Gather", []string{layerNorm("encoder.ln", x), sel[0]}, ai("axis", 1))
	hw := g.Floats("heads.head.weight", []int64{int64(s.classes), H}, g.normal(s.classes*s.hidden, 0, 1/math.Sqrt(float64(s.hidden))))
	hb := g.Floats("heads.head.bias", []int64{int64(s.classes)}, g.normal(s.classes, 0, 0.02))
	g.Op("Gemm", []string{x, hw, hb}, 0, af("alpha", 1), af("beta", 1), ai("transA", 0), ai("transB", 1))
	g.Nodes[len(g.Nodes)-1].Str(2, "output") // name the last node's output
}
