package cuda

import (
	"sync"

	"carve.dev/libs/kernels"
)

// kernelSet holds the package's kernels: each kernel's file adds it from init (addKernel), and
// the registry is built from them once, on first use.
var kernelSet struct {
	sync.Mutex
	ks   []kernels.Kernel
	once sync.Once
	reg  *kernels.Registry
	err  error
}

// addKernel adds k to the CUDA kernels. Call it from init only.
func addKernel(k kernels.Kernel) {
	kernelSet.Lock()
	defer kernelSet.Unlock()
	kernelSet.ks = append(kernelSet.ks, k)
}

// Kernels returns every CUDA kernel. Kernels are immutable and safe for concurrent use.
func Kernels() []kernels.Kernel {
	kernelSet.Lock()
	defer kernelSet.Unlock()
	return append([]kernels.Kernel(nil), kernelSet.ks...)
}

// Registry returns the CUDA kernels' registry, built once. It needs no GPU.
func Registry() (*kernels.Registry, error) {
	kernelSet.once.Do(func() {
		r := kernels.NewRegistry()
		for _, k := range Kernels() {
			if err := r.Register(k); err != nil {
				kernelSet.err = err
				return
			}
		}
		kernelSet.reg = r
	})
	return kernelSet.reg, kernelSet.err
}

func init() {
	kernels.RegisterDriver(kernels.Driver{Name: kernels.BackendCUDA, Registry: Registry, Open: Open, Count: count})
}

// Open opens the CUDA backend on device opts.Ordinal. Without the cuda build tag it fails with
// a *NotBuiltError.
func Open(opts kernels.OpenOptions) (kernels.Backend, error) { return open(opts) }
