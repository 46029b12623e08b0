// Package cuda is carve's NVIDIA GPU kernel backend: the kernels of the op set as CUDA C++
// (csrc/*.cu, compiled by nvcc inside the build into fatbins embedded in the binary) and cuBLAS
// GEMMs, each with the same workspace contract as the CPU kernels.
//
// The package is split by build tag so that planning never needs a GPU:
//
//   - Without the cuda tag (the default build) it holds everything that is pure Go: every
//     kernel's Select, Bound and Recipe, and a kernels.Driver registered in init whose Registry
//     works anywhere (the estimator plans for an H200 on a CPU-only machine) and whose Open
//     fails with a *NotBuiltError.
//   - With the cuda tag it adds the Backend over libs/alloc/cuda's Device, the fatbin loading,
//     the launch helper and the cuBLAS and cuDNN bindings; the CUDA driver, cuBLASLt and cuDNN
//     are loaded at run time with dlopen (the driver through libs/alloc/cuda's one table, bound
//     in cudriver_cuda.go; cuBLASLt in cublas_cuda.go; cuDNN, optional, in cudnn_cuda.go: without
//     it the convolutions run kernels of ours), so a cuda build starts without them.
//
// Invariants:
//  1. Select, Bound and Recipe are pure functions of the node and the kernels.Target; nothing
//     in them asks the device, so the estimator and the runner agree to the byte.
//  2. A kernel's Run only enqueues work on the stream it is given: it never allocates device
//     memory, never synchronizes, and uses workspace only from the carved Recipe.
//  3. launch does not allocate on the Go heap (checked by a cuda test), so a kernel sequence can
//     run and be captured without garbage.
//
// Conventions for kernel sources: every csrc/*.cu file is compiled and embedded (one fatbin per
// file, sm_90a machine code plus compute_90 PTX); kernels are `extern "C" __global__` functions
// named carve_*; device helpers shared between files live in csrc/*.cuh; helpers private to a
// file are static or in an anonymous namespace.
package cuda
