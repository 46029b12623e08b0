package alloc

import "math/bits"

// A freeIndex holds the free blocks of one heap's pool (small or large) and finds the best fit:
// the smallest free block whose size is at least the request, the lowest address among equals.
//
// Hand-written rather than a library tree because the search is the allocator's hot path and a
// segregated index does it with a few bit operations and no allocation in steady state. Block
// sizes are multiples of minBlockSize, so a size is a number of units. Units map to bins the way
// two-level segregated-fit allocators (TLSF) map sizes: below 64 units one bin per unit; above,
// 32 bins per power of two, each covering a range of sizes about 3% wide. A bitmap with a summary
// word records which bins are non-empty. Each bin is a slice sorted by (size, address), so the
// best fit is either in the request's own bin (found by binary search) or the first block of the
// next non-empty bin: the index is exactly best-fit, not approximately.
//
// A freeIndex is not safe for concurrent use; its heap's mutex guards it.
type freeIndex struct {
	bins    [numBins][]*block
	words   [numWords]uint64 // bit i of words[w]: bins[w*64+i] is non-empty
	summary uint64           // bit w: words[w] != 0
	blocks  int              // blocks held
	bytes   int64            // bytes held
}

const (
	exactBins = 64 // units below this each have their own bin
	subBins   = 32 // bins per power of two above exactBins
	subShift  = 5  // log2(subBins)
	maxLog    = 63 - minBlockShift
	numBins   = exactBins + (maxLog-6+1)*subBins
	numWords  = (numBins + 63) / 64
)

// binOf returns the bin of a block of u units (u >= 1). It is monotonic in u.
func binOf(u uint64) int {
	if u < exactBins {
		return int(u)
	}
	fl := bits.Len64(u) - 1 // >= 6
	sl := (u >> (fl - subShift)) & (subBins - 1)
	return exactBins + (fl-6)*subBins + int(sl)
}

func unitsOf(size int64) uint64 { return uint64(size) >> minBlockShift }

// search returns the position of b in bin, or where it would be inserted: the first element not
// less than b. (Hand-written because sort.Search's closure is not inlined on this hot path.)
func search(bin []*block, b *block) int {
	lo, hi := 0, len(bin)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if less(bin[m], b) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// less orders blocks by size, then address.
func less(a, b *block) bool {
	if a.size != b.size {
		return a.size < b.size
	}
	return a.ptr < b.ptr
}

func (x *freeIndex) insert(b *block) {
	i := binOf(unitsOf(b.size))
	bin := x.bins[i]
	j := search(bin, b)
	bin = append(bin, b)
	if j < len(bin)-1 { // (copy is a runtime call even when it moves nothing)
		copy(bin[j+1:], bin[j:])
		bin[j] = b
	}
	x.bins[i] = bin
	x.words[i>>6] |= 1 << (i & 63)
	x.summary |= 1 << (i >> 6)
	x.blocks++
	x.bytes += b.size
	b.indexed = true
}

func (x *freeIndex) remove(b *block) {
	i := binOf(unitsOf(b.size))
	j := search(x.bins[i], b)
	if j == len(x.bins[i]) || x.bins[i][j] != b {
		panic("alloc: free index corrupted: block not found in its bin")
	}
	x.removeAt(i, j)
}

// removeAt removes the j-th block of bin i.
func (x *freeIndex) removeAt(i, j int) {
	bin := x.bins[i]
	b := bin[j]
	if j < len(bin)-1 {
		copy(bin[j:], bin[j+1:])
	}
	bin[len(bin)-1] = nil
	bin = bin[:len(bin)-1]
	x.bins[i] = bin
	if len(bin) == 0 {
		x.words[i>>6] &^= 1 << (i & 63)
		if x.words[i>>6] == 0 {
			x.summary &^= 1 << (i >> 6)
		}
	}
	x.blocks--
	x.bytes -= b.size
	b.indexed = false
}

// takeBestFit removes and returns the smallest block of at least size bytes (lowest address
// among equals), or nil.
func (x *freeIndex) takeBestFit(size int64) *block {
	if x.blocks == 0 {
		return nil
	}
	i := binOf(unitsOf(size))
	if bin := x.bins[i]; len(bin) > 0 {
		lo, hi := 0, len(bin)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if bin[m].size < size {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo < len(bin) {
			b := bin[lo]
			x.removeAt(i, lo)
			return b
		}
	}
	n := x.nextBin(i + 1)
	if n < 0 {
		return nil
	}
	b := x.bins[n][0]
	x.removeAt(n, 0)
	return b
}

// nextBin returns the first non-empty bin at or after i, or -1.
func (x *freeIndex) nextBin(i int) int {
	if i >= numBins {
		return -1
	}
	w := i >> 6
	if m := x.words[w] & (^uint64(0) << (i & 63)); m != 0 {
		return w<<6 + bits.TrailingZeros64(m)
	}
	if w+1 >= numWords {
		return -1
	}
	s := x.summary & (^uint64(0) << (w + 1))
	if s == 0 {
		return -1
	}
	w = bits.TrailingZeros64(s)
	return w<<6 + bits.TrailingZeros64(x.words[w])
}

// each calls f for every block, smallest first; f must not modify the index.
func (x *freeIndex) each(f func(*block)) {
	for i := x.nextBin(0); i >= 0; i = x.nextBin(i + 1) {
		for _, b := range x.bins[i] {
			f(b)
		}
	}
}
