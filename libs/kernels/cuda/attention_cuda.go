//go:build cuda

package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

// call queues the QKV projection with the GEMM of gemm_cuda.go: input x weights into workspace
// part "qkv", with the node's own "cublas" part.
func (c *attnProj) call(s alloc.Stream, in, out []kernels.Tensor, ws *alloc.Workspace) error {
	if ws == nil || len(ws.Parts()) <= c.qkv {
		return fmt.Errorf("cuda: Attention: workspace part \"qkv\" is not carved")
	}
	g := &gemmInstance{kernel: "Attention/qkv", dt: c.dt, m: c.m, n: c.n, k: c.k, alpha: 1, mode: gemmSingle, batch: 1}
	y := []kernels.Tensor{{DType: c.dt, Addr: ws.Parts()[c.qkv].Ptr}}
	return runGemm(g, in[:2], y, ws, s)
}
