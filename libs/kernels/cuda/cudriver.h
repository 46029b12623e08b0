// The CUDA driver API as this package calls it: through carve_kcu, a table of entry points that
// cudriver_cuda.go fills from libcuda.so.1 with dlopen/dlsym before the first module load, so
// the binary does not link libcuda (libs/alloc/cuda's driver.h does the same for the device
// calls; cgo's C names are per package, so each package keeps its own table). Included by the
// package's cuda-tagged cgo files only.
//
// Each field is named and typed by the header's own macro expansion of the API name
// (cuGetProcAddress is cuGetProcAddress_v2), exactly the symbol a link against libcuda would
// have bound. Every call through the table happens after carve_kcu_load succeeded: launches
// and module lookups go through moduleOf, which loads it first.
#ifndef CARVE_KERNELS_CUDA_CUDRIVER_H
#define CARVE_KERNELS_CUDA_CUDRIVER_H

#include <cuda.h>

// CARVE_KCU_FUNCS lists the entry points, X(name) each.
#define CARVE_KCU_FUNCS(X) \
	X(cuGetErrorName) \
	X(cuDriverGetVersion) \
	X(cuGetProcAddress) \
	X(cuModuleLoadData) \
	X(cuModuleUnload) \
	X(cuModuleGetFunction) \
	X(cuFuncSetAttribute) \
	X(cuLaunchKernel) \
	X(cuLaunchKernelEx)

#define CARVE_KCU_FIELD(f) __typeof__(&f) f;
typedef struct {
	CARVE_KCU_FUNCS(CARVE_KCU_FIELD)
} carve_kcu_table;
#undef CARVE_KCU_FIELD

// carve_kcu is defined in cudriver_cuda.go.
extern carve_kcu_table carve_kcu;

// Go calls these (cgo cannot call function pointers).
static inline CUresult carve_cuGetErrorName(CUresult r, const char **s) { return carve_kcu.cuGetErrorName(r, s); }
static inline CUresult carve_cuModuleLoadData(CUmodule *m, const void *image) { return carve_kcu.cuModuleLoadData(m, image); }
static inline CUresult carve_cuModuleUnload(CUmodule m) { return carve_kcu.cuModuleUnload(m); }
static inline CUresult carve_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) { return carve_kcu.cuModuleGetFunction(f, m, name); }
static inline CUresult carve_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) { return carve_kcu.cuFuncSetAttribute(f, a, v); }

#endif
