//go:build cuda

package cuda

/*
#include <stdint.h>
#include "driver.h"
*/
import "C"

import (
	"sync/atomic"

	"carve.dev/libs/alloc"
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

// deviceCalls counts calls to the alloc.Device methods.
type deviceCalls struct {
	malloc, free, memInfo, synchronize, newStream, destroyStream, synchronizeStream atomic.Int64
	newEvent, destroyEvent, recordEvent, waitEvent, queryEvent, synchronizeEvent    atomic.Int64
	beginCapture, endCapture, captureInfo, launchGraph, destroyGraph                atomic.Int64
}

// Calls counts the calls made to the device's alloc.Device methods (alloc.CallCounter), so that
// steady-state runs can show they make none that allocate or synchronize. Launch stays 0:
// kernels are launched by libs/kernels/cuda, not through the device.
func (d *Device) Calls() alloc.CPUCalls {
	c := &d.calls
	return alloc.CPUCalls{
		Malloc: c.malloc.Load(), Free: c.free.Load(), MemInfo: c.memInfo.Load(), Synchronize: c.synchronize.Load(),
		NewStream: c.newStream.Load(), DestroyStream: c.destroyStream.Load(), SynchronizeStream: c.synchronizeStream.Load(),
		NewEvent: c.newEvent.Load(), DestroyEvent: c.destroyEvent.Load(), RecordEvent: c.recordEvent.Load(),
		WaitEvent: c.waitEvent.Load(), QueryEvent: c.queryEvent.Load(), SynchronizeEvent: c.synchronizeEvent.Load(),
		BeginCapture: c.beginCapture.Load(), EndCapture: c.endCapture.Load(), CaptureInfo: c.captureInfo.Load(),
		LaunchGraph: c.launchGraph.Load(), DestroyGraph: c.destroyGraph.Load(),
	}
}

var _ alloc.CallCounter = (*Device)(nil)

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
		err := check("cuDeviceGetAttribute", C.carve_cuDeviceGetAttribute(&v, a, d.dev))
		return int(v), err
	}
	var name [256]C.char
	if err := check("cuDeviceGetName", C.carve_cuDeviceGetName(&name[0], C.int(len(name)), d.dev)); err != nil {
		return p, err
	}
	p.Name = C.GoString(&name[0])
	var total C.size_t
	if err := check("cuDeviceTotalMem", C.carve_cuDeviceTotalMem(&total, d.dev)); err != nil {
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
