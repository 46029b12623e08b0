package alloc

import (
	"errors"
	"fmt"
	"math"
)

// Region is a contiguous range of device memory. It is a plain value, safe to copy and share.
type Region struct {
	Ptr  Ptr
	Size int64
}

// Sub returns the size bytes of r starting off bytes in, or an error if they leave r.
func (r Region) Sub(off, size int64) (Region, error) {
	if off < 0 || size < 0 || off > r.Size || size > r.Size-off {
		return Region{}, fmt.Errorf("alloc: sub-region [%d, +%d) of a %d-byte region: %w", off, size, r.Size, ErrOutOfBounds)
	}
	return Region{Ptr: r.Ptr.Add(off), Size: size}, nil
}

// Bytes views r as host memory; see HostBytes for when that is valid.
func (r Region) Bytes() []byte { return HostBytes(r.Ptr, r.Size) }

// ErrOutOfBounds: an offset and size that leave their region or arena.
var ErrOutOfBounds = errors.New("out of bounds")

// ErrInvalidRecipe: a recipe with an unnamed or repeated part, a negative size, an alignment
// that is not a power of two, or a total size that overflows int64.
var ErrInvalidRecipe = errors.New("invalid workspace recipe")

// ErrMisaligned: a region to carve whose address is not a multiple of DefaultPartAlign.
var ErrMisaligned = errors.New("misaligned region")

// WorkspaceTooSmallError reports a recipe carved from a region that cannot hold it. It names
// the first part that does not fit; Needed is what the whole recipe needs (Recipe.Size).
type WorkspaceTooSmallError struct {
	Kernel    string
	Part      string
	Needed    int64
	Available int64
}

func (e *WorkspaceTooSmallError) Error() string {
	return fmt.Sprintf("alloc: workspace of kernel %q is too small: part %q does not fit; the recipe needs %d bytes (%s), the region has %d (%s)",
		e.Kernel, e.Part, e.Needed, formatBytes(e.Needed), e.Available, formatBytes(e.Available))
}

// layout is the one function that places a recipe: Size and Carve both call it, so the size a
// kernel reports and the carving it runs on cannot disagree. Parts are placed in order, each at
// the next multiple of its alignment, offsets counted from a start aligned to the recipe's
// largest alignment. place (if not nil) receives each part's offset. layout returns the end
// offset and the largest alignment.
func (r Recipe) layout(place func(i int, off int64)) (end, maxAlign int64, err error) {
	maxAlign = DefaultPartAlign
	for i, p := range r.Parts {
		if p.Name == "" {
			return 0, 0, fmt.Errorf("alloc: kernel %q: part %d has no name: %w", r.Kernel, i, ErrInvalidRecipe)
		}
		for _, q := range r.Parts[:i] {
			if q.Name == p.Name {
				return 0, 0, fmt.Errorf("alloc: kernel %q: part %q appears twice: %w", r.Kernel, p.Name, ErrInvalidRecipe)
			}
		}
		align := p.Align
		if align == 0 {
			align = DefaultPartAlign
		}
		if align < 0 || align&(align-1) != 0 {
			return 0, 0, fmt.Errorf("alloc: kernel %q: part %q: alignment %d is not a power of two: %w", r.Kernel, p.Name, p.Align, ErrInvalidRecipe)
		}
		if p.Size < 0 {
			return 0, 0, fmt.Errorf("alloc: kernel %q: part %q: size %d is negative: %w", r.Kernel, p.Name, p.Size, ErrInvalidRecipe)
		}
		maxAlign = max(maxAlign, align)
		if end > math.MaxInt64-(align-1) {
			return 0, 0, fmt.Errorf("alloc: kernel %q: part %q: offset overflows: %w", r.Kernel, p.Name, ErrInvalidRecipe)
		}
		off := (end + align - 1) &^ (align - 1)
		if p.Size > math.MaxInt64-off {
			return 0, 0, fmt.Errorf("alloc: kernel %q: part %q: size overflows: %w", r.Kernel, p.Name, ErrInvalidRecipe)
		}
		if place != nil {
			place(i, off)
		}
		end = off + p.Size
	}
	return end, maxAlign, nil
}

// Size returns the bytes a region must have to carve r, for any region whose address is a
// multiple of DefaultPartAlign (every allocator block and planned offset is): the laid-out parts
// plus, when a part asks for more than DefaultPartAlign, the padding that aligning the start may
// cost. It fails with ErrInvalidRecipe for a malformed recipe.
func (r Recipe) Size() (int64, error) {
	end, maxAlign, err := r.layout(nil)
	if err != nil {
		return 0, err
	}
	pad := maxAlign - DefaultPartAlign
	if end > math.MaxInt64-pad {
		return 0, fmt.Errorf("alloc: kernel %q: size overflows: %w", r.Kernel, ErrInvalidRecipe)
	}
	return end + pad, nil
}

// Part returns r's part called name, as Workspace.Part does for a carved one.
func (r Recipe) Part(name string) (Part, bool) {
	for _, p := range r.Parts {
		if p.Name == name {
			return p, true
		}
	}
	return Part{}, false
}

// Align returns the largest alignment r's parts ask for (at least DefaultPartAlign).
func (r Recipe) Align() int64 {
	a := DefaultPartAlign
	for _, p := range r.Parts {
		a = max(a, p.Align)
	}
	return a
}

// CarvedPart is one carved part of a Workspace.
type CarvedPart struct {
	Name string
	Ptr  Ptr
	Size int64
}

// Region returns the part as a Region.
func (p CarvedPart) Region() Region { return Region{Ptr: p.Ptr, Size: p.Size} }

// Workspace is a recipe carved from a region: each part's address and size. It is immutable and
// safe for concurrent use; the memory it names is the caller's to synchronise.
type Workspace struct {
	kernel string
	region Region
	parts  []CarvedPart
}

// Carve lays r out in region, all or nothing: either every part gets its bytes, or Carve returns
// a *WorkspaceTooSmallError naming the first part that does not fit (when region.Size is less
// than r.Size(), whatever region's address) and carves nothing. region's address must be a
// multiple of DefaultPartAlign.
func Carve(region Region, r Recipe) (*Workspace, error) {
	if region.Ptr%Ptr(DefaultPartAlign) != 0 {
		return nil, fmt.Errorf("alloc: carve kernel %q: region address %#x is not a multiple of %d: %w",
			r.Kernel, uintptr(region.Ptr), DefaultPartAlign, ErrMisaligned)
	}
	if region.Size < 0 {
		return nil, fmt.Errorf("alloc: carve kernel %q: region size %d is negative: %w", r.Kernel, region.Size, ErrOutOfBounds)
	}
	needed, err := r.Size()
	if err != nil {
		return nil, err
	}
	_, maxAlign, _ := r.layout(nil)
	worstPad := maxAlign - DefaultPartAlign
	start := int64((region.Ptr+Ptr(maxAlign-1))&^Ptr(maxAlign-1) - region.Ptr)
	w := &Workspace{kernel: r.Kernel, region: region, parts: make([]CarvedPart, len(r.Parts))}
	var tooSmall *WorkspaceTooSmallError
	r.layout(func(i int, off int64) {
		p := r.Parts[i]
		// Checked against the worst-case start, so that success never depends on the address.
		if tooSmall == nil && worstPad+off+p.Size > region.Size {
			tooSmall = &WorkspaceTooSmallError{Kernel: r.Kernel, Part: p.Name, Needed: needed, Available: region.Size}
		}
		w.parts[i] = CarvedPart{Name: p.Name, Ptr: region.Ptr.Add(start + off), Size: p.Size}
	})
	if tooSmall != nil {
		return nil, tooSmall
	}
	return w, nil
}

// Kernel returns the kernel the workspace was carved for.
func (w *Workspace) Kernel() string { return w.kernel }

// Region returns the region the workspace was carved from.
func (w *Workspace) Region() Region { return w.region }

// Parts returns the carved parts in recipe order. The slice must not be modified.
func (w *Workspace) Parts() []CarvedPart { return w.parts }

// Part returns the part called name.
func (w *Workspace) Part(name string) (CarvedPart, bool) {
	for _, p := range w.parts {
		if p.Name == name {
			return p, true
		}
	}
	return CarvedPart{}, false
}

// Ptr returns the address of the part called name. It panics if the recipe has no such part:
// part names are fixed by the kernel's code, so a wrong one is a programming error.
func (w *Workspace) Ptr(name string) Ptr { return w.mustPart(name).Ptr }

// Bytes views the part called name as host memory (see HostBytes). It panics like Ptr.
func (w *Workspace) Bytes(name string) []byte { return w.mustPart(name).Region().Bytes() }

func (w *Workspace) mustPart(name string) CarvedPart {
	p, ok := w.Part(name)
	if !ok {
		panic(fmt.Sprintf("alloc: workspace of kernel %q has no part %q", w.kernel, name))
	}
	return p
}
