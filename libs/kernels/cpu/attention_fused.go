package cpu

import (
	"carve.dev/libs/kernels/internal/gemm"
	"carve.dev/libs/kernels/internal/par"
)

// com.microsoft.Attention's fused run: the packed QKV projection moves into the attention
// tasks. A task is one batch's group of g consecutive heads: it projects the group's Q, K and
// V (three S x Hin by Hin x gD products with the bias, on one participant, reading the
// weights' columns in place) into its participant's slot and attends with them there, so the
// whole op is one loop of the pool instead of two (the projection over all workers, then
// attention over all workers), and a head's Q, K and V are written and read on the same core.
// The two-loop run wrote the [B, S, 3H] projection tile by tile on some cores and read it head
// by head on others. Measured on 16 cores (the contrib_attention fixture's op at (8, 128), 16
// tasks of 2 heads): 0.13 ms a run against 0.19-0.41 ms in two loops, and 0.93 ms on one core.
// Heads are grouped so that a product is a multiple of fusePanel columns wide: the gemm's
// widest micro-kernel then runs on every panel (a 16-column product takes the 12 x 16 kernel,
// half as fast per multiply-add as the 12 x 32 one; with a head a task, 32 tasks, the op took
// 0.14-0.15 ms). Each element of Q, K and V is the same sum in the same order as in the one big
// product (package gemm's invariant 3; the kernels add C and the bias after the sum), so the
// results are the same bit for bit.
//
// The fused run reuses the recipe of the two-loop run, so the choice between them is free to
// change without touching the estimator: a slot's Q, K and V (S x g(2D + Dv) floats) lie in
// the "qkv" part, which holds B x N / g of them, and the fused loop has at most B x N / g
// participants; the products' gemm workspace lies in the participant's attention scratch slot,
// unused until the projection is done (the run is fused only when the slot can hold it).
//
// Invariants:
//  1. fused is set only for the full tactic, with fusedParts <= core.slots and <= the tasks.
//  2. The fused and the two-loop runs give identical outputs (TestAttentionFusedMatchesTwoLoop).

// fuseMinBalance is how evenly the fused tasks must fill the participants the two-loop run
// would use, in eighths: with fewer tasks than that the fused loop leaves cores idle that the
// two-loop run's finer tasks (B x N x row blocks, and the projection's tiles) would keep busy.
// 16 or 32 tasks on 16 participants fill them; 12 or 20 on 16 (75%, 62%) do not. (The fixture's
// 16 tasks on 12 participants, 67%, still beat its two loops, 0.15-0.18 ms against 0.17-0.21,
// but there the saved loop is a large part of the op; in a larger op idle cores cost more.)
const fuseMinBalance = 7

// fusePanel is the columns of the gemm's widest micro-kernel (AVX-512, 12 x 32).
const fusePanel = 32

// planFused decides whether the run is fused, and with how many heads a task, and plans its
// products; the core's tactic and slots must be set.
func (a *attention) planFused(workers int) {
	c := &a.core
	a.fused = false
	if c.tactic != "full" || fuseOff {
		return
	}
	// The two-loop run's participants for its attention loop; its projection may take more
	// (its tiles), but never more than the workers.
	p := c.participants
	g := 1 // the fewest heads whose products are whole panels, if any
	for h := 1; h <= c.nq; h++ {
		if c.nq%h == 0 && h*c.d%fusePanel == 0 && h*c.dv%fusePanel == 0 {
			g = h
			break
		}
	}
	for _, g := range []int{g, 1} {
		tasks := c.b * c.nq / g
		if rounds := (tasks + p - 1) / p; 8*tasks < fuseMinBalance*rounds*p {
			continue
		}
		a.projQK = gemm.NewPlan(c.s, g*c.d, a.hin, gemm.RowMajor, 1)
		a.projV = gemm.NewPlan(c.s, g*c.dv, a.hin, gemm.RowMajor, 1)
		if max(a.projQK.WorkspaceFloats(), a.projV.WorkspaceFloats()) > c.slotFloats {
			return
		}
		work := tasks * c.s * g * (a.hin*(2*c.d+c.dv) + c.t*(c.d+c.dv)) // multiply-adds
		a.fusedParts = min(max(min(workers, tasks), 1), c.slots, parSlots(work, workers))
		a.fusedHeads, a.fused = g, true
		return
	}
}

// fuseOff turns the fused run off (tests compare the two runs).
var fuseOff bool

// fusedAttn is one fused run, handed to the pool.
type fusedAttn struct {
	a       *attention
	r       *attnRun // the run's views: past, output, mask, attention bias, scores scratch
	x, w    []float32
	bias    []float32 // the projection's bias; nil for none
	qkv     []float32 // slots of S x g(2D + Dv) floats: a task's Q, K and V
	present []float32 // the present output; nil for none
}

var fusedRuns par.Pool[fusedAttn]

func (f *fusedAttn) Do(slot, lo, hi int) {
	a, c := f.a, &f.a.core
	g := a.fusedHeads
	wq, wv := g*c.d, g*c.dv // a task's Q (and K) and V columns
	sq, sv := c.s*wq, c.s*wv
	per := 2*sq + sv
	area := f.qkv[slot*per : (slot+1)*per]
	q, k, v := area[:sq], area[sq:2*sq], area[2*sq:per]
	slotWS := f.r.scratch[slot*c.slotFloats : (slot+1)*c.slotFloats]
	total := a.hq + a.hk + a.hv
	// The task's run: the shared one's views with Q, K and V in the slot.
	r := *f.r
	var pk, pv view3 // the present output's keys and values, when there is one
	if f.present != nil {
		pk, pv = presentViews(f.present, c)
	}
	for task := lo; task < hi; task++ {
		b, n0 := task/(c.nq/g), task%(c.nq/g)*g
		x := gemm.Mat{Data: f.x[b*c.s*a.hin:], Ld: max(a.hin, 1)}
		f.project(&a.projQK, x, n0*c.d, q, wq, total, slotWS)
		f.project(&a.projQK, x, a.hq+n0*c.d, k, wq, total, slotWS)
		f.project(&a.projV, x, a.hq+a.hk+n0*c.dv, v, wv, total, slotWS)
		// Views of the slot addressed as (batch b, head n): off cancels b's and n0's terms.
		r.q = view3{data: q, off: -n0 * c.d, sb: 0, sh: c.d, st: wq}
		r.cur = view3{data: k, off: -n0 * c.d, sh: c.d, st: wq}
		r.curV = view3{data: v, off: -n0 * c.dv, sh: c.dv, st: wv}
		for n := n0; n < n0+g; n++ {
			for i0 := 0; i0 < c.s; i0 += attnRowBlock {
				r.fullBlock(b, n, i0, slotWS)
			}
			if f.present != nil {
				copyKVHead(&r, pk, pv, c, b, n)
			}
		}
	}
}

// project writes columns [col, col+width) of the projection of x (one batch's S rows) into dst,
// S x width.
func (f *fusedAttn) project(p *gemm.Plan, x gemm.Mat, col int, dst []float32, width, total int, ws []float32) {
	w := gemm.Mat{Data: f.w[col:], Ld: max(total, 1)}
	if f.bias != nil {
		p.RunBias(x, w, nil, f.bias[col:col+width], dst, max(width, 1), 1, ws)
	} else {
		p.Run(x, w, nil, dst, max(width, 1), 1, false, ws)
	}
}
