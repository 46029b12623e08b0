package planner_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
)

// TestRoom checks Room's invariant on random plans: a buffer moved to its Room and grown to the
// Room's size keeps the plan valid with the same peak, and one byte more does not fit there;
// no other aligned start has a longer free run below the peak.
func TestRoom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := range 200 {
		p := randomProblem(r, 2+r.IntN(30), 12)
		plan, err := planner.Solve(context.Background(), p, planner.Options{Algorithm: planner.GreedyBySize})
		require.NoError(t, err)
		for i, b := range p.Buffers {
			off, size := planner.Room(p, plan, i)
			if b.Size > 0 {
				require.GreaterOrEqual(t, size, b.Size, "trial %d buffer %d: its own placement is room", trial, i)
			}
			if size == 0 {
				continue
			}
			q := planner.Problem{Buffers: append([]planner.Buffer(nil), p.Buffers...)}
			q.Buffers[i].Size = size
			grown := plan
			grown.Offsets = append([]int64(nil), plan.Offsets...)
			grown.Offsets[i] = off
			require.NoError(t, planner.Verify(q, grown), "trial %d buffer %d grown to %d at %d", trial, i, size, off)
			// maximal: no aligned start has more free bytes before the next holder or the peak
			align := b.Align
			if align == 0 {
				align = planner.DefaultAlign
			}
			for start := int64(0); start < plan.Peak; start += align {
				free := plan.Peak - start
				for j, o := range p.Buffers {
					if j == i || o.Size == 0 || o.End <= b.Start || o.Start >= b.End {
						continue
					}
					lo, hi := plan.Offsets[j], plan.Offsets[j]+o.Size
					if hi <= start {
						continue
					}
					if lo <= start {
						free = 0
						break
					}
					free = min(free, lo-start)
				}
				require.LessOrEqual(t, free, size, "trial %d buffer %d: %d free bytes at %d, Room gave %d", trial, i, free, start, size)
			}
		}
	}
}

// TestRoomInPlace: a buffer in an in-place pair keeps its own placement.
func TestRoomInPlace(t *testing.T) {
	p := planner.Problem{Buffers: []planner.Buffer{
		{ID: "x", Size: 100, Start: 0, End: 2},
		{ID: "y", Size: 100, Start: 1, End: 3, InPlace: "x"},
		{ID: "w", Size: 10, Start: 1, End: 2},
	}}
	plan, err := planner.Solve(context.Background(), p, planner.Options{})
	require.NoError(t, err)
	for _, i := range []int{0, 1} {
		off, size := planner.Room(p, plan, i)
		require.Equal(t, plan.Offsets[i], off)
		require.Equal(t, p.Buffers[i].Size, size)
	}
	off, size := planner.Room(p, plan, 2)
	require.NoError(t, planner.Verify(planner.Problem{Buffers: []planner.Buffer{p.Buffers[0], p.Buffers[1], {ID: "w", Size: size, Start: 1, End: 2}}},
		planner.Plan{Offsets: []int64{plan.Offsets[0], plan.Offsets[1], off}, Peak: plan.Peak}))
}
