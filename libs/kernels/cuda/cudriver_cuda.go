//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cudriver.h"

carve_kcu_table carve_kcu;

#define CARVE_KCU_STR(x) #x
#define CARVE_KCU_XSTR(x) CARVE_KCU_STR(x)

// carve_kcu_load opens lib and resolves every entry point of CARVE_KCU_FUNCS by the name the
// header maps it to. It returns 0 and fills carve_kcu, 1 when lib does not load (the loader's
// message in msg), or 2 when lib lacks an entry point (its name in msg); on failure carve_kcu
// is left as it was and lib is closed.
static int carve_kcu_load(const char *lib, char *msg, size_t n) {
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(msg, n, "%s", e ? e : "dlopen failed");
		return 1;
	}
	carve_kcu_table t;
	memset(&t, 0, sizeof t);
#define CARVE_KCU_SYM(f) \
	if ((*(void **)&t.f = dlsym(h, CARVE_KCU_XSTR(f))) == NULL) { \
		snprintf(msg, n, "%s", CARVE_KCU_XSTR(f)); \
		dlclose(h); \
		return 2; \
	}
	CARVE_KCU_FUNCS(CARVE_KCU_SYM)
#undef CARVE_KCU_SYM
	carve_kcu = t;
	return 0;
}
*/
import "C"

import (
	"sync"
	"unsafe"

	acuda "carve.dev/libs/alloc/cuda"
)

// The driver is loaded at run time, not linked, so that a cuda build starts on hosts without
// an NVIDIA driver (see libs/alloc/cuda's driver.go, which loads the same library for the
// device calls; by the time this package needs it a Device is open, so it is present).

// driverLibrary is the CUDA driver's shared library.
const driverLibrary = "libcuda.so.1"

var driverLoad struct {
	once sync.Once
	err  error
}

// loadDriver fills the entry-point table once per process, or returns a
// *acuda.NoDriverError (every later call returns the first call's result).
func loadDriver() error {
	driverLoad.once.Do(func() {
		clib := C.CString(driverLibrary)
		defer C.free(unsafe.Pointer(clib))
		var msg [512]C.char
		switch C.carve_kcu_load(clib, &msg[0], C.size_t(len(msg))) {
		case 0:
		case 1:
			driverLoad.err = &acuda.NoDriverError{Library: driverLibrary, Reason: C.GoString(&msg[0]), CUDAVersion: int(C.CUDA_VERSION)}
		default:
			driverLoad.err = &acuda.NoDriverError{Library: driverLibrary, Symbol: C.GoString(&msg[0]), CUDAVersion: int(C.CUDA_VERSION)}
		}
	})
	return driverLoad.err
}
