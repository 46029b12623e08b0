//go:build cuda

package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

// call queues A times the input weight with the GEMM of gemm_cuda.go into its workspace part, with
// the node's own "cublas" part.
func (c *gatedProj) call(s alloc.Stream, in, out []kernels.Tensor, ws *alloc.Workspace) error {
	if ws == nil || len(ws.Parts()) <= c.part || len(in) <= c.weight {
		return fmt.Errorf("cuda: GatedMatMul: workspace part %d or input %d is missing", c.part, c.weight)
	}
	g := &gemmInstance{kernel: "GatedMatMul/product", dt: c.dt, m: c.m, n: c.n, k: c.k, alpha: 1, mode: gemmSingle, batch: 1}
	y := []kernels.Tensor{{DType: c.dt, Addr: ws.Parts()[c.part].Ptr}}
	return runGemm(g, []kernels.Tensor{in[0], in[c.weight]}, y, ws, s)
}
