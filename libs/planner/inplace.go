package planner

// In-place buffers. A buffer that takes another's bytes (Buffer.InPlace) is placed with it: the
// solvers see each chain of such buffers as one buffer over the union of their lifetimes, and
// every buffer of the chain gets that buffer's offset. Validate's conditions make the union
// exact: the buffer taken ends at the taker's Start+1, so the chain's buffers follow each other,
// sharing one step each, and the chain needs its size at every step from its first start to its
// last end and at no other.

// hasInPlace reports whether some buffer of p takes another's bytes.
func (p Problem) hasInPlace() bool {
	for _, b := range p.Buffers {
		if b.InPlace != "" {
			return true
		}
	}
	return false
}

// mergeInPlace returns p with each chain of in-place buffers as one buffer (the chain's first,
// its End the chain's last End) and, for each buffer of p, the index of its buffer in the merged
// problem. p must be valid.
func mergeInPlace(p Problem) (Problem, []int) {
	index := make(map[string]int, len(p.Buffers))
	for i, b := range p.Buffers {
		index[b.ID] = i
	}
	// root[i] is the first buffer of i's chain; buffers taken start earlier, so the chain
	// followed back ends.
	root := make([]int, len(p.Buffers))
	var find func(i int) int
	find = func(i int) int {
		if b := p.Buffers[i]; b.InPlace != "" {
			return find(index[b.InPlace])
		}
		return i
	}
	q := Problem{Capacity: p.Capacity}
	of := make([]int, len(p.Buffers))
	at := make(map[int]int, len(p.Buffers))
	for i := range p.Buffers {
		root[i] = find(i)
		if root[i] == i {
			at[i] = len(q.Buffers)
			b := p.Buffers[i]
			b.InPlace = ""
			q.Buffers = append(q.Buffers, b)
		}
	}
	for i, b := range p.Buffers {
		of[i] = at[root[i]]
		m := &q.Buffers[of[i]]
		m.End = max(m.End, b.End)
	}
	return q, of
}

// expandOffsets gives each buffer of p the offset of its merged buffer (mergeInPlace's of).
func expandOffsets(merged []int64, of []int) []int64 {
	if merged == nil {
		return nil
	}
	out := make([]int64, len(of))
	for i, j := range of {
		out[i] = merged[j]
	}
	return out
}
