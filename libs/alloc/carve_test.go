package alloc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecipeSize(t *testing.T) {
	tests := []struct {
		name  string
		parts []Part
		size  int64
	}{
		{"empty", nil, 0},
		{"one", []Part{{Name: "a", Size: 10}}, 10},
		{"default alignment", []Part{{Name: "a", Size: 10}, {Name: "b", Size: 10}}, 256 + 10},
		{"zero-size part", []Part{{Name: "a", Size: 10}, {Name: "z"}, {Name: "b", Size: 1}}, 256 + 1},
		{"smaller alignment", []Part{{Name: "a", Size: 3, Align: 1}, {Name: "b", Size: 5, Align: 4}}, 4 + 5},
		{"larger alignment pads the start", []Part{{Name: "a", Size: 10}, {Name: "b", Size: 10, Align: 1024}}, 1024 + 10 + (1024 - 256)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Recipe{Kernel: "k", Parts: tc.parts}
			n, err := r.Size()
			require.NoError(t, err)
			require.Equal(t, tc.size, n)
		})
	}
}

// TestRecipePart: a Recipe's part by name, as the carved Workspace names it.
func TestRecipePart(t *testing.T) {
	r := Recipe{Kernel: "k", Parts: []Part{{Name: "a", Size: 10}, {Name: "b", Size: 7, Align: 512}}}
	p, ok := r.Part("b")
	require.True(t, ok)
	require.Equal(t, Part{Name: "b", Size: 7, Align: 512}, p)
	_, ok = r.Part("c")
	require.False(t, ok)
}

func TestRecipeInvalid(t *testing.T) {
	tests := map[string][]Part{
		"unnamed":            {{Size: 1}},
		"duplicate":          {{Name: "a"}, {Name: "a"}},
		"negative size":      {{Name: "a", Size: -1}},
		"bad alignment":      {{Name: "a", Size: 1, Align: 3}},
		"negative alignment": {{Name: "a", Size: 1, Align: -256}},
		"overflow":           {{Name: "a", Size: math.MaxInt64}, {Name: "b", Size: 1}},
		"overflow pad":       {{Name: "a", Size: math.MaxInt64 - 100, Align: 1 << 20}},
	}
	for name, parts := range tests {
		t.Run(name, func(t *testing.T) {
			r := Recipe{Kernel: "k", Parts: parts}
			_, err := r.Size()
			require.ErrorIs(t, err, ErrInvalidRecipe)
			_, err = Carve(Region{Ptr: 4096, Size: 1 << 30}, r)
			require.ErrorIs(t, err, ErrInvalidRecipe)
		})
	}
}

func TestCarveTooSmallIsAllOrNothing(t *testing.T) {
	r := Recipe{Kernel: "gemm/splitk", Parts: []Part{
		{Name: "partials", Size: 1000},
		{Name: "counters", Size: 100},
	}}
	need, err := r.Size()
	require.NoError(t, err)
	require.Equal(t, int64(1024+100), need, "counters start at the next 256-byte boundary after 1000")

	_, err = Carve(Region{Ptr: 1 << 20, Size: need - 1}, r)
	var ts *WorkspaceTooSmallError
	require.ErrorAs(t, err, &ts)
	require.Equal(t, "gemm/splitk", ts.Kernel)
	require.Equal(t, "counters", ts.Part)
	require.Equal(t, need, ts.Needed)
	require.Equal(t, need-1, ts.Available)
	require.Contains(t, err.Error(), `kernel "gemm/splitk"`)
	require.Contains(t, err.Error(), `part "counters"`)

	_, err = Carve(Region{Ptr: 1 << 20, Size: 10}, r)
	require.ErrorAs(t, err, &ts)
	require.Equal(t, "partials", ts.Part, "the first part that does not fit is named")

	w, err := Carve(Region{Ptr: 1 << 20, Size: need}, r)
	require.NoError(t, err)
	require.Len(t, w.Parts(), 2)
	require.Equal(t, "gemm/splitk", w.Kernel())
}

func TestCarveAlignment(t *testing.T) {
	r := Recipe{Kernel: "k", Parts: []Part{{Name: "a", Size: 10}, {Name: "big", Size: 10, Align: 4096}}}
	need, err := r.Size()
	require.NoError(t, err)
	// Whatever 256-aligned address the region has, Size bytes suffice and parts are aligned.
	for base := Ptr(1 << 20); base < 1<<20+8192; base += 256 {
		w, err := Carve(Region{Ptr: base, Size: need}, r)
		require.NoError(t, err, "base %#x", base)
		require.Zero(t, uintptr(w.Ptr("big"))%4096)
		require.Zero(t, uintptr(w.Ptr("a"))%256)
		p := w.Parts()[1]
		require.LessOrEqual(t, p.Ptr.Add(p.Size), base.Add(need))
		require.GreaterOrEqual(t, w.Ptr("a"), base)
	}
	_, err = Carve(Region{Ptr: 1<<20 + 8, Size: need}, r)
	require.ErrorIs(t, err, ErrMisaligned)
	_, err = Carve(Region{Ptr: 1 << 20, Size: -1}, r)
	require.ErrorIs(t, err, ErrOutOfBounds)

	w, err := Carve(Region{Ptr: 1 << 20, Size: need}, r)
	require.NoError(t, err)
	_, ok := w.Part("nope")
	require.False(t, ok)
	require.Panics(t, func() { w.Ptr("nope") })
}

// checkCarving verifies a carving against its recipe: parts in order, aligned, disjoint, inside
// the region, of the recipe's sizes.
func checkCarving(t *testing.T, r Recipe, region Region, w *Workspace) {
	t.Helper()
	require.Len(t, w.Parts(), len(r.Parts))
	var prevEnd Ptr = region.Ptr
	for i, p := range w.Parts() {
		want := r.Parts[i]
		align := want.Align
		if align == 0 {
			align = DefaultPartAlign
		}
		require.Equal(t, want.Name, p.Name)
		require.Equal(t, want.Size, p.Size)
		require.Zero(t, uintptr(p.Ptr)%uintptr(align), "part %q misaligned", p.Name)
		require.GreaterOrEqual(t, p.Ptr, prevEnd, "part %q overlaps its predecessor", p.Name)
		prevEnd = p.Ptr.Add(p.Size)
		require.LessOrEqual(t, prevEnd, region.Ptr.Add(region.Size), "part %q leaves the region", p.Name)
	}
}

func randomRecipe(rng *rand.Rand) Recipe {
	r := Recipe{Kernel: "random"}
	for i := range rng.IntN(8) {
		p := Part{Name: fmt.Sprint("p", i), Size: rng.Int64N(5000)}
		if rng.IntN(3) == 0 {
			p.Align = 1 << rng.IntN(14)
		}
		r.Parts = append(r.Parts, p)
	}
	return r
}

func TestCarveRandomRecipes(t *testing.T) {
	seed := uint64(7)
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := range 2000 {
		r := randomRecipe(rng)
		need, err := r.Size()
		require.NoError(t, err, "seed %d recipe %d", seed, i)
		base := Ptr(1<<30 + 256*rng.Int64N(64))
		region := Region{Ptr: base, Size: need}
		w, err := Carve(region, r)
		require.NoError(t, err, "seed %d recipe %d: Size bytes must always suffice", seed, i)
		checkCarving(t, r, region, w)
		if need > 0 {
			_, err = Carve(Region{Ptr: base, Size: need - 1}, r)
			var ts *WorkspaceTooSmallError
			require.ErrorAs(t, err, &ts, "seed %d recipe %d: one byte less must fail", seed, i)
		}
	}
}

func FuzzCarve(f *testing.F) {
	f.Add(uint16(0), int64(100), int64(5000), uint8(3))
	f.Add(uint16(3), int64(0), int64(1), uint8(12))
	f.Fuzz(func(t *testing.T, baseUnits uint16, a, b int64, alignLog uint8) {
		r := Recipe{Kernel: "fuzz", Parts: []Part{
			{Name: "a", Size: a},
			{Name: "b", Size: b, Align: 1 << (alignLog % 20)},
		}}
		need, err := r.Size()
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidRecipe)
			return
		}
		region := Region{Ptr: Ptr(1<<40 + int64(baseUnits)*256), Size: need}
		w, err := Carve(region, r)
		require.NoError(t, err)
		checkCarving(t, r, region, w)
	})
}

func TestRegionSub(t *testing.T) {
	r := Region{Ptr: 4096, Size: 100}
	s, err := r.Sub(10, 90)
	require.NoError(t, err)
	require.Equal(t, Region{Ptr: 4106, Size: 90}, s)
	for _, c := range [][2]int64{{-1, 1}, {0, 101}, {101, 0}, {50, math.MaxInt64}} {
		_, err := r.Sub(c[0], c[1])
		require.ErrorIs(t, err, ErrOutOfBounds, "%v", c)
	}
}

func TestRecipeAlignAndAccessors(t *testing.T) {
	r := Recipe{Kernel: "k", Parts: []Part{{Name: "a", Size: 1, Align: 64}, {Name: "b", Size: 1, Align: 2048}}}
	require.Equal(t, int64(2048), r.Align())
	require.Equal(t, DefaultPartAlign, Recipe{}.Align())
	region := Region{Ptr: 1 << 20, Size: 4096}
	w, err := Carve(region, r)
	require.NoError(t, err)
	require.Equal(t, region, w.Region())
	p, ok := w.Part("b")
	require.True(t, ok)
	require.Equal(t, Region{Ptr: p.Ptr, Size: 1}, p.Region())
}
