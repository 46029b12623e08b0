// carve's one binding of the CUDA driver API: carve_cu_table, a table of entry points that
// driver.go fills from libcuda.so.1 with dlopen/dlsym at the first Open, DeviceCount or
// DriverTable, so the binary does not link libcuda and starts on hosts without an NVIDIA
// driver. Every driver entry point carve calls is listed here, once: libs/alloc/cuda's device
// calls and libs/kernels/cuda's module loads and launches (that package includes this header
// through its cudriver.h and reads the same table, from DriverTable). gorgonia.org/cu is not
// used; the README's GPU section says why. Included by cuda-tagged cgo files only.
//
// Each field is named and typed by the header's own macro expansion of the API name, so
// carve_cu_table.cuMemAlloc is the cuMemAlloc_v2 entry point with cuMemAlloc_v2's prototype,
// exactly the symbol a link against libcuda would have bound. Every call through the table
// happens after the load succeeded: Device values exist only after Open, which loads it, and
// libs/kernels/cuda binds its pointer to the table only from a successful DriverTable.
//
// CARVE_CU names the table the wrappers below call through. An includer other than this
// package defines it first (libs/kernels/cuda: (*carve_kcu), a pointer to this package's
// table); by default it is carve_cu, the table driver.go defines. cgo's C names are per
// package, so the table is shared as a pointer handed over in Go, never as a C symbol.
#ifndef CARVE_ALLOC_CUDA_DRIVER_H
#define CARVE_ALLOC_CUDA_DRIVER_H

#include <cuda.h>
#include <stddef.h>

// CARVE_CU_FUNCS lists the entry points, X(name) each.
#define CARVE_CU_FUNCS(X) \
	X(cuInit) \
	X(cuDriverGetVersion) \
	X(cuDeviceGetCount) \
	X(cuDeviceGet) \
	X(cuDeviceGetName) \
	X(cuDeviceGetAttribute) \
	X(cuDeviceTotalMem) \
	X(cuDevicePrimaryCtxRetain) \
	X(cuDevicePrimaryCtxRelease) \
	X(cuCtxSetCurrent) \
	X(cuCtxSynchronize) \
	X(cuGetErrorName) \
	X(cuGetErrorString) \
	X(cuMemAlloc) \
	X(cuMemFree) \
	X(cuMemGetInfo) \
	X(cuMemHostAlloc) \
	X(cuMemFreeHost) \
	X(cuMemcpyHtoDAsync) \
	X(cuMemcpyDtoHAsync) \
	X(cuMemcpyDtoDAsync) \
	X(cuMemsetD8Async) \
	X(cuMemsetD32Async) \
	X(cuStreamCreate) \
	X(cuStreamDestroy) \
	X(cuStreamSynchronize) \
	X(cuStreamWaitEvent) \
	X(cuStreamBeginCapture) \
	X(cuStreamEndCapture) \
	X(cuStreamIsCapturing) \
	X(cuStreamGetCaptureInfo) \
	X(cuThreadExchangeStreamCaptureMode) \
	X(cuEventCreate) \
	X(cuEventDestroy) \
	X(cuEventRecord) \
	X(cuEventQuery) \
	X(cuEventSynchronize) \
	X(cuEventElapsedTime) \
	X(cuGraphInstantiateWithFlags) \
	X(cuGraphLaunch) \
	X(cuGraphExecDestroy) \
	X(cuGraphDestroy) \
	X(cuGetProcAddress) \
	X(cuModuleLoadData) \
	X(cuModuleUnload) \
	X(cuModuleGetFunction) \
	X(cuFuncSetAttribute) \
	X(cuLaunchKernel) \
	X(cuLaunchKernelEx)

#define CARVE_CU_FIELD(f) __typeof__(&f) f;
typedef struct carve_cu_table {
	CARVE_CU_FUNCS(CARVE_CU_FIELD)
} carve_cu_table;
#undef CARVE_CU_FIELD

#ifndef CARVE_CU
// carve_cu is defined in driver.go.
extern carve_cu_table carve_cu;
#define CARVE_CU carve_cu
#endif

// Go calls these (cgo cannot call function pointers).
static inline CUresult carve_cuInit(unsigned int flags) { return CARVE_CU.cuInit(flags); }
static inline CUresult carve_cuDriverGetVersion(int *v) { return CARVE_CU.cuDriverGetVersion(v); }
static inline CUresult carve_cuDeviceGetCount(int *n) { return CARVE_CU.cuDeviceGetCount(n); }
static inline CUresult carve_cuDeviceGet(CUdevice *d, int ordinal) { return CARVE_CU.cuDeviceGet(d, ordinal); }
static inline CUresult carve_cuDeviceGetName(char *name, int len, CUdevice d) { return CARVE_CU.cuDeviceGetName(name, len, d); }
static inline CUresult carve_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) { return CARVE_CU.cuDeviceGetAttribute(v, a, d); }
static inline CUresult carve_cuDeviceTotalMem(size_t *n, CUdevice d) { return CARVE_CU.cuDeviceTotalMem(n, d); }
static inline CUresult carve_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { return CARVE_CU.cuDevicePrimaryCtxRetain(c, d); }
static inline CUresult carve_cuDevicePrimaryCtxRelease(CUdevice d) { return CARVE_CU.cuDevicePrimaryCtxRelease(d); }
static inline CUresult carve_cuCtxSetCurrent(CUcontext c) { return CARVE_CU.cuCtxSetCurrent(c); }
static inline CUresult carve_cuCtxSynchronize(void) { return CARVE_CU.cuCtxSynchronize(); }
static inline CUresult carve_cuGetErrorName(CUresult r, const char **s) { return CARVE_CU.cuGetErrorName(r, s); }
static inline CUresult carve_cuGetErrorString(CUresult r, const char **s) { return CARVE_CU.cuGetErrorString(r, s); }
static inline CUresult carve_cuMemFree(CUdeviceptr p) { return CARVE_CU.cuMemFree(p); }
static inline CUresult carve_cuMemGetInfo(size_t *free, size_t *total) { return CARVE_CU.cuMemGetInfo(free, total); }
static inline CUresult carve_cuMemHostAlloc(void **p, size_t n, unsigned int flags) { return CARVE_CU.cuMemHostAlloc(p, n, flags); }
static inline CUresult carve_cuMemFreeHost(void *p) { return CARVE_CU.cuMemFreeHost(p); }
static inline CUresult carve_cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) { return CARVE_CU.cuMemcpyHtoDAsync(dst, src, n, s); }
static inline CUresult carve_cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) { return CARVE_CU.cuMemcpyDtoHAsync(dst, src, n, s); }
static inline CUresult carve_cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { return CARVE_CU.cuMemcpyDtoDAsync(dst, src, n, s); }
static inline CUresult carve_cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) { return CARVE_CU.cuMemsetD8Async(p, v, n, s); }
static inline CUresult carve_cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream s) { return CARVE_CU.cuMemsetD32Async(p, v, n, s); }
static inline CUresult carve_cuStreamCreate(CUstream *s, unsigned int flags) { return CARVE_CU.cuStreamCreate(s, flags); }
static inline CUresult carve_cuStreamDestroy(CUstream s) { return CARVE_CU.cuStreamDestroy(s); }
static inline CUresult carve_cuStreamSynchronize(CUstream s) { return CARVE_CU.cuStreamSynchronize(s); }
static inline CUresult carve_cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) { return CARVE_CU.cuStreamWaitEvent(s, e, flags); }
static inline CUresult carve_cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) { return CARVE_CU.cuStreamBeginCapture(s, mode); }
static inline CUresult carve_cuStreamEndCapture(CUstream s, CUgraph *g) { return CARVE_CU.cuStreamEndCapture(s, g); }
static inline CUresult carve_cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status) { return CARVE_CU.cuStreamIsCapturing(s, status); }
static inline CUresult carve_cuEventCreate(CUevent *e, unsigned int flags) { return CARVE_CU.cuEventCreate(e, flags); }
static inline CUresult carve_cuEventDestroy(CUevent e) { return CARVE_CU.cuEventDestroy(e); }
static inline CUresult carve_cuEventRecord(CUevent e, CUstream s) { return CARVE_CU.cuEventRecord(e, s); }
static inline CUresult carve_cuEventQuery(CUevent e) { return CARVE_CU.cuEventQuery(e); }
static inline CUresult carve_cuEventSynchronize(CUevent e) { return CARVE_CU.cuEventSynchronize(e); }
static inline CUresult carve_cuEventElapsedTime(float *ms, CUevent start, CUevent end) { return CARVE_CU.cuEventElapsedTime(ms, start, end); }
static inline CUresult carve_cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags) { return CARVE_CU.cuGraphInstantiateWithFlags(e, g, flags); }
static inline CUresult carve_cuGraphLaunch(CUgraphExec e, CUstream s) { return CARVE_CU.cuGraphLaunch(e, s); }
static inline CUresult carve_cuGraphExecDestroy(CUgraphExec e) { return CARVE_CU.cuGraphExecDestroy(e); }
static inline CUresult carve_cuGraphDestroy(CUgraph g) { return CARVE_CU.cuGraphDestroy(g); }
static inline CUresult carve_cuModuleLoadData(CUmodule *m, const void *image) { return CARVE_CU.cuModuleLoadData(m, image); }
static inline CUresult carve_cuModuleUnload(CUmodule m) { return CARVE_CU.cuModuleUnload(m); }
static inline CUresult carve_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) { return CARVE_CU.cuModuleGetFunction(f, m, name); }
static inline CUresult carve_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) { return CARVE_CU.cuFuncSetAttribute(f, a, v); }

#endif
