//go:build cuda

package cuda

/*
#cgo CFLAGS: -I${SRCDIR}/../../alloc/cuda
#include "cudriver.h"

struct carve_cu_table *carve_kcu;
*/
import "C"

import (
	"sync"

	acuda "carve.dev/libs/alloc/cuda"
)

// The driver is loaded at run time, not linked, so that a cuda build starts on hosts without
// an NVIDIA driver. libs/alloc/cuda loads it, once per process, into the one table of driver
// entry points (its driver.h); this package binds carve_kcu to that table. By the time this
// package needs the driver a Device is open, so the table is filled.

var driverLoad struct {
	once sync.Once
	err  error
}

// loadDriver binds carve_kcu to libs/alloc/cuda's driver table once per process, or returns
// its *acuda.NoDriverError (every later call returns the first call's result).
func loadDriver() error {
	driverLoad.once.Do(func() {
		t, err := acuda.DriverTable()
		if err != nil {
			driverLoad.err = err
			return
		}
		C.carve_kcu = (*C.struct_carve_cu_table)(t)
	})
	return driverLoad.err
}
