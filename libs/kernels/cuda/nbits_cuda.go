//go:build cuda

package cuda

/*
#include <stdint.h>
*/
import "C"

import (
	"fmt"

	"carve.dev/libs/alloc"
	acuda "carve.dev/libs/alloc/cuda"
	"carve.dev/libs/kernels"
)

// call queues the chunk's cuBLASLt product: the GEMM helpers of gemm_cuda.go with the output's
// leading dimension set to N, so the chunk's columns land in place.
func (c *nbitsGemm) call(s alloc.Stream, in, out []kernels.Tensor, ws *alloc.Workspace) error {
	if ws == nil || len(ws.Parts()) < 2 {
		return fmt.Errorf("cuda: MatMulNBits: workspace parts \"weights\" and \"cublas\" are not carved")
	}
	dev, err := acuda.StreamDevice(s)
	if err != nil {
		return err
	}
	raw, err := dev.RawStream(s)
	if err != nil {
		return err
	}
	es := c.dt.Size()
	g := &gemmInstance{dt: c.dt, m: c.m, n: c.rows, k: c.k, transB: true, alpha: 1, mode: gemmSingle, batch: 1}
	a, w, part := in[0].Addr, ws.Parts()[0].Ptr, ws.Parts()[1]
	y := out[0].Addr.Add(c.n0 * es)
	d := g.desc(a, w, y, y, part.Size)
	d.ldc = C.int64_t(c.ny)
	d.align[2] = C.uint32_t(alignOf(int64(y), c.ny*es))
	d.align[3] = d.align[2]
	return dev.Do(func() error {
		h, err := handleFor(dev, s)
		if err != nil {
			return err
		}
		p, err := ltPlans.get(dev, h, d)
		if err != nil {
			return err
		}
		return runPlan(h, p, 1, 0, w, a, y, y, part.Region(), raw)
	})
}
