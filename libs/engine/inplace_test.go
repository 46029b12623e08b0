package engine

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/graph/testmodels/zoo"
	"carve.dev/libs/kernels"
)

// inPlaceFamilies are the zoo families whose in-place plans TestZooInPlace runs: the vision
// models (FusedConv with Z, elementwise chains; vit_tv's attentions through their layouts) and a decoder.
var inPlaceFamilies = []string{"resnet", "mobilenet_v3", "convnext", "efficientnet", "vit", "vit_tv", "gpt2", "llama"}

// sameOutputs runs the two sessions at in and requires byte-identical outputs.
func sameOutputs(t *testing.T, m *graph.Model, off, on *Session, in map[string]kernels.Tensor, how string) {
	t.Helper()
	want, err := off.Run(context.Background(), in)
	require.NoError(t, err, "%s without in-place outputs", how)
	wantData := make([][]byte, len(want))
	for i := range want {
		wantData[i] = bytes.Clone(want[i].Data)
	}
	got, err := on.Run(context.Background(), in)
	require.NoError(t, err, "%s with in-place outputs", how)
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Shape, got[i].Shape, "%s: %s", how, m.Outputs[i].Name)
		require.True(t, bytes.Equal(wantData[i], got[i].Data), "%s: %s differs in place", how, m.Outputs[i].Name)
	}
}

// TestZooInPlace: plans whose outputs take their inputs' bytes compute the bytes the plans
// without compute, on the CPU and the simulated device, for the zoo's vision models and a
// decoder, and the arena does not grow.
func TestZooInPlace(t *testing.T) {
	forZooPrefill(t, func(t *testing.T, zm testmodels.Model) {
		if !slices.Contains(inPlaceFamilies, zm.Family) {
			t.Skip("not an in-place family")
		}
		t.Parallel()
		m, _ := loadZoo(t, zm, Options{})
		for _, dev := range []string{kernels.BackendCPU, kernels.BackendSim} {
			be, al := newHostBackend(t, dev, 1<<30)
			env := envelopeOf(zm)
			_, off := newSession(t, m, be, al, RuntimeOptions{Envelope: env, Options: Options{NoInPlace: true}})
			rt, on := newSession(t, m, be, al, RuntimeOptions{Envelope: env})
			for _, b := range zm.Bindings {
				sameOutputs(t, m, off, on, zooInputs(t, zm, m, b), dev)
				opts := rt.opts.Options
				p, err := Plan(context.Background(), m, Binding(b.Dims), opts)
				require.NoError(t, err)
				opts.NoInPlace = true
				q, err := Plan(context.Background(), m, Binding(b.Dims), opts)
				require.NoError(t, err)
				require.Zero(t, q.Lifetimes.InPlace)
				require.LessOrEqual(t, p.ArenaBytes(), q.ArenaBytes(), "%s at %v", dev, b.Dims)
				t.Logf("%s at %v: arena %d bytes in place (%d outputs), %d without", dev, b.Dims, p.ArenaBytes(), p.Lifetimes.InPlace, q.ArenaBytes())
				if zm.Family == "resnet" { // its residual sums; its arena's peak is the stem's (TestResNet50InPlace)
					require.Positive(t, p.Lifetimes.InPlace, "%s at %v", dev, b.Dims)
				}
			}
		}
	})
}

// TestFixturesInPlace: on every fixture (decoders among them) the in-place plans compute the
// bytes the plans without compute, on the CPU and the simulated device.
func TestFixturesInPlace(t *testing.T) {
	for _, fx := range testmodels.Models() {
		if len(fx.Bindings) == 0 {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			m := loadFixture(t, fx.Name)
			for _, dev := range []string{kernels.BackendCPU, kernels.BackendSim} {
				be, al := newHostBackend(t, dev, 1<<30)
				_, off := newSession(t, m, be, al, RuntimeOptions{Envelope: envelopeOf(fx), Options: Options{NoInPlace: true}})
				_, on := newSession(t, m, be, al, RuntimeOptions{Envelope: envelopeOf(fx)})
				for _, b := range fx.Bindings {
					if b.Error == "" {
						sameOutputs(t, m, off, on, fixtureInputs(t, m, b), dev)
					}
				}
			}
		})
	}
}

// TestPlanInPlaceCheck: an in-place buffer that no kernel declared is refused (checkInPlace),
// and NoInPlace plans none.
func TestPlanInPlaceCheck(t *testing.T) {
	i := slices.IndexFunc(zoo.Models(), func(zm testmodels.Model) bool { return zm.Name == "resnet.ts" })
	require.GreaterOrEqual(t, i, 0)
	zm := zoo.Models()[i]
	m, _ := loadZoo(t, zm, Options{})
	p, err := Plan(context.Background(), m, Binding(zm.Bindings[0].Dims), Options{})
	require.NoError(t, err)
	require.Positive(t, p.Lifetimes.InPlace)
	require.Positive(t, p.InPlaceBytes())
	require.NoError(t, p.checkInPlace())
	q := *p
	q.Options.NoInPlace = true
	require.ErrorContains(t, q.checkInPlace(), "which no kernel declared")
	// An alias onto a buffer that is not the declared input's.
	lt := *p.Lifetimes
	lt.Problem.Buffers = slices.Clone(p.Lifetimes.Problem.Buffers)
	var moved bool
	for i, b := range lt.Problem.Buffers {
		if b.InPlace != "" && i > 0 {
			lt.Problem.Buffers[i].InPlace = lt.Problem.Buffers[0].ID
			moved = lt.Problem.Buffers[0].ID != b.InPlace
			break
		}
	}
	require.True(t, moved)
	q = *p
	q.Lifetimes = &lt
	require.ErrorContains(t, q.checkInPlace(), "which no kernel declared")
}

// torchPeakResNet50 is PyTorch eager's peak memory beyond the weights for torchvision's
// ResNet-50 at batch 32 on an H200, in bytes (issue 28: 367.5 MiB).
const torchPeakResNet50 = 367.5 * (1 << 20)

// TestResNet50InPlace plans resnet50 at batch 32, fused as the apps fuse it, for the CPU and the
// H200 with --workspace-cap 0 (whose arena is the tight plan's, 220.5 MiB without in-place
// outputs): each bottleneck's last FusedConv writes its sum over Z, the block's input or its
// downsampled copy, and each downsampling convolution runs after the main path's first two
// (graph.LifetimesSunk's peak moves), so the arena shrinks, on the H200 to at most half
// PyTorch's peak (issue 28). At the H200's default cap the arena is cuDNN's workspace caps'.
func TestResNet50InPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ResNet-50's weights")
	}
	base := resnet50At(t, 32)
	h200 := mustTarget(t, "h200")
	for _, c := range []struct {
		name   string
		opts   Options
		shrink bool
		half   bool // at most half PyTorch's peak
	}{
		{"cpu", Options{Workers: 2}, true, true},
		{"h200 cap 0", Options{Target: h200.WithWorkspaceCap(0)}, true, true},
		{"h200", Options{Target: h200}, false, false},
	} {
		fo, err := FuseOptions(c.opts)
		require.NoError(t, err)
		m, _, err := rewrite.Fuse(base, fo)
		require.NoError(t, err)
		opts := c.opts
		p, err := Plan(context.Background(), m, Binding{}, opts)
		require.NoError(t, err)
		opts.NoInPlace = true
		q, err := Plan(context.Background(), m, Binding{}, opts)
		require.NoError(t, err)
		t.Logf("%s: arena %.1f MiB in place (%d outputs), %.1f MiB without; PyTorch %.1f MiB",
			c.name, float64(p.ArenaBytes())/(1<<20), p.Lifetimes.InPlace, float64(q.ArenaBytes())/(1<<20), float64(torchPeakResNet50)/(1<<20))
		require.GreaterOrEqual(t, p.Lifetimes.InPlace, 16, "%s: at least each bottleneck's residual sum", c.name)
		require.LessOrEqual(t, p.ArenaBytes(), q.ArenaBytes(), c.name)
		if c.shrink {
			require.Less(t, p.ArenaBytes(), q.ArenaBytes(), c.name)
		}
		if c.half {
			require.LessOrEqual(t, 2*p.ArenaBytes(), int64(torchPeakResNet50), c.name)
		}
	}
}
