//go:build cuda

package cuda

/*
#include <stdlib.h>
#include "cudriver.h"

typedef CUresult (*carve_param_info_fn)(CUfunction, size_t, size_t *, size_t *);

// carve_param_info finds cuFuncGetParamInfo (newer drivers than the 12.4 headers know) through
// the driver's entry-point table, or returns NULL.
static carve_param_info_fn carve_param_info(void) {
	void *fn = NULL;
#if CUDA_VERSION >= 12000
	CUdriverProcAddressQueryResult status;
	int version = 0;
	if (CARVE_CU.cuDriverGetVersion(&version) != CUDA_SUCCESS) return NULL;
	if (CARVE_CU.cuGetProcAddress("cuFuncGetParamInfo", &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
	    status != CU_GET_PROC_ADDRESS_SUCCESS) {
		return NULL;
	}
#endif
	return (carve_param_info_fn)fn;
}

// carve_param_sizes writes the sizes of f's parameters into sizes (at most max) and returns
// their count, or -1 when the driver cannot tell.
static int carve_param_sizes(CUfunction f, unsigned char *sizes, int max) {
	carve_param_info_fn info = carve_param_info();
	if (info == NULL) return -1;
	int n = 0;
	for (; n <= max; n++) {
		size_t off, size;
		if (info(f, (size_t)n, &off, &size) != CUDA_SUCCESS) break;
		if (n < max) sizes[n] = (unsigned char)size;
	}
	return n;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	acuda "carve.dev/libs/alloc/cuda"
)

// kfunc is one kernel function loaded in one context.
type kfunc struct {
	fn        C.CUfunction
	nparams   int // -1: the driver cannot report parameters, so Args are not checked
	sizes     [MaxArgs]uint8
	sharedMax uint32 // the dynamic shared memory the function is set up for (48 KiB by default)
}

// module is the embedded fatbins loaded into one device's context: loaded once, on the first
// launch, and kept until the backend closes.
type module struct {
	dev   *acuda.Device
	once  sync.Once
	err   error
	names []string
	mods  []C.CUmodule

	mu    sync.RWMutex
	funcs map[string]*kfunc
}

var modules struct {
	sync.Mutex
	m map[*acuda.Device]*module
}

// moduleOf returns dev's module, loading the fatbins on first use.
func moduleOf(dev *acuda.Device) (*module, error) {
	modules.Lock()
	if modules.m == nil {
		modules.m = map[*acuda.Device]*module{}
	}
	m := modules.m[dev]
	if m == nil {
		m = &module{dev: dev, funcs: map[string]*kfunc{}}
		modules.m[dev] = m
	}
	modules.Unlock()
	m.once.Do(m.load)
	return m, m.err
}

func (m *module) load() {
	if err := loadDriver(); err != nil {
		m.err = err
		return
	}
	bins, err := fatbins()
	if err != nil {
		m.err = err
		return
	}
	m.err = m.dev.Do(func() error {
		for _, b := range bins {
			// cuModuleLoadData reads the image during the call only.
			img := C.CBytes(b.image)
			var mod C.CUmodule
			r := C.carve_cuModuleLoadData(&mod, img)
			C.free(img)
			if err := cuCheck("cuModuleLoadData "+b.name, r); err != nil {
				return err
			}
			m.mods = append(m.mods, mod)
			m.names = append(m.names, b.name)
		}
		return nil
	})
}

// unloadModule releases dev's module, if loaded.
func unloadModule(dev *acuda.Device) error {
	modules.Lock()
	m := modules.m[dev]
	delete(modules.m, dev)
	modules.Unlock()
	if m == nil {
		return nil
	}
	var errs []error
	_ = dev.Do(func() error {
		for i, mod := range m.mods {
			errs = append(errs, cuCheck("cuModuleUnload "+m.names[i], C.carve_cuModuleUnload(mod)))
		}
		return nil
	})
	return errors.Join(errs...)
}

// function returns the named kernel; the first lookup per context searches the modules and
// reads the parameter sizes. Call it with the context current.
func (m *module) function(name string) (*kfunc, error) {
	m.mu.RLock()
	f := m.funcs[name]
	m.mu.RUnlock()
	if f != nil {
		return f, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.funcs[name]; f != nil {
		return f, nil
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	for _, mod := range m.mods {
		var fn C.CUfunction
		r := C.carve_cuModuleGetFunction(&fn, mod, cname)
		if r == C.CUDA_ERROR_NOT_FOUND {
			continue
		}
		if err := cuCheck("cuModuleGetFunction "+name, r); err != nil {
			return nil, err
		}
		f := &kfunc{fn: fn, sharedMax: 48 << 10}
		f.nparams = int(C.carve_param_sizes(fn, (*C.uchar)(unsafe.Pointer(&f.sizes[0])), MaxArgs))
		if f.nparams > MaxArgs {
			return nil, fmt.Errorf("kernel %s takes more than %d parameters", name, MaxArgs)
		}
		m.funcs[name] = f
		return f, nil
	}
	return nil, &UnknownKernelError{Kernel: name, Modules: m.names}
}

// setShared raises f's dynamic shared memory limit to n bytes (above 48 KiB the driver needs
// the opt-in). Call it with the context current.
func (m *module) setShared(name string, f *kfunc, n uint32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n <= f.sharedMax {
		return nil
	}
	if err := cuCheck("cuFuncSetAttribute "+name, C.carve_cuFuncSetAttribute(f.fn, C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, C.int(n))); err != nil {
		return err
	}
	f.sharedMax = n
	return nil
}

// DriverError is an error the CUDA driver returned to this package's calls.
type DriverError struct {
	Call string
	Code int
	Name string
}

func (e *DriverError) Error() string { return fmt.Sprintf("cuda: %s: %s (%d)", e.Call, e.Name, e.Code) }

func cuCheck(call string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	var name *C.char
	C.carve_cuGetErrorName(r, &name)
	return &DriverError{Call: call, Code: int(r), Name: C.GoString(name)}
}
