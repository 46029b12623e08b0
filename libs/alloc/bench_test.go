package alloc

import (
	"fmt"
	"testing"
)

var benchSizes = []int64{4 << 10, 4 << 20}

// BenchmarkAllocFree measures one cached Alloc+Free pair on one stream.
func BenchmarkAllocFree(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			d := newCPU(b, 1<<30)
			al := newAllocator(b, d, Options{})
			s := newStream(b, d)
			a := mustAlloc(b, al, s, n)
			_ = al.Free(a)
			calls := d.Calls().Device()
			b.ReportAllocs()
			for b.Loop() {
				a, err := al.Alloc(s, n)
				if err != nil {
					b.Fatal(err)
				}
				if err := al.Free(a); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(d.Calls().Device()-calls)/float64(b.N), "devcalls/op")
		})
	}
}

// BenchmarkAllocFreeParallel measures Alloc+Free pairs from GOMAXPROCS goroutines, each on its
// own stream (the usual shape: one host goroutine per stream). Each goroutine's first pair
// obtains its segment from the device.
func BenchmarkAllocFreeParallel(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			d := newCPU(b, 1<<30)
			al := newAllocator(b, d, Options{})
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				s, err := d.NewStream()
				if err != nil {
					b.Fatal(err)
				}
				// Warm this goroutine's heap: the first allocation obtains a segment.
				if a, err := al.Alloc(s, n); err != nil || al.Free(a) != nil {
					b.Fatal(err)
				}
				for pb.Next() {
					a, err := al.Alloc(s, n)
					if err != nil {
						b.Fatal(err)
					}
					if err := al.Free(a); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkAllocFreeMixed keeps 64 allocations of assorted sizes live and replaces one per
// iteration, so the free index holds many blocks.
func BenchmarkAllocFreeMixed(b *testing.B) {
	d := newCPU(b, 1<<30)
	al := newAllocator(b, d, Options{})
	s := newStream(b, d)
	sizes := []int64{256, 1000, 4096, 10000, 64 << 10, 300 << 10, 1 << 20, 2 << 20, 5 << 20}
	live := make([]Allocation, 64)
	for i := range live {
		live[i] = mustAlloc(b, al, s, sizes[i%len(sizes)])
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		j := i % len(live)
		if err := al.Free(live[j]); err != nil {
			b.Fatal(err)
		}
		a, err := al.Alloc(s, sizes[(i*7)%len(sizes)])
		if err != nil {
			b.Fatal(err)
		}
		live[j] = a
		i++
	}
}
