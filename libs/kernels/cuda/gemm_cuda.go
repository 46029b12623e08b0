//go:build cuda

package cuda

/*
#include <stdint.h>
#include <library_types.h>
*/
import "C"

import (
	"fmt"
	"math/bits"

	"carve.dev/libs/alloc"
	acuda "carve.dev/libs/alloc/cuda"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

const (
	opN = 0 // CUBLAS_OP_N
	opT = 1 // CUBLAS_OP_T
)

func cudaDataType(dt graph.DType) C.int {
	switch dt {
	case graph.Float16:
		return C.CUDA_R_16F
	case graph.BFloat16:
		return C.CUDA_R_16BF
	}
	return C.CUDA_R_32F
}

// alignOf is the largest power of two, at most 256, that divides every nonzero value.
func alignOf(vs ...int64) uint32 {
	a := uint32(256)
	for _, v := range vs {
		if v != 0 {
			a = min(a, uint32(1)<<min(bits.TrailingZeros64(uint64(v)), 8))
		}
	}
	return a
}

// desc is the column-major GEMM cuBLASLt runs for g: row-major Y = op(A)op(B) is column-major
// Y^T = op(B)^T op(A)^T, so cuBLASLt's A is our B and its B our A.
func (g *gemmInstance) desc(a, b, c, y alloc.Ptr, wsCap int64) gemmDesc {
	es := int64(g.dt.Size())
	var d gemmDesc
	d.dtype = cudaDataType(g.dt)
	d.transa, d.transb = opN, opN
	d.lda, d.ldb = C.int64_t(g.n), C.int64_t(g.k)
	if g.transB {
		d.transa, d.lda = opT, C.int64_t(g.k)
	}
	if g.transA {
		d.transb, d.ldb = opT, C.int64_t(g.m)
	}
	d.m, d.n, d.k, d.ldc = C.uint64_t(g.n), C.uint64_t(g.m), C.uint64_t(g.k), C.int64_t(g.n)
	d.batch = 1
	sa, sb, sc := int64(0), int64(0), int64(0)
	switch g.mode {
	case gemmStrided:
		d.batch = C.int32_t(g.batch)
		sa, sb, sc = g.sb, g.sa, g.m*g.n
		d.sa, d.sb, d.sc = C.int64_t(sa), C.int64_t(sb), C.int64_t(sc)
	case gemmLoop:
		for i := range g.loopDims {
			sa, sb = sa|g.loopSB[i], sb|g.loopSA[i]
		}
		sc = g.m * g.n
	}
	d.align[0] = C.uint32_t(alignOf(int64(b), sa*es))
	d.align[1] = C.uint32_t(alignOf(int64(a), sb*es))
	d.align[2] = C.uint32_t(alignOf(int64(c), sc*es))
	d.align[3] = C.uint32_t(alignOf(int64(y), sc*es))
	d.wsCap = C.uint64_t(wsCap)
	d.pick = C.int(g.pick)
	d.index = C.int(g.algoIndex)
	return d
}

func runGemm(g *gemmInstance, in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	if g.m == 0 || g.n == 0 || g.batch == 0 {
		return nil
	}
	dev, err := acuda.StreamDevice(s)
	if err != nil {
		return err
	}
	y := out[0].Addr
	es := int64(g.dt.Size())
	if g.k == 0 {
		return dev.MemsetBytes(y, 0, g.batch*g.m*g.n*es, s)
	}
	if ws == nil {
		return fmt.Errorf("cuda: %s: no workspace carved", g.kernel)
	}
	part, ok := ws.Part(gemmPart)
	if !ok {
		return fmt.Errorf("cuda: %s: workspace has no part %q", g.kernel, gemmPart)
	}
	a, b := in[0].Addr, in[1].Addr
	raw, err := dev.RawStream(s)
	if err != nil {
		return err
	}
	c, beta := y, float32(0)
	d := g.desc(a, b, c, y, part.Size)
	mode := g.c
	if mode == cBias {
		d.bias = C.uint64_t(in[2].Addr)
		if ok, err := biasPlan(dev, s, d); err != nil {
			return err
		} else if !ok {
			mode, d.bias = cBroadcast, 0
		}
	}
	switch mode {
	case cFull:
		c, beta = in[2].Addr, g.beta
		d = g.desc(a, b, c, y, part.Size)
	case cBroadcast:
		beta = g.beta
		total := g.m * g.n
		grid := uint32(min((total+255)/256, 1<<16))
		name := "carve_gemm_fill_c32"
		if es == 2 {
			name = "carve_gemm_fill_c16"
		}
		if err := launch(s, name, Dim3{X: grid}, Dim3{X: 256}, 0,
			PtrArg(y), PtrArg(in[2].Addr), Int64Arg(g.m), Int64Arg(g.n), Int64Arg(g.csm), Int64Arg(g.csn)); err != nil {
			return err
		}
	}
	return dev.Do(func() error {
		h, err := handleFor(dev, s)
		if err != nil {
			return err
		}
		p, err := ltPlans.get(dev, h, d)
		if err != nil {
			return err
		}
		if g.mode != gemmLoop {
			return runPlan(h, p, g.alpha, beta, b, a, c, y, part.Region(), raw)
		}
		for i := int64(0); i < g.batch; i++ {
			ao, bo := int64(0), int64(0)
			for j, x := len(g.loopDims)-1, i; j >= 0; j-- {
				dim := x % g.loopDims[j]
				x /= g.loopDims[j]
				ao += dim * g.loopSA[j]
				bo += dim * g.loopSB[j]
			}
			yo := i * g.m * g.n * es
			if err := runPlan(h, p, g.alpha, beta, b.Add(bo*es), a.Add(ao*es), c.Add(yo), y.Add(yo), part.Region(), raw); err != nil {
				return err
			}
		}
		return nil
	})
}

// biasPlan reports whether cuBLASLt has an algorithm for d with its bias epilogue; false (and
// no error) sends the GEMM the way of a broadcast C. The answer is cached with the plans.
func biasPlan(dev *acuda.Device, s alloc.Stream, d gemmDesc) (bool, error) {
	ok := false
	err := dev.Do(func() error {
		h, err := handleFor(dev, s)
		if err != nil {
			return err
		}
		_, perr := ltPlans.get(dev, h, d)
		ok = perr == nil
		return nil
	})
	return ok, err
}

// measureGemm is the workspace the algorithm cuBLASLt picks for g on b's device needs, for
// operands at 256-byte aligned addresses.
func measureGemm(g *gemmInstance, b kernels.Backend) (int64, error) {
	if g.m == 0 || g.n == 0 || g.k == 0 || g.batch == 0 {
		return 0, nil
	}
	return measureDesc(b, g.kernel, g.desc(0, 0, 0, 0, g.ws), g.c == cBias)
}

// measureDesc is the workspace the algorithm cuBLASLt chooses for d needs on b's device. With
// bias, the product runs with a bias epilogue or, where cuBLASLt has none, without it: the need
// covers both.
func measureDesc(b kernels.Backend, label string, d gemmDesc, bias bool) (int64, error) {
	cb, ok := b.(*Backend)
	if !ok {
		return 0, fmt.Errorf("cuda: measuring %s needs the CUDA backend", label)
	}
	var need int64
	err := cb.dev.Do(func() error {
		h, err := handleFor(cb.dev, 0)
		if err != nil {
			return err
		}
		p, err := ltPlans.get(cb.dev, h, d)
		need = p.wsNeed
		if err != nil || !bias {
			return err
		}
		// 256 is an aligned address: the heuristic reads only its alignment.
		d.bias = 256
		if p, err := ltPlans.get(cb.dev, h, d); err == nil {
			need = max(need, p.wsNeed)
		}
		return nil
	})
	return need, err
}
