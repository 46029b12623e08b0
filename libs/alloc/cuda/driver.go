//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver.h"

carve_cu_table carve_cu;

#define CARVE_CU_STR(x) #x
#define CARVE_CU_XSTR(x) CARVE_CU_STR(x)

// carve_cu_load opens lib and resolves every entry point of CARVE_CU_FUNCS by the name the
// header maps it to (cuMemAlloc -> "cuMemAlloc_v2"). It returns 0 and fills carve_cu, 1 when
// lib does not load (the loader's message in msg), or 2 when lib lacks an entry point (its name
// in msg); on failure carve_cu is left as it was and lib is closed.
static int carve_cu_load(const char *lib, char *msg, size_t n) {
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(msg, n, "%s", e ? e : "dlopen failed");
		return 1;
	}
	carve_cu_table t;
	memset(&t, 0, sizeof t);
#define CARVE_CU_SYM(f) \
	if ((*(void **)&t.f = dlsym(h, CARVE_CU_XSTR(f))) == NULL) { \
		snprintf(msg, n, "%s", CARVE_CU_XSTR(f)); \
		dlclose(h); \
		return 2; \
	}
	CARVE_CU_FUNCS(CARVE_CU_SYM)
#undef CARVE_CU_SYM
	carve_cu = t;
	return 0;
}
*/
import "C"

import (
	"sync"
	"unsafe"
)

// The driver is loaded at run time rather than linked (-lcuda) so that one cuda build serves
// hosts with and without an NVIDIA driver: a linked libcuda.so.1 stops the program before main
// where it is missing. gorgonia.org/cu, which this package used before, links -lcuda and calls
// cuInit from its package init (exiting the process when that fails), and its 277 call sites
// call the driver's symbols directly, so keeping it off both paths would mean rewriting most of
// it; the README's GPU section gives the evidence. The shim is the table in driver.h, the one
// list of driver entry points carve calls, filled here once for every package.

// driverLibrary is the CUDA driver's shared library, as the NVIDIA driver installs it.
const driverLibrary = "libcuda.so.1"

var driverLoad struct {
	once sync.Once
	err  error
}

// loadDriver loads the CUDA driver once per process; every later call returns the first
// call's result.
func loadDriver() error {
	driverLoad.once.Do(func() { driverLoad.err = loadDriverFrom(driverLibrary) })
	return driverLoad.err
}

// loadDriverFrom fills the entry-point table from lib, or returns a *NoDriverError and leaves
// the table as it was.
func loadDriverFrom(lib string) error {
	clib := C.CString(lib)
	defer C.free(unsafe.Pointer(clib))
	var msg [512]C.char
	switch C.carve_cu_load(clib, &msg[0], C.size_t(len(msg))) {
	case 0:
		return nil
	case 1:
		return &NoDriverError{Library: lib, Reason: C.GoString(&msg[0]), CUDAVersion: int(C.CUDA_VERSION)}
	default:
		return &NoDriverError{Library: lib, Symbol: C.GoString(&msg[0]), CUDAVersion: int(C.CUDA_VERSION)}
	}
}

// DriverTable loads the CUDA driver (once per process, as Open does) and returns the address
// of the filled carve_cu_table of driver.h, or the *NoDriverError. It is for carve's other cgo
// packages (libs/kernels/cuda), which include driver.h with CARVE_CU bound to this pointer so
// that the process has one driver binding; the table is never changed after it is filled.
func DriverTable() (unsafe.Pointer, error) {
	if err := loadDriver(); err != nil {
		return nil, err
	}
	return unsafe.Pointer(&C.carve_cu), nil
}
