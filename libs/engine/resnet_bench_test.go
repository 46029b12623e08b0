package engine

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
)

// resnetWorkers is the worker count BenchmarkResNet50CPU runs on (0: GOMAXPROCS). With the
// build tag parsim (see package par), a run's time is its CPU time with its loops' simulated,
// so -resnetworkers 16 estimates 16 cores' latency on a smaller machine, and other work on a
// shared machine does not count:
//
//	go test -tags parsim ./libs/engine/ -run XXX -bench ResNet50CPU -cpu 1 -resnetworkers 16
var (
	resnetWorkers = flag.Int("resnetworkers", 0, "workers BenchmarkResNet50CPU runs on (0: GOMAXPROCS)")
	resnetNoFuse  = flag.Bool("resnetnofuse", false, "BenchmarkResNet50CPU runs the graph as built, unfused")
)

// resnet50 is torchvision's ResNet-50 (v1.5, batch norms folded into the convolutions' biases,
// as rewrite folds them) at batch 1, 224 x 224, random weights: 53 Conv, 49 Relu, 16 Add, a
// MaxPool, a GlobalAveragePool, Flatten and the classifier's Gemm.
func resnet50(t testing.TB) *graph.Model { return resnet50At(t, 1) }

// resnet50At is resnet50 at batch n.
func resnet50At(t testing.TB, n int64) *graph.Model {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	s := graph.Spec{
		Inputs:  []graph.ValueSpec{{Name: "pixel_values", DType: graph.Float32, Shape: graph.Shape{graph.Const(n), graph.Const(3), graph.Const(224), graph.Const(224)}}},
		Outputs: []string{"logits"},
		Opsets:  map[string]int64{"": 18},
	}
	ints := func(name string, v ...int64) graph.Attribute {
		return graph.Attribute{Name: name, Kind: graph.AttrInts, Ints: v}
	}
	weight := func(name string, scale float64, shape ...int64) string {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		data := make([]float32, n)
		for i := range data {
			data[i] = float32(r.NormFloat64() * scale)
		}
		w, err := graph.NewTensor(name, graph.Float32, shape, kernels.BytesOf(data))
		require.NoError(t, err)
		s.Initializers = append(s.Initializers, w)
		return name
	}
	id := 0
	op := func(typ string, ins []string, attrs ...graph.Attribute) string {
		id++
		out := fmt.Sprintf("%s_%d", typ, id)
		s.Nodes = append(s.Nodes, graph.NodeSpec{Name: out, OpType: typ, Inputs: ins, Outputs: []string{out}, Attrs: graph.NewAttributes(attrs...)})
		return out
	}
	conv := func(x string, cin, cout, k, stride int64) string {
		p := (k - 1) / 2
		// He's initialization: activations stay O(1) (smaller weights would shrink them layer by
		// layer into denormals, which cost far more to multiply)
		w := weight(fmt.Sprintf("w%d", id+1), math.Sqrt(2/float64(cin*k*k)), cout, cin, k, k)
		b := weight(fmt.Sprintf("b%d", id+1), 0.1, cout)
		return op("Conv", []string{x, w, b}, ints("kernel_shape", k, k), ints("strides", stride, stride), ints("pads", p, p, p, p))
	}
	relu := func(x string) string { return op("Relu", []string{x}) }
	x := relu(conv("pixel_values", 3, 64, 7, 2))
	x = op("MaxPool", []string{x}, ints("kernel_shape", 3, 3), ints("strides", 2, 2), ints("pads", 1, 1, 1, 1))
	in := int64(64)
	for _, l := range []struct{ planes, blocks, stride int64 }{{64, 3, 1}, {128, 4, 2}, {256, 6, 2}, {512, 3, 2}} {
		for b := range l.blocks {
			st := int64(1)
			if b == 0 {
				st = l.stride
			}
			y := relu(conv(x, in, l.planes, 1, 1))
			y = relu(conv(y, l.planes, l.planes, 3, st))
			y = conv(y, l.planes, 4*l.planes, 1, 1)
			skip := x
			if b == 0 {
				skip = conv(x, in, 4*l.planes, 1, st)
			}
			x = relu(op("Add", []string{y, skip}))
			in = 4 * l.planes
		}
	}
	x = op("Flatten", []string{op("GlobalAveragePool", []string{x})})
	op("Gemm", []string{x, weight("fc_w", 0.02, 1000, 2048), weight("fc_b", 0.1, 1000)}, graph.Attribute{Name: "transB", Kind: graph.AttrInt, Int: 1})
	s.Nodes[len(s.Nodes)-1].Outputs = []string{"logits"}
	m, err := graph.Build(s)
	require.NoError(t, err)
	return m
}

// BenchmarkResNet50CPU runs resnet50, fused as the apps fuse it (unless -resnetnofuse), on a
// CPU session of -resnetworkers workers and reports
// the fastest run (min-ms/run; on a machine shared with other work the mean mostly measures
// the other work), and with -cpuprofile where the time goes.
func BenchmarkResNet50CPU(b *testing.B) {
	m := resnet50(b)
	if !*resnetNoFuse { // fused as the apps fuse it for the target
		fo, err := FuseOptions(Options{Workers: *resnetWorkers})
		require.NoError(b, err)
		f, rep, err := rewrite.Fuse(m, fo)
		require.NoError(b, err)
		m = f
		b.Logf("fused: %d conv-relu, %d nodes", rep.Count(rewrite.ConvRelu), rep.NodesAfter)
	}
	be, err := cpu.Open(kernels.OpenOptions{Memory: 1 << 30, Workers: *resnetWorkers})
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, be.Close()) })
	al, err := alloc.New(be.Device(), alloc.Options{})
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, al.Close()) })
	_, s := newSession(b, m, be, al, RuntimeOptions{Options: Options{Workers: *resnetWorkers}})
	x := kernels.MustTensor(graph.Float32, 1, 3, 224, 224)
	xs := x.Float32s()
	r := rand.New(rand.NewPCG(3, 4))
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	in := map[string]kernels.Tensor{"pixel_values": x}
	_, err = s.Run(context.Background(), in) // plans and binds
	require.NoError(b, err)
	best := time.Duration(1 << 62)
	b.ResetTimer()
	for range b.N {
		t0, s0 := cpu.ParSimNow(), cpu.ParSimAdjust()
		if _, err := s.Run(context.Background(), in); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Duration(cpu.ParSimNow()-t0+cpu.ParSimAdjust()-s0))
	}
	b.ReportMetric(float64(best.Microseconds())/1e3, "min-ms/run")
}
