//go:build cuda

package cuda

/*
#include <cuda.h>
#include <stdint.h>
*/
import "C"

import (
	"sync/atomic"
)

// Stats counts a Device's driver allocations since Open: the figures a no-allocation check
// watches.
type Stats struct {
	Mallocs    int64 // successful cuMemAlloc calls
	Frees      int64 // successful cuMemFree calls
	HostAllocs int64 // successful cuMemHostAlloc calls (pinned host memory)
	HostFrees  int64 // successful cuMemFreeHost calls
}

type deviceStats struct {
	mallocs, frees, hostAllocs, hostFrees atomic.Int64
}

// Stats returns the device's allocation counts.
func (d *Device) Stats() Stats {
	return Stats{Mallocs: d.stats.mallocs.Load(), Frees: d.stats.frees.Load(),
		HostAllocs: d.stats.hostAllocs.Load(), HostFrees: d.stats.hostFrees.Load()}
}

// Properties are the figures of a device that kernel selection and planning use.
type Properties struct {
	Name         string
	Major, Minor int   // compute capability
	SMs          int   // multiprocessors
	SharedOptin  int64 // shared memory one block may use after opting in, in bytes
	TotalMemory  int64 // bytes
	L2Bytes      int64
	ClockKHz     int // peak SM clock
	MemoryBusBit int // global memory bus width in bits
}

// Properties reads the device's properties from the driver.
func (d *Device) Properties() (Properties, error) {
	var p Properties
	attr := func(a C.CUdevice_attribute) (int, error) {
		var v C.int
		err := check("cuDeviceGetAttribute", C.cuDeviceGetAttribute(&v, a, d.dev))
		return int(v), err
	}
	var name [256]C.char
	if err := check("cuDeviceGetName", C.cuDeviceGetName(&name[0], C.int(len(name)), d.dev)); err != nil {
		return p, err
	}
	p.Name = C.GoString(&name[0])
	var total C.size_t
	if err := check("cuDeviceTotalMem", C.cuDeviceTotalMem(&total, d.dev)); err != nil {
		return p, err
	}
	p.TotalMemory = int64(total)
	for _, f := range []struct {
		a   C.CUdevice_attribute
		dst *int
	}{
		{C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &p.Major},
		{C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &p.Minor},
		{C.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &p.SMs},
		{C.CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &p.ClockKHz},
		{C.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &p.MemoryBusBit},
	} {
		v, err := attr(f.a)
		if err != nil {
			return p, err
		}
		*f.dst = v
	}
	shared, err := attr(C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
	if err != nil {
		return p, err
	}
	l2, err := attr(C.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
	if err != nil {
		return p, err
	}
	p.SharedOptin, p.L2Bytes = int64(shared), int64(l2)
	return p, nil
}
