package run

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"github.com/x448/float16"
)

// RandomInputs makes deterministic inputs for m at binding dims: the same (model, dims, seed)
// always gives the same bytes, and each input's values depend only on its name, shape and
// the seed. Integer inputs that index an embedding table (found through views and casts to a
// Gather whose data is a weight) are uniform over the table's rows, so token ids stay within
// the vocabulary; inputs named like a mask are all ones (true); other integers are 0 or 1;
// floats are uniform in [-1, 1).
func RandomInputs(m *graph.Model, dims engine.Binding, seed uint64) (map[string]kernels.Tensor, error) {
	out := map[string]kernels.Tensor{}
	for _, v := range m.Inputs {
		shape, err := v.Shape.Eval(dims)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", v.Name, err)
		}
		t, err := kernels.NewTensor(v.DType, shape...)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", v.Name, err)
		}
		h := fnv.New64a()
		h.Write([]byte(v.Name))
		rng := rand.New(rand.NewPCG(seed, h.Sum64()))
		mask := strings.Contains(strings.ToLower(v.Name), "mask")
		hi := int64(2) // integers: [0, hi)
		if rows := graph.IndexRange(v); rows > 0 {
			hi = rows
		}
		switch v.DType {
		case graph.Int64:
			fillInts(t.Int64s(), mask, hi, rng)
		case graph.Int32:
			fillInts(t.Int32s(), mask, min(hi, math.MaxInt32), rng)
		case graph.Int16:
			fillInts(kernels.ViewAs[int16](t.Data), mask, min(hi, math.MaxInt16), rng)
		case graph.Int8:
			fillInts(kernels.ViewAs[int8](t.Data), mask, min(hi, math.MaxInt8), rng)
		case graph.Uint8:
			fillInts(t.Data, mask, min(hi, math.MaxUint8), rng)
		case graph.Uint16:
			fillInts(t.Uint16s(), mask, min(hi, math.MaxUint16), rng)
		case graph.Uint32:
			fillInts(kernels.ViewAs[uint32](t.Data), mask, min(hi, math.MaxUint32), rng)
		case graph.Uint64:
			fillInts(kernels.ViewAs[uint64](t.Data), mask, hi, rng)
		case graph.Bool:
			for i := range t.Data {
				if mask || rng.IntN(2) == 1 {
					t.Data[i] = 1
				}
			}
		case graph.Float32:
			for i := range t.Float32s() {
				t.Float32s()[i] = uniform(rng, mask)
			}
		case graph.Float64:
			for i := range t.Float64s() {
				t.Float64s()[i] = float64(uniform(rng, mask))
			}
		case graph.Float16:
			for i := range t.Uint16s() {
				t.Uint16s()[i] = float16.Fromfloat32(uniform(rng, mask)).Bits()
			}
		case graph.BFloat16:
			for i := range t.Uint16s() {
				t.Uint16s()[i] = uint16(math.Float32bits(uniform(rng, mask)) >> 16)
			}
		default:
			return nil, fmt.Errorf("input %q: cannot make random values of dtype %s: give it with --input", v.Name, v.DType)
		}
		out[v.Name] = t
	}
	return out, nil
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

func fillInts[E integer](s []E, mask bool, hi int64, rng *rand.Rand) {
	for i := range s {
		if mask {
			s[i] = 1
		} else {
			s[i] = E(rng.Int64N(hi))
		}
	}
}

// uniform is a float in [-1, 1), or 1 for a mask.
func uniform(rng *rand.Rand, mask bool) float32 {
	if mask {
		return 1
	}
	return float32(rng.Float64()*2 - 1)
}
