package cuda

import "carve.dev/libs/kernels"

// onnxRMSNormOps is ONNX's RMSNormalization (opset 23: X, scale; attributes axis, epsilon,
// stash_type), which the layer-normalization family's kernel runs (selectNorm, in norm.go) as
// SimplifiedLayerNormalization.
func onnxRMSNormOps() []*op {
	return []*op{{key: kernels.Key("", "RMSNormalization"), tactics: normTactics, sel: selectNorm}}
}
