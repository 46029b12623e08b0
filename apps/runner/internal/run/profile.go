package run

import (
	"context"
	"errors"
	"fmt"

	"carve.dev/libs/engine"
	"carve.dev/libs/engine/generate"
)

// Profile runs one more generation with every kernel timed on the device (engine.Profile) and
// returns the decode steps' profile: the prompt's run is left out. The profiled generation is
// eager and slower than a timed one; its tokens are the same.
func (g *Generation) Profile(ctx context.Context) (*engine.Profile, error) {
	p := &engine.Profile{}
	if err := g.Session.Profile(p); err != nil {
		return nil, err
	}
	each := func(st generate.Step) error {
		if st.Index == 0 {
			p.Reset() // the prompt's run
		}
		return ctx.Err()
	}
	_, _, err := g.Gen.Generate(ctx, g.Prompt, g.Config.PromptLen, g.Config.MaxNew, g.sampler(), each)
	if err = errors.Join(err, g.Session.Profile(nil)); err != nil {
		return nil, err
	}
	return p, nil
}

// Profile runs the inputs runs more times on the first session with every kernel timed on the
// device (engine.Profile), after the session has run them (Run or Bench): nothing is planned
// or compiled while profiling.
func (r *Runner) Profile(ctx context.Context, runs int) (*engine.Profile, error) {
	if runs < 1 {
		return nil, &UsageError{fmt.Sprintf("%d profiled runs: profile at least one", runs)}
	}
	s := r.Sessions[0]
	p := &engine.Profile{}
	if err := s.Profile(p); err != nil {
		return nil, err
	}
	var err error
	for range runs {
		if err = ctx.Err(); err != nil {
			break
		}
		if _, err = s.Run(ctx, r.Inputs); err != nil {
			break
		}
	}
	if err = errors.Join(err, s.Profile(nil)); err != nil {
		return nil, err
	}
	return p, nil
}

// KernelCategory groups op types for a profile's summary: "GEMM" (MatMul, Gemm and their
// fusions), "attention", "norms", "elementwise", "gather/copies" or "other".
func KernelCategory(op string) string {
	switch op {
	case "MatMul", "Gemm", "com.microsoft.FusedMatMul", "com.microsoft.MatMulNBits", "com.microsoft.GemmFastGelu",
		"com.microsoft.MatMulIntegerToFloat", "MatMulInteger", "com.microsoft.QuickGelu", "dev.carve.GatedMatMul",
		"com.microsoft.MoE":
		return "GEMM"
	case "com.microsoft.GroupQueryAttention", "com.microsoft.MultiHeadAttention", "com.microsoft.Attention", "Attention",
		"com.microsoft.RotaryEmbedding", "RotaryEmbedding", "Softmax":
		return "attention"
	case "LayerNormalization", "SimplifiedLayerNormalization", "RMSNormalization", "com.microsoft.SkipLayerNormalization",
		"com.microsoft.SkipSimplifiedLayerNormalization", "com.microsoft.SimplifiedLayerNormalization",
		"com.microsoft.LayerNormalization", "BatchNormalization", "GroupNormalization", "InstanceNormalization":
		return "norms"
	case "Gather", "GatherElements", "GatherND", "com.microsoft.GatherBlockQuantized", "Concat", "Split", "Slice",
		"Transpose", "Expand", "Tile", "Pad", "ScatterND", "ScatterElements", "Identity", "Cast", "Where", "Range":
		return "gather/copies"
	case "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Sigmoid", "Tanh", "Relu", "Gelu", "Erf", "Exp", "Neg", "Reciprocal",
		"com.microsoft.BiasGelu", "com.microsoft.FastGelu", "com.microsoft.Gelu", "com.microsoft.BiasAdd",
		"com.microsoft.SiLU", "Silu", "HardSigmoid", "HardSwish", "Softplus", "Clip", "Max", "Min", "Equal", "Less",
		"Greater", "Not", "And", "Or", "Swish", "dev.carve.SwiGLU":
		return "elementwise"
	}
	return "other"
}
