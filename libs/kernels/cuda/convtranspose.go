package cuda

import "carve.dev/libs/kernels"

// ConvTranspose (X [N, C, D...], W [C, M/group, K...], optional B [M]) -> Y [N, M, out...],
// with conv.go's tactics, workspace contract and kernels; the output size, output_padding,
// output_shape and SAME included, is graph.Window's, as on the CPU, and the pads are the ones
// that size implies (what is cut off the full transposed output at each end).
//
// Y is the adjoint of the forward convolution from an [N, M, out...] tensor to an [N, C, D...]
// one, with the same weights as its [C, M/group, K...] filter and the same strides, dilations
// and begin pads: y[o*s - pad + k*d] receives x[o] * w[k] for every input position o and tap k,
// exactly the forward convolution's data gradient. So the cudnn tactic runs
// cudnnConvolutionBackwardData with ConvTranspose's input as dy and its output as dx, and the
// own kernels run the forward kernels' product with the weights read transposed and the gather
// inverted (csrc/conv.cu TR). cuDNN describes the node when the forward convolution over Y with
// the begin pads at both ends has exactly X's size, that is when output_padding plus the begin
// pad less the end pad lies in [0, stride) in each dim: output_padding below the stride with
// equal pads (its positions get the taps that reach them), and the output_shape and SAME sizes
// for which that holds.
//
// The cudnn tactic's policy bound is col2im's matrix, N*M*KH*KW*IH*IW elements: the product
// W^T X of the explicit lowering, before its columns are added into Y.

func convTransposeOp() *op {
	return &op{key: kernels.Key("", "ConvTranspose"), tactics: convTactics, sel: selectConvFamily(true), bound: boundConvFamily(true)}
}

// transposeForward is the forward convolution a ConvTranspose node is the adjoint of: its
// input x [M, OH, OW] (the node's output), its output y [C, IH, IW] (the node's input) and its
// filter's map count, C.
func (g *convGeo) transposeForward() (x, y [3]int64, filter int64) {
	return [3]int64{g.m, g.oh, g.ow}, [3]int64{g.c, g.ih, g.iw}, g.c
}
