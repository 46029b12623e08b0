package planner_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
)

func TestValidate(t *testing.T) {
	ok := planner.Buffer{ID: "a", Size: 10, Start: 0, End: 1}
	with := func(f func(*planner.Buffer)) planner.Buffer { b := ok; f(&b); return b }
	tests := []struct {
		name    string
		p       planner.Problem
		wantErr string // "" for valid
		index   int
	}{
		{"empty", planner.Problem{}, "", 0},
		{"one", planner.Problem{Buffers: []planner.Buffer{ok}}, "", 0},
		{"zero size", planner.Problem{Buffers: []planner.Buffer{with(func(b *planner.Buffer) { b.Size = 0 })}}, "", 0},
		{"negative capacity", planner.Problem{Capacity: -1}, "capacity -1 is negative", -1},
		{"empty id", planner.Problem{Buffers: []planner.Buffer{with(func(b *planner.Buffer) { b.ID = "" })}}, "empty ID", 0},
		{"negative size", planner.Problem{Buffers: []planner.Buffer{ok, with(func(b *planner.Buffer) { b.ID, b.Size = "b", -1 })}}, "negative size -1", 1},
		{"bad align", planner.Problem{Buffers: []planner.Buffer{with(func(b *planner.Buffer) { b.Align = 48 })}}, "alignment 48 is not a power of two", 0},
		{"negative align", planner.Problem{Buffers: []planner.Buffer{with(func(b *planner.Buffer) { b.Align = -4 })}}, "alignment -4", 0},
		{"empty lifetime", planner.Problem{Buffers: []planner.Buffer{with(func(b *planner.Buffer) { b.End = 0 })}}, "empty lifetime [0, 0)", 0},
		{"huge lifetime", planner.Problem{Buffers: []planner.Buffer{with(func(b *planner.Buffer) { b.Start = -1 << 63 })}}, "past ±", 0},
		{"duplicate id", planner.Problem{Buffers: []planner.Buffer{ok, ok}}, "ID also used by buffer 0", 1},
		{"too big", planner.Problem{Buffers: []planner.Buffer{
			with(func(b *planner.Buffer) { b.Size = planner.MaxTotalBytes / 2 }),
			with(func(b *planner.Buffer) { b.ID, b.Size = "b", planner.MaxTotalBytes/2 }),
		}}, "sizes sum past", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, planner.ErrInvalidProblem)
			require.ErrorContains(t, err, tc.wantErr)
			var pe *planner.ProblemError
			require.True(t, errors.As(err, &pe))
			require.Equal(t, tc.index, pe.Index)
		})
	}
}

func TestBufferHelpers(t *testing.T) {
	require.Equal(t, planner.DefaultAlign, planner.Buffer{}.Alignment())
	require.Equal(t, int64(8), planner.Buffer{Align: 8}.Alignment())
	a := planner.Buffer{Start: 0, End: 3}
	require.True(t, a.Overlaps(planner.Buffer{Start: 2, End: 5}))
	require.False(t, a.Overlaps(planner.Buffer{Start: 3, End: 5}), "lifetimes are half-open")
	require.Equal(t, "workspace", planner.Workspace.String())
	require.Equal(t, "unknown", planner.Kind(99).String())
}

func TestLowerBound(t *testing.T) {
	b := func(id string, size, align int64, start, end int) planner.Buffer {
		return planner.Buffer{ID: id, Size: size, Align: align, Start: start, End: end}
	}
	tests := []struct {
		name string
		bufs []planner.Buffer
		want int64
	}{
		{"empty", nil, 0},
		{"zero sizes", []planner.Buffer{b("a", 0, 1, 0, 5)}, 0},
		{"disjoint", []planner.Buffer{b("a", 10, 1, 0, 2), b("b", 20, 1, 2, 4)}, 20},
		{"overlap", []planner.Buffer{b("a", 10, 1, 0, 3), b("b", 20, 1, 2, 4), b("c", 5, 1, 3, 9)}, 30},
		{"minimalloc example", []planner.Buffer{
			b("b1", 4, 1, 0, 3), b("b2", 4, 1, 3, 9), b("b3", 4, 1, 0, 9), b("b4", 4, 1, 9, 21), b("b5", 4, 1, 0, 21)}, 12},
		// Two 100-byte buffers aligned to 256: the lower one takes 256 bytes before the next
		// offset, the top one only its size.
		{"alignment", []planner.Buffer{b("a", 100, 256, 0, 2), b("b", 100, 256, 0, 2)}, 356},
		// Mixed alignments: offsets are multiples of 8 at least.
		{"mixed alignment", []planner.Buffer{b("a", 100, 256, 0, 2), b("b", 3, 8, 0, 2), b("c", 3, 8, 0, 2)}, 104 + 8 + 3},
		{"default alignment", []planner.Buffer{b("a", 1, 0, 0, 1), b("b", 1, 0, 0, 1)}, 257},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, planner.LowerBound(planner.Problem{Buffers: tc.bufs}))
		})
	}
}
