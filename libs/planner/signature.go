package planner

import (
	"encoding/binary"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Signature identifies a memory pattern: the shapes of a run's inputs, plus the scalar input
// values that change some kernel's route (and with it the workspace it needs). Runs with equal
// signatures have equal buffer sizes and lifetimes, so they can share one plan.
//
// Signatures are comparable and canonical: the same inputs and routes give the same Signature
// whatever the order they were listed in, so a Signature is a map key. The zero Signature is
// that of a run with no inputs.
type Signature struct {
	key string // the canonical encoding, see NewSignature
}

// NewSignature builds the signature of a run whose inputs have the given dims, and whose
// route-deciding scalar inputs have the given values; routes may be nil. An input and a route
// may share a name: they are kept apart.
func NewSignature(inputs map[string][]int64, routes map[string]int64) Signature {
	// The encoding is a sequence of length-prefixed fields, so no choice of names or values can
	// make two different signatures encode alike: for each input in name order 'i', the name's
	// length and bytes, the number of dims and the dims; then for each route 'r', the name and
	// the value. Integers are varints.
	var b []byte
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		dims := inputs[name]
		b = append(b, 'i')
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.AppendUvarint(b, uint64(len(dims)))
		for _, d := range dims {
			b = binary.AppendVarint(b, d)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(routes)) {
		b = append(b, 'r')
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.AppendVarint(b, routes[name])
	}
	return Signature{key: string(b)}
}

// String renders the signature for people, e.g. `input_ids[1,128] mask[1,128] past_len=0`.
func (s Signature) String() string {
	var sb strings.Builder
	b := []byte(s.key)
	field := func() string {
		n, k := binary.Uvarint(b)
		b = b[k:]
		name := string(b[:n])
		b = b[n:]
		return name
	}
	varint := func() int64 {
		v, k := binary.Varint(b)
		b = b[k:]
		return v
	}
	for len(b) > 0 {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		kind := b[0]
		b = b[1:]
		sb.WriteString(field())
		if kind == 'r' {
			sb.WriteByte('=')
			sb.WriteString(strconv.FormatInt(varint(), 10))
			continue
		}
		n, k := binary.Uvarint(b)
		b = b[k:]
		sb.WriteByte('[')
		for d := uint64(0); d < n; d++ {
			if d > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.FormatInt(varint(), 10))
		}
		sb.WriteByte(']')
	}
	return sb.String()
}
