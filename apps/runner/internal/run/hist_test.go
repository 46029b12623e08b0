package run

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLatencyHist: the histogram's percentiles are within 1% of the exact nearest-rank ones,
// min, max and mean are exact, merging equals adding, and adding allocates nothing.
func TestLatencyHist(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var all []time.Duration
	var a, b latencyHist
	for i := range 100_000 {
		d := time.Duration(rng.ExpFloat64()*float64(300*time.Microsecond)) + 50*time.Microsecond
		all = append(all, d)
		if i%2 == 0 {
			a.add(d)
		} else {
			b.add(d)
		}
	}
	a.merge(&b)
	got, want := a.latency(), percentiles(all)
	require.Equal(t, want.Min, got.Min)
	require.Equal(t, want.Max, got.Max)
	require.InDelta(t, want.Mean, got.Mean, 1e-9)
	for _, p := range [][2]float64{{want.P50, got.P50}, {want.P90, got.P90}, {want.P99, got.P99}} {
		require.InEpsilon(t, p[0], p[1], 0.0101)
	}
	var h latencyHist
	require.Zero(t, testing.AllocsPerRun(100, func() { h.add(time.Millisecond) }))
	require.Equal(t, Latency{}, (&latencyHist{}).latency())
	h = latencyHist{}
	h.add(0)
	h.add(1000 * time.Second)
	require.Equal(t, 0.0, h.latency().Min)
	require.Equal(t, 1e6, h.latency().Max)
}
