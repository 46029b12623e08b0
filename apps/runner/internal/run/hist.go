package run

import (
	"math"
	"time"
)

// latencyHist counts latencies in fixed memory for timed-by-duration benchmarks (soak tests),
// whose run count is not known up front: buckets 1% wide on a log scale from 1 ns to about 100 s,
// so a percentile read from it is within 1% of the exact one, and a soak's Go heap stays flat
// however long it runs. Min, max and mean are exact. Hand-written: the logic is a few lines, and
// an HDR-histogram library would be a dependency for them.
type latencyHist struct {
	counts   [histBuckets]int64
	n        int64
	sum      time.Duration
	min, max time.Duration
}

const (
	histGrowth  = 1.01
	histBuckets = 2600 // histGrowth^2600 ns is about 174 s
)

var histLog = math.Log(histGrowth)

// bucket is the index of the bucket holding d: the smallest i with d <= histGrowth^i ns.
func bucket(d time.Duration) int {
	if d <= 1 {
		return 0
	}
	return min(int(math.Ceil(math.Log(float64(d))/histLog)), histBuckets-1)
}

func (h *latencyHist) add(d time.Duration) {
	if h.n == 0 || d < h.min {
		h.min = d
	}
	h.max = max(h.max, d)
	h.n++
	h.sum += d
	h.counts[bucket(d)]++
}

func (h *latencyHist) merge(o *latencyHist) {
	if o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
	for i, c := range o.counts {
		h.counts[i] += c
	}
}

// latency reads the nearest-rank percentiles as bucket upper bounds, clamped to [min, max].
func (h *latencyHist) latency() Latency {
	if h.n == 0 {
		return Latency{}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	rank := func(p float64) time.Duration {
		want := int64(math.Ceil(p * float64(h.n)))
		var seen int64
		for i, c := range h.counts {
			if seen += c; seen >= max(want, 1) {
				d := time.Duration(math.Pow(histGrowth, float64(i)))
				return min(max(d, h.min), h.max)
			}
		}
		return h.max
	}
	return Latency{Min: ms(h.min), Mean: ms(h.sum) / float64(h.n), P50: ms(rank(0.50)), P90: ms(rank(0.90)),
		P99: ms(rank(0.99)), Max: ms(h.max)}
}
