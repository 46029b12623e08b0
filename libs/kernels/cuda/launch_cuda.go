//go:build cuda

package cuda

/*
#include <stdint.h>
#include <string.h>
#include "cudriver.h"

// carve_args carries a launch's parameters by value (no Go pointer crosses into C).
typedef struct { uint64_t v[40]; } carve_args; // MaxArgs

// carve_launch passes parameter i as a pointer to its 8-byte slot: the driver reads as many
// bytes as the kernel declares for the parameter (its real size: 4 for int and float, 8 for
// pointers), which is the slot's low bytes on this little-endian machine.
static CUresult carve_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream s, int n, carve_args a) {
	void *params[40];
	for (int i = 0; i < n; i++) params[i] = &a.v[i];
	return CARVE_CU.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, params, NULL);
}

// carve_launch_dependent is carve_launch with programmatic stream serialization: the kernel
// may start once every block of the kernel before it on s has executed
// griddepcontrol.launch_dependents (or exited), and waits for that kernel's completion and
// memory with griddepcontrol.wait.
static CUresult carve_launch_dependent(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream s, int n, carve_args a) {
	void *params[40];
	for (int i = 0; i < n; i++) params[i] = &a.v[i];
	CUlaunchAttribute attr;
	memset(&attr, 0, sizeof attr);
	attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
	attr.value.programmaticStreamSerializationAllowed = 1;
	CUlaunchConfig cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.gridDimX = gx, cfg.gridDimY = gy, cfg.gridDimZ = gz;
	cfg.blockDimX = bx, cfg.blockDimY = by, cfg.blockDimZ = bz;
	cfg.sharedMemBytes = shared;
	cfg.hStream = s;
	cfg.attrs = &attr;
	cfg.numAttrs = 1;
	return CARVE_CU.cuLaunchKernelEx(&cfg, f, params, NULL);
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"carve.dev/libs/alloc"
	acuda "carve.dev/libs/alloc/cuda"
)

func dimOrOne(v uint32) C.uint {
	if v == 0 {
		return 1
	}
	return C.uint(v)
}

// launchKernel is launch with the CUDA driver. Its work is allocation-free: lookups go through
// maps keyed by values, the parameters cross to C by value, and the closure run with the
// context current does not escape.
func launchKernel(s alloc.Stream, kernel string, grid, block Dim3, sharedBytes uint32, dependent bool, args []Arg) error {
	dev, err := acuda.StreamDevice(s)
	if err != nil {
		return &LaunchError{Kernel: kernel, Err: err}
	}
	raw, err := dev.RawStream(s)
	if err != nil {
		return &LaunchError{Kernel: kernel, Err: err}
	}
	m, err := moduleOf(dev)
	if err != nil {
		return &LaunchError{Kernel: kernel, Err: err}
	}
	var a C.carve_args
	for i, arg := range args {
		a.v[i] = C.uint64_t(arg.bits)
	}
	cs := *(*C.CUstream)(unsafe.Pointer(&raw))
	err = dev.Do(func() error {
		f, err := m.function(kernel)
		if err != nil {
			return err
		}
		if f.nparams >= 0 {
			if f.nparams != len(args) {
				return fmt.Errorf("%d arguments for %d parameters", len(args), f.nparams)
			}
			for i, arg := range args {
				if arg.size != f.sizes[i] {
					return fmt.Errorf("argument %d is %d bytes, the parameter %d", i, arg.size, f.sizes[i])
				}
			}
		}
		if sharedBytes > f.sharedMax {
			if err := m.setShared(kernel, f, sharedBytes); err != nil {
				return err
			}
		}
		if dependent {
			return cuCheck("cuLaunchKernelEx", C.carve_launch_dependent(f.fn, dimOrOne(grid.X), dimOrOne(grid.Y), dimOrOne(grid.Z),
				dimOrOne(block.X), dimOrOne(block.Y), dimOrOne(block.Z), C.uint(sharedBytes), cs, C.int(len(args)), a))
		}
		return cuCheck("cuLaunchKernel", C.carve_launch(f.fn, dimOrOne(grid.X), dimOrOne(grid.Y), dimOrOne(grid.Z),
			dimOrOne(block.X), dimOrOne(block.Y), dimOrOne(block.Z), C.uint(sharedBytes), cs, C.int(len(args)), a))
	})
	if err != nil {
		return &LaunchError{Kernel: kernel, Err: err}
	}
	return nil
}
