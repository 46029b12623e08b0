package cpu

import (
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/par"
)

// convWorkers is the worker count BenchmarkConvResNet50 selects for (0: GOMAXPROCS). With the
// build tag parsim, -convworkers 16 estimates 16 cores' times on a smaller machine (from CPU
// time, so other work on a shared machine does not count):
//
//	go test -tags parsim ./libs/kernels/cpu/ -run XXX -bench ConvResNet50 -cpu 1 -convworkers 16
var convWorkers = flag.Int("convworkers", 0, "workers BenchmarkConvResNet50 selects for (0: GOMAXPROCS)")

// resnetConv is one distinct Conv of torchvision's ResNet-50 at batch 1, 224 x 224 (v1.5: the
// stride on the 3 x 3), batch norms folded (so every one has a bias), and how many of the
// network's 53 convolutions have its shape.
type resnetConv struct {
	name      string
	cin, cout int64
	k, s, h   int64 // kernel, stride, input height (= width)
	count     int
}

var resnet50Convs = []resnetConv{
	{"stem7x7s2", 3, 64, 7, 2, 224, 1},
	{"l1.1x1.64-64", 64, 64, 1, 1, 56, 1},
	{"l1.3x3.64", 64, 64, 3, 1, 56, 3},
	{"l1.1x1.64-256", 64, 256, 1, 1, 56, 4},
	{"l1.1x1.256-64", 256, 64, 1, 1, 56, 2},
	{"l2.1x1.256-128", 256, 128, 1, 1, 56, 1},
	{"l2.3x3s2.128", 128, 128, 3, 2, 56, 1},
	{"l2.1x1.128-512", 128, 512, 1, 1, 28, 4},
	{"l2.1x1s2.256-512", 256, 512, 1, 2, 56, 1},
	{"l2.1x1.512-128", 512, 128, 1, 1, 28, 3},
	{"l2.3x3.128", 128, 128, 3, 1, 28, 3},
	{"l3.1x1.512-256", 512, 256, 1, 1, 28, 1},
	{"l3.3x3s2.256", 256, 256, 3, 2, 28, 1},
	{"l3.1x1.256-1024", 256, 1024, 1, 1, 14, 6},
	{"l3.1x1s2.512-1024", 512, 1024, 1, 2, 28, 1},
	{"l3.1x1.1024-256", 1024, 256, 1, 1, 14, 5},
	{"l3.3x3.256", 256, 256, 3, 1, 14, 5},
	{"l4.1x1.1024-512", 1024, 512, 1, 1, 14, 1},
	{"l4.3x3s2.512", 512, 512, 3, 2, 14, 1},
	{"l4.1x1.512-2048", 512, 2048, 1, 1, 7, 3},
	{"l4.1x1s2.1024-2048", 1024, 2048, 1, 2, 14, 1},
	{"l4.1x1.2048-512", 2048, 512, 1, 1, 7, 2},
	{"l4.3x3.512", 512, 512, 3, 1, 7, 2},
}

func (c resnetConv) convCase() convCase {
	p := (c.k - 1) / 2
	return convCase{x: []int64{1, c.cin, c.h, c.h}, w: []int64{c.cout, c.cin, c.k, c.k},
		strides: []int64{c.s, c.s}, pads: []int64{p, p, p, p}, bias: true}
}

func (c resnetConv) flops() float64 {
	oh := (c.h+2*((c.k-1)/2)-c.k)/c.s + 1
	return float64(2 * c.cout * oh * oh * c.cin * c.k * c.k)
}

// benchConv is one selected Conv with its operands, outputs and carved workspace.
type benchConv struct {
	inst    kernels.Instance
	in, out []kernels.Tensor
	ws      *alloc.Workspace
	keep    []byte
}

func newBenchConv(b *testing.B, r *rand.Rand, c convCase, workers int) *benchConv {
	n, yshape := c.node(true)
	inst, err := registry.Select(n, kernels.CPU(workers))
	if err != nil {
		b.Fatal(err)
	}
	bc := &benchConv{inst: inst, in: []kernels.Tensor{randF32(r, c.x...), randF32(r, c.w...), randF32(r, c.w[0])},
		out: []kernels.Tensor{kernels.MustTensor(graph.Float32, yshape...)}}
	size, _ := inst.Recipe().Size()
	var reg alloc.Region
	reg, bc.keep = region(size)
	if size > 0 {
		if bc.ws, err = alloc.Carve(reg, inst.Recipe()); err != nil {
			b.Fatal(err)
		}
	}
	return bc
}

func (bc *benchConv) run(b *testing.B) {
	if err := bc.inst.Run(bc.in, bc.out, bc.ws, 0); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkConvResNet50: each distinct Conv of ResNet-50 (batch 1, 224 x 224) on GOMAXPROCS
// workers (run it with -cpu) or -convworkers, and "all": the network's 53 convolutions one after
// another.
func BenchmarkConvResNet50(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range resnet50Convs {
		b.Run(c.name, func(b *testing.B) {
			bc := newBenchConv(b, r, c.convCase(), *convWorkers)
			b.ReportAllocs()
			b.ResetTimer()
			best := time.Duration(1 << 62)
			for range b.N {
				t0, s0 := par.SimNow(), par.SimAdjust()
				bc.run(b)
				best = min(best, time.Duration(par.SimNow()-t0+par.SimAdjust()-s0))
			}
			b.StopTimer()
			reportBest(b, best, c.flops())
			b.Logf("tactic %s", bc.inst.Tactic())
		})
	}
	b.Run("all", func(b *testing.B) {
		var convs []*benchConv
		var flops float64
		for _, c := range resnet50Convs {
			for range c.count {
				convs = append(convs, newBenchConv(b, r, c.convCase(), *convWorkers))
				flops += c.flops()
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		best := time.Duration(1 << 62)
		for range b.N {
			t0, s0 := par.SimNow(), par.SimAdjust()
			for _, bc := range convs {
				bc.run(b)
			}
			best = min(best, time.Duration(par.SimNow()-t0+par.SimAdjust()-s0))
		}
		b.StopTimer()
		reportBest(b, best, flops)
	})
}

// reportBest reports the fastest iteration (min-ns/op) and its rate: on a machine shared with
// other work the mean mostly measures the other work. With the build tag parsim, an
// iteration's time is its CPU time with its loops' simulated (par.SimNow, par.SimAdjust).
func reportBest(b *testing.B, best time.Duration, flops float64) {
	b.ReportMetric(float64(best.Nanoseconds()), "min-ns/op")
	b.ReportMetric(flops/best.Seconds()/1e9, "GFLOP/s")
}

// BenchmarkConvDepthwise: depthwise convolutions of MobileNetV2 (3 x 3, stride 1 and 2) and
// ConvNeXt-T (7 x 7) at batch 1, on GOMAXPROCS workers or -convworkers.
func BenchmarkConvDepthwise(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name        string
		ch, k, s, h int64
	}{{"mbv2.3x3.144@56", 144, 3, 1, 56}, {"mbv2.3x3s2.144@56", 144, 3, 2, 56}, {"mbv2.3x3.960@7", 960, 3, 1, 7}, {"convnext.7x7.96@56", 96, 7, 1, 56}} {
		b.Run(c.name, func(b *testing.B) {
			p := (c.k - 1) / 2
			cc := convCase{x: []int64{1, c.ch, c.h, c.h}, w: []int64{c.ch, 1, c.k, c.k}, group: c.ch,
				strides: []int64{c.s, c.s}, pads: []int64{p, p, p, p}, bias: true}
			bc := newBenchConv(b, r, cc, *convWorkers)
			oh := (c.h+2*p-c.k)/c.s + 1
			best := time.Duration(1 << 62)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t0, s0 := par.SimNow(), par.SimAdjust()
				bc.run(b)
				best = min(best, time.Duration(par.SimNow()-t0+par.SimAdjust()-s0))
			}
			b.StopTimer()
			reportBest(b, best, float64(2*c.ch*oh*oh*c.k*c.k))
		})
	}
}
