package generate

import (
	"math"
	"math/rand/v2"
)

// A Sampler chooses a token from one sequence's logits.
type Sampler interface {
	Pick(logits []float32) int64
}

// Greedy picks the most likely token (the first of equals), as onnxruntime's greedy search does.
type Greedy struct{}

// Pick returns the index of the largest logit.
func (Greedy) Pick(logits []float32) int64 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int64(best)
}

// TopK samples among the K most likely tokens after dividing the logits by Temperature, from a
// seeded generator: the same seed gives the same tokens. Make it with NewTopK.
type TopK struct {
	K           int
	Temperature float64
	rng         *rand.Rand
	idx         []int
	p           []float64
}

// NewTopK returns a TopK sampler; k < 1 means every token, temperature <= 0 means 1.
func NewTopK(k int, temperature float64, seed uint64) *TopK {
	if temperature <= 0 {
		temperature = 1
	}
	return &TopK{K: k, Temperature: temperature, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Pick samples a token. It allocates only at its first call for a vocabulary size.
func (t *TopK) Pick(logits []float32) int64 {
	k := t.K
	if k < 1 || k > len(logits) {
		k = len(logits)
	}
	if cap(t.idx) < k {
		t.idx, t.p = make([]int, 0, k), make([]float64, k)
	}
	// Keep the k largest in t.idx, largest first (insertion: k is small in practice).
	idx := t.idx[:0]
	for i, v := range logits {
		if len(idx) == k && v <= logits[idx[k-1]] {
			continue
		}
		j := len(idx)
		if j < k {
			idx = append(idx, i)
		} else {
			j = k - 1
		}
		for j > 0 && logits[idx[j-1]] < v {
			idx[j] = idx[j-1]
			j--
		}
		idx[j] = i
	}
	t.idx = idx
	top := float64(logits[idx[0]])
	var sum float64
	for j, i := range idx {
		t.p[j] = math.Exp((float64(logits[i]) - top) / t.Temperature)
		sum += t.p[j]
	}
	r := t.rng.Float64() * sum
	for j, i := range idx {
		if r -= t.p[j]; r < 0 {
			return int64(i)
		}
	}
	return int64(idx[len(idx)-1])
}
