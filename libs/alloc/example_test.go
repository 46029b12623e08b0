package alloc_test

import (
	"fmt"

	"carve.dev/libs/alloc"
)

// A kernel invocation on the CPU device: workspace from the caching allocator, carved by the
// kernel's recipe, used by work queued on a stream, released when that work is done.
func Example() {
	dev, err := alloc.NewCPU(alloc.CPUConfig{Memory: 64 << 20})
	if err != nil {
		panic(err)
	}
	defer dev.Close()
	al, err := alloc.New(dev, alloc.Options{Limit: 32 << 20})
	if err != nil {
		panic(err)
	}
	defer al.Close()
	s, err := dev.NewStream()
	if err != nil {
		panic(err)
	}

	recipe := alloc.Recipe{Kernel: "softmax/rows", Parts: []alloc.Part{
		{Name: "maxima", Size: 4 * 1024},
		{Name: "sums", Size: 4 * 1024},
	}}
	scratch, ws, err := al.ScratchFor(s, recipe)
	if err != nil {
		panic(err)
	}
	var sum int
	dev.Launch(s, func() {
		sums := ws.Bytes("sums")
		for i := range sums {
			sums[i] = 1
		}
		for _, v := range sums {
			sum += int(v)
		}
	})
	scratch.Release() // in stream order: the bytes return once the launched work has run
	dev.SynchronizeStream(s)
	fmt.Println(sum, al.Stats().NumAllocs)
	// Output: 4096 1
}

func ExampleCarve() {
	r := alloc.Recipe{Kernel: "gemm/splitk", Parts: []alloc.Part{
		{Name: "partials", Size: 1000},
		{Name: "counters", Size: 64, Align: 1024},
	}}
	need, _ := r.Size()
	ws, _ := alloc.Carve(alloc.Region{Ptr: 1 << 20, Size: need}, r)
	for _, p := range ws.Parts() {
		fmt.Printf("%s at +%d, %d bytes\n", p.Name, p.Ptr-(1<<20), p.Size)
	}
	_, err := alloc.Carve(alloc.Region{Ptr: 1 << 20, Size: 1024}, r)
	fmt.Println(err)
	// Output:
	// partials at +0, 1000 bytes
	// counters at +1024, 64 bytes
	// alloc: workspace of kernel "gemm/splitk" is too small: part "partials" does not fit; the recipe needs 1856 bytes (1.8 KiB), the region has 1024 (1.0 KiB)
}

func ExampleArena() {
	dev, _ := alloc.NewCPU(alloc.CPUConfig{Memory: 16 << 20})
	defer dev.Close()
	al, _ := alloc.New(dev, alloc.Options{})
	defer al.Close()
	// A planner placed two buffers at offsets 0 and 4096 in a plan of 8 KiB.
	arena, err := al.ReserveArena(8 << 10)
	if err != nil {
		panic(err)
	}
	defer arena.Release()
	a, _ := arena.Bind(0, 4096)
	b, _ := arena.Bind(4096, 4096)
	_, err = arena.Bind(4096, 8192)
	fmt.Println(b-a, err)
	_, err = al.ReserveArena(1 << 30)
	fmt.Println(err)
	// Output:
	// 4096 alloc: bind [4096, +8192) in an arena of 8192 bytes: out of bounds
	// alloc: cannot reserve an arena of 1073741824 bytes (1.0 GiB): 16769024 bytes (16.0 MiB) available; the device has 16.0 MiB free; plan for a smaller binding, free memory held elsewhere, or raise the limit
}
