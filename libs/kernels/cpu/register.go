package cpu

import (
	"slices"

	"carve.dev/libs/kernels"
)

// ops lists every CPU kernel.
func ops() []*op {
	return slices.Concat(
		binaryOps(), variadicOps(), unaryOps(), clipOps(), movementOps(), indexingOps(), generateOps(),
		reduceOps(), softmaxOps(), normOps(), matmulOps(), attentionOps(), rotaryOps(), geluOps(), nbitsOps(),
		onnxAttentionOps(), onnxRMSNormOps(), onnxSwishOps(), moeOps(), convOps(), poolOps(), channelNormOps(), padOps(),
		resizeOps(), convTransposeOps(), collectiveOps(),
	)
}

// Kernels returns every kernel of the CPU backend. Kernels are immutable and safe for
// concurrent use.
func Kernels() []kernels.Kernel {
	all := ops()
	out := make([]kernels.Kernel, len(all))
	for i, o := range all {
		out[i] = o
	}
	return out
}

// Register adds every CPU kernel to r.
func Register(r *kernels.Registry) error {
	for _, k := range Kernels() {
		if err := r.Register(k); err != nil {
			return err
		}
	}
	return nil
}

// NewRegistry returns a new registry holding the CPU kernels.
func NewRegistry() *kernels.Registry {
	r := kernels.NewRegistry()
	if err := Register(r); err != nil {
		panic(err) // a fresh registry cannot hold duplicates
	}
	return r
}
