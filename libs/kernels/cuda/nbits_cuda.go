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
	a, w, part := in[0].Addr, ws.Parts()[0].Ptr, ws.Parts()[1]
	y := out[0].Addr.Add(c.n0 * c.dt.Size())
	d := c.desc(a, w, y, part.Size)
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

// desc is the chunk's product for cuBLASLt: A [m, k] times the chunk W [rows, k] transposed, into
// y with leading dimension N.
func (c *nbitsGemm) desc(a, w, y alloc.Ptr, wsCap int64) gemmDesc {
	g := &gemmInstance{dt: c.dt, m: c.m, n: c.rows, k: c.k, transB: true, alpha: 1, mode: gemmSingle, batch: 1}
	d := g.desc(a, w, y, y, wsCap)
	d.ldc = C.int64_t(c.ny)
	d.align[2] = C.uint32_t(alignOf(int64(y), c.ny*c.dt.Size()))
	d.align[3] = d.align[2]
	return d
}

// need is what the chunk's product needs of a "cublas" part of wsCap bytes on b's device, with
// the chunk's output at its column offset (its alignment is the one the product runs with).
func (c *nbitsGemm) need(b kernels.Backend, wsCap int64) (int64, error) {
	if c.m == 0 || c.rows == 0 || c.k == 0 {
		return 0, nil
	}
	return measureDesc(b, "MatMulNBits", c.desc(0, 0, alloc.Ptr(c.n0*c.dt.Size()), wsCap), false)
}
