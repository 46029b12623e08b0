package cuda

import "carve.dev/libs/kernels/internal/par"

// Copies between host memory and the pinned staging buffers (CopyIn, CopyOut) are split over the
// kernels' worker pool when large: one goroutine copies out of staging memory at about 9 GB/s
// (a prefill's 2.5 GB of logits took 290 ms to come back), below what the device's copy engines
// move, so a single copy was the bound. hostCopyPart is the least one participant copies.
const hostCopyPart = 1 << 20

// copyBody copies src to dst, hostCopyPart bytes an index.
type copyBody struct{ dst, src []byte }

func (c *copyBody) Do(_, lo, hi int) {
	a, b := lo*hostCopyPart, min(hi*hostCopyPart, len(c.src))
	copy(c.dst[a:b], c.src[a:b])
}

var copyBodies par.Pool[copyBody]

// hostCopy copies src into dst, which must be as long, over the worker pool when src spans
// several parts; it allocates nothing.
func hostCopy(dst, src []byte) {
	parts := (len(src) + hostCopyPart - 1) / hostCopyPart
	if parts < 2 {
		copy(dst, src)
		return
	}
	b := copyBodies.Get()
	b.dst, b.src = dst[:len(src)], src
	par.For(parts, 1, parts, b)
	*b = copyBody{}
	copyBodies.Put(b)
}
