// The CUDA driver API as this package calls it: through carve_cu, a table of entry points that
// driver.go fills from libcuda.so.1 with dlopen/dlsym at the first Open or DeviceCount, so the
// binary does not link libcuda and starts on hosts without an NVIDIA driver. Included by the
// package's cuda-tagged cgo files only.
//
// Each field is named and typed by the header's own macro expansion of the API name, so
// carve_cu.cuMemAlloc is the cuMemAlloc_v2 entry point with cuMemAlloc_v2's prototype, exactly
// the symbol a link against libcuda would have bound. Every call through the table happens
// after carve_cu_load succeeded: Device values exist only after Open, which loads it.
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
	X(cuGraphDestroy)

#define CARVE_CU_FIELD(f) __typeof__(&f) f;
typedef struct {
	CARVE_CU_FUNCS(CARVE_CU_FIELD)
} carve_cu_table;
#undef CARVE_CU_FIELD

// carve_cu is defined in driver.go.
extern carve_cu_table carve_cu;

// Go calls these (cgo cannot call function pointers).
static inline CUresult carve_cuInit(unsigned int flags) { return carve_cu.cuInit(flags); }
static inline CUresult carve_cuDriverGetVersion(int *v) { return carve_cu.cuDriverGetVersion(v); }
static inline CUresult carve_cuDeviceGetCount(int *n) { return carve_cu.cuDeviceGetCount(n); }
static inline CUresult carve_cuDeviceGet(CUdevice *d, int ordinal) { return carve_cu.cuDeviceGet(d, ordinal); }
static inline CUresult carve_cuDeviceGetName(char *name, int len, CUdevice d) { return carve_cu.cuDeviceGetName(name, len, d); }
static inline CUresult carve_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) { return carve_cu.cuDeviceGetAttribute(v, a, d); }
static inline CUresult carve_cuDeviceTotalMem(size_t *n, CUdevice d) { return carve_cu.cuDeviceTotalMem(n, d); }
static inline CUresult carve_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { return carve_cu.cuDevicePrimaryCtxRetain(c, d); }
static inline CUresult carve_cuDevicePrimaryCtxRelease(CUdevice d) { return carve_cu.cuDevicePrimaryCtxRelease(d); }
static inline CUresult carve_cuCtxSetCurrent(CUcontext c) { return carve_cu.cuCtxSetCurrent(c); }
static inline CUresult carve_cuCtxSynchronize(void) { return carve_cu.cuCtxSynchronize(); }
static inline CUresult carve_cuGetErrorName(CUresult r, const char **s) { return carve_cu.cuGetErrorName(r, s); }
static inline CUresult carve_cuGetErrorString(CUresult r, const char **s) { return carve_cu.cuGetErrorString(r, s); }
static inline CUresult carve_cuMemFree(CUdeviceptr p) { return carve_cu.cuMemFree(p); }
static inline CUresult carve_cuMemGetInfo(size_t *free, size_t *total) { return carve_cu.cuMemGetInfo(free, total); }
static inline CUresult carve_cuMemHostAlloc(void **p, size_t n, unsigned int flags) { return carve_cu.cuMemHostAlloc(p, n, flags); }
static inline CUresult carve_cuMemFreeHost(void *p) { return carve_cu.cuMemFreeHost(p); }
static inline CUresult carve_cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) { return carve_cu.cuMemcpyHtoDAsync(dst, src, n, s); }
static inline CUresult carve_cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) { return carve_cu.cuMemcpyDtoHAsync(dst, src, n, s); }
static inline CUresult carve_cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { return carve_cu.cuMemcpyDtoDAsync(dst, src, n, s); }
static inline CUresult carve_cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) { return carve_cu.cuMemsetD8Async(p, v, n, s); }
static inline CUresult carve_cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream s) { return carve_cu.cuMemsetD32Async(p, v, n, s); }
static inline CUresult carve_cuStreamCreate(CUstream *s, unsigned int flags) { return carve_cu.cuStreamCreate(s, flags); }
static inline CUresult carve_cuStreamDestroy(CUstream s) { return carve_cu.cuStreamDestroy(s); }
static inline CUresult carve_cuStreamSynchronize(CUstream s) { return carve_cu.cuStreamSynchronize(s); }
static inline CUresult carve_cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) { return carve_cu.cuStreamWaitEvent(s, e, flags); }
static inline CUresult carve_cuStreamBeginCapture(CUstream s, CUstreamCaptureMode mode) { return carve_cu.cuStreamBeginCapture(s, mode); }
static inline CUresult carve_cuStreamEndCapture(CUstream s, CUgraph *g) { return carve_cu.cuStreamEndCapture(s, g); }
static inline CUresult carve_cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status) { return carve_cu.cuStreamIsCapturing(s, status); }
static inline CUresult carve_cuEventCreate(CUevent *e, unsigned int flags) { return carve_cu.cuEventCreate(e, flags); }
static inline CUresult carve_cuEventDestroy(CUevent e) { return carve_cu.cuEventDestroy(e); }
static inline CUresult carve_cuEventRecord(CUevent e, CUstream s) { return carve_cu.cuEventRecord(e, s); }
static inline CUresult carve_cuEventQuery(CUevent e) { return carve_cu.cuEventQuery(e); }
static inline CUresult carve_cuEventSynchronize(CUevent e) { return carve_cu.cuEventSynchronize(e); }
static inline CUresult carve_cuEventElapsedTime(float *ms, CUevent start, CUevent end) { return carve_cu.cuEventElapsedTime(ms, start, end); }
static inline CUresult carve_cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags) { return carve_cu.cuGraphInstantiateWithFlags(e, g, flags); }
static inline CUresult carve_cuGraphLaunch(CUgraphExec e, CUstream s) { return carve_cu.cuGraphLaunch(e, s); }
static inline CUresult carve_cuGraphExecDestroy(CUgraphExec e) { return carve_cu.cuGraphExecDestroy(e); }
static inline CUresult carve_cuGraphDestroy(CUgraph g) { return carve_cu.cuGraphDestroy(g); }

#endif
