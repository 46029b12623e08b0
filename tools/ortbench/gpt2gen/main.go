// Command gpt2gen writes a GPT-2-shaped ONNX model with random weights, for benchmarking the
// CPU backend against onnxruntime (tools/ortbench) without downloading or exporting a model.
//
//	go run ./tools/ortbench/gpt2gen -out /tmp/gpt2s.onnx            # GPT-2 small: 124M parameters
//	go run ./tools/ortbench/gpt2gen -out tiny.onnx -layers 2 -hidden 64 -heads 4 -vocab 256
//
// The graph is the one torch.onnx.export (dynamo) makes of transformers' GPT2LMHeadModel,
// written with plain ONNX ops (opset 18) in the same form: token and position embeddings, the
// residual stream as [batch*seq, hidden], per layer LayerNormalization, Conv1D layers as Gemm
// with bias (QKV fused), attention as MatMul / Softmax / MatMul over transposed heads with a
// causal and a padding mask, the tanh-GELU MLP and the residual adds, a final
// LayerNormalization, and the tied LM head as MatMul by Transpose(token embedding). Inputs
// input_ids and attention_mask are int64 [batch, seq]; the output logits is float32 [batch,
// seq, vocab]. Weights are N(0, 0.02), seeded, embedded in the file.
//
// The protobuf is encoded here by hand (a few dozen lines for the handful of messages used) to
// keep this tool free of dependencies; tools/ortbench/make_gpt2.py exports the real
// transformers model where torch is installed.
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
	layers := flag.Int("layers", 12, "transformer layers")
	hidden := flag.Int("hidden", 768, "hidden size")
	heads := flag.Int("heads", 12, "attention heads")
	vocab := flag.Int("vocab", 50257, "vocabulary size")
	positions := flag.Int("positions", 1024, "position table size")
	seed := flag.Uint64("seed", 1, "random seed of the weights")
	flag.Parse()
	if *out == "" || *hidden%*heads != 0 || *layers < 1 {
		fmt.Fprintln(os.Stderr, "gpt2gen: want -out FILE, layers >= 1 and hidden a multiple of heads")
		flag.Usage()
		os.Exit(2)
	}
	g := &builder{rng: rand.New(rand.NewPCG(*seed, 2))}
	g.gpt2(*layers, *hidden, *heads, *vocab, *positions)
	if err := onnxenc.WriteFile(*out, g.Model("gpt2", "carve gpt2gen", 18)); err != nil {
		fmt.Fprintln(os.Stderr, "gpt2gen:", err)
		os.Exit(1)
	}
}

// ---------------------------------------------------------------- graph building

type builder struct {
	rng *rand.Rand
	onnxenc.Graph
}

// weight adds an N(0, std) float32 initializer (or a constant when std is 0).
func (g *builder) weight(name string, std, mean float32, dims ...int64) string {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	raw := make([]byte, 4*n)
	for i := int64(0); i < n; i++ {
		v := mean
		if std != 0 {
			v += std * float32(g.rng.NormFloat64())
		}
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return g.Init(name, onnxenc.TFloat, dims, raw)
}

func (g *builder) scalar(name string, v float32) string {
	return g.Init(name, onnxenc.TFloat, nil, binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)))
}

func (g *builder) int64Scalar(name string, v int64) string {
	return g.Init(name, onnxenc.TInt64, nil, binary.LittleEndian.AppendUint64(nil, uint64(v)))
}

var (
	ai = onnxenc.IntAttr
	af = onnxenc.FloatAttr
	as = onnxenc.IntsAttr
)

func (g *builder) gpt2(layers, hidden, heads, vocab, positions int) {
	H, D := int64(hidden), int64(hidden/heads)
	g.Inputs = append(g.Inputs, onnxenc.ValueInfo("input_ids", onnxenc.TInt64, "batch", "seq"), onnxenc.ValueInfo("attention_mask", onnxenc.TInt64, "batch", "seq"))
	g.Outputs = append(g.Outputs, onnxenc.ValueInfo("logits", onnxenc.TFloat, "batch", "seq", vocab))
	wte := g.weight("wte", 0.02, 0, int64(vocab), H)
	wpe := g.weight("wpe", 0.01, 0, int64(positions), H)
	one, neg := g.scalar("one", 1), g.scalar("neg_big", -10000)
	// positions 0 .. seq-1
	bs := g.Op1("Shape", []string{"input_ids"})
	seqLen := g.Op1("Shape", []string{"input_ids"}, ai("start", 1), ai("end", 2))
	seq := g.Op1("Squeeze", []string{seqLen, g.Ints("axis0", 0)})
	pos := g.Op1("Range", []string{g.int64Scalar("zero_i", 0), seq, g.int64Scalar("one_i", 1)})
	h := g.Op1("Add", []string{g.Op1("Gather", []string{wte, "input_ids"}), g.Op1("Gather", []string{wpe, pos})})
	rows := g.Ints("rows_shape", -1, H)
	h = g.Op1("Reshape", []string{h, rows}) // the residual stream is [batch*seq, hidden], as exported
	// additive mask [batch, 1, seq, seq]: -10000 above the diagonal and on padded keys
	ones := g.Op1("ConstantOfShape", []string{g.Op1("Concat", []string{seqLen, seqLen}, ai("axis", 0))},
		onnxenc.Attr{Name: "value", Typ: onnxenc.AttrTensor, T: onnxenc.Tensor("", onnxenc.TFloat, []int64{1}, binary.LittleEndian.AppendUint32(nil, math.Float32bits(1)))})
	causal := g.Op1("Mul", []string{g.Op1("Trilu", []string{ones, g.int64Scalar("k1", 1)}, ai("upper", 1)), neg})
	pad := g.Op1("Unsqueeze", []string{g.Op1("Cast", []string{"attention_mask"}, ai("to", onnxenc.TFloat)), g.Ints("axes12", 1, 2)})
	bias := g.Op1("Add", []string{causal, g.Op1("Mul", []string{g.Op1("Sub", []string{one, pad}), neg})})
	heads4 := g.Op1("Concat", []string{bs, g.Ints("head_dims", int64(heads), D)}, ai("axis", 0))
	split := g.Ints("qkv_split", H, H, H)
	scale := g.scalar("scale", float32(1/math.Sqrt(float64(D))))
	half, c0, c1 := g.scalar("half", 0.5), g.scalar("gelu_c", float32(math.Sqrt(2/math.Pi))), g.scalar("gelu_k", 0.044715)
	three := g.scalar("three", 3)
	// linear is Conv1D as exported: Gemm of [rows, in] by the [in, out] weight, plus bias.
	linear := func(x, w, b string) string { return g.Op1("Gemm", []string{x, w, b}) }
	for l := 0; l < layers; l++ {
		w := func(name string, std, mean float32, dims ...int64) string {
			return g.weight(fmt.Sprintf("h%d.%s", l, name), std, mean, dims...)
		}
		x := g.Op1("LayerNormalization", []string{h, w("ln1.g", 0, 1, H), w("ln1.b", 0, 0, H)}, ai("axis", -1), af("epsilon", 1e-5))
		qkv := linear(x, w("attn.w", 0.02, 0, H, 3*H), w("attn.b", 0, 0, 3*H))
		p := g.Op("Split", []string{qkv, split}, 3, ai("axis", 1))
		q := g.Op1("Transpose", []string{g.Op1("Reshape", []string{p[0], heads4})}, as("perm", 0, 2, 1, 3))
		k := g.Op1("Transpose", []string{g.Op1("Reshape", []string{p[1], heads4})}, as("perm", 0, 2, 3, 1))
		v := g.Op1("Transpose", []string{g.Op1("Reshape", []string{p[2], heads4})}, as("perm", 0, 2, 1, 3))
		sc := g.Op1("Add", []string{g.Op1("Mul", []string{g.Op1("MatMul", []string{q, k}), scale}), bias})
		a := g.Op1("MatMul", []string{g.Op1("Softmax", []string{sc}, ai("axis", -1)), v})
		a = g.Op1("Reshape", []string{g.Op1("Transpose", []string{a}, as("perm", 0, 2, 1, 3)), rows})
		h = g.Op1("Add", []string{h, linear(a, w("proj.w", 0.02, 0, H, H), w("proj.b", 0, 0, H))})
		x = g.Op1("LayerNormalization", []string{h, w("ln2.g", 0, 1, H), w("ln2.b", 0, 0, H)}, ai("axis", -1), af("epsilon", 1e-5))
		f := linear(x, w("fc.w", 0.02, 0, H, 4*H), w("fc.b", 0, 0, 4*H))
		// gelu_new: 0.5 f (1 + tanh(sqrt(2/pi) (f + 0.044715 f^3)))
		u := g.Op1("Mul", []string{c0, g.Op1("Add", []string{f, g.Op1("Mul", []string{c1, g.Op1("Pow", []string{f, three})})})})
		f = g.Op1("Mul", []string{g.Op1("Mul", []string{half, f}), g.Op1("Add", []string{one, g.Op1("Tanh", []string{u})})})
		h = g.Op1("Add", []string{h, linear(f, w("mlp.w", 0.02, 0, 4*H, H), w("mlp.b", 0, 0, H))})
	}
	x := g.Op1("LayerNormalization", []string{h, g.weight("lnf.g", 0, 1, H), g.weight("lnf.b", 0, 0, H)}, ai("axis", -1), af("epsilon", 1e-5))
	// the tied LM head as exported: MatMul by the transposed token embedding
	logits := g.Op1("MatMul", []string{x, g.Op1("Transpose", []string{wte}, as("perm", 1, 0))})
	shape := g.Op1("Concat", []string{bs, g.Ints("vocab_dim", int64(vocab))}, ai("axis", 0))
	g.Op("Reshape", []string{logits, shape}, 0)
	g.Nodes[len(g.Nodes)-1].Str(2, "logits") // name the last node's output
}
