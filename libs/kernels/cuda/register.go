package cuda

import "slices"

// ops lists the CUDA kernels of csrc/*.cu (MatMul and Gemm register themselves in matmul.go).
func ops() []*op {
	return slices.Concat(
		binaryOps(), variadicOps(), unaryOps(), clipOps(), movementOps(), indexingOps(), generateOps(),
		reduceOps(), softmaxOps(), normOps(), onnxRMSNormOps(), geluOps(), onnxSwishOps(), rotaryOps(),
		attentionOps(), onnxAttentionOps(), nbitsOps(), gatedOps(), moeOps(), poolOps(), channelNormOps(),
		padOps(), resizeOps(), convOps(),
	)
}

func init() {
	for _, o := range ops() {
		addKernel(o)
	}
}
