//go:build cuda

package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/kernels"
)

// The runner's target, read from the device, is the estimator's for the same GPU: planning
// offline agrees with running.
func TestTargetFromDevice(t *testing.T) {
	b := testBackend(t)
	tg := b.Target()
	t.Logf("target %s (%+v)", tg, tg)
	require.Equal(t, kernels.BackendCUDA, tg.Backend)
	p, err := b.dev.Properties()
	require.NoError(t, err)
	t.Logf("device %+v", p)
	if p.Name == "NVIDIA H200" {
		require.Equal(t, kernels.KnownGPUs["h200"], tg)
	}
	require.False(t, b.HostVisible())
}

// Copies round-trip through the pinned staging buffers, in pieces larger and smaller than one
// buffer, and are counted.
func TestCopiesRoundTrip(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 4096, stagingChunk, 2*stagingChunk + 12345} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		p := devBuf(t, b.dev, int64(n))
		before := b.Counters()
		require.NoError(t, b.CopyIn(p, src, s))
		clear(src[:min(n, 100)]) // CopyIn has read src already
		back := make([]byte, n)
		require.NoError(t, b.CopyOut(back, p, s))
		want := append([]byte(nil), back...)
		for i := range want[:min(n, 100)] {
			want[i] = 0
		}
		require.Equal(t, src, want, "%d bytes", n)
		after := b.Counters()
		require.Equal(t, kernels.CopyCounters{Uploads: before.Uploads + 1, UploadBytes: before.UploadBytes + int64(n),
			Downloads: before.Downloads + 1, DownloadBytes: before.DownloadBytes + int64(n)}, after)
	}
}
