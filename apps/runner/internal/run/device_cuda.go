//go:build cuda

package run

// errCUDA is what --device cuda says until the CUDA kernels backend exists (a later issue):
// the build has CUDA support in libs/alloc, but there are no CUDA kernels to run.
var errCUDA = &UsageError{"--device cuda: the CUDA kernels backend is not implemented yet; use --device cpu"}
