//go:build cuda

package cuda

/*
#include <stdint.h>
#include "driver.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"carve.dev/libs/alloc"
)

// HostAlloc allocates n bytes of page-locked (pinned) host memory with cuMemHostAlloc, which
// copies to and from the device can use asynchronously. Free it with HostFree.
func (d *Device) HostAlloc(n int64) ([]byte, error) {
	if n <= 0 {
		return nil, fmt.Errorf("cuda: host alloc of %d bytes", n)
	}
	var p unsafe.Pointer
	if err := d.do(func() error { return check("cuMemHostAlloc", C.carve_cuMemHostAlloc(&p, C.size_t(n), 0)) }); err != nil {
		return nil, err
	}
	d.stats.hostAllocs.Add(1)
	return unsafe.Slice((*byte)(p), n), nil
}

// HostFree releases memory returned by HostAlloc.
func (d *Device) HostFree(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	err := d.do(func() error { return check("cuMemFreeHost", C.carve_cuMemFreeHost(unsafe.Pointer(&b[0]))) })
	if err == nil {
		d.stats.hostFrees.Add(1)
	}
	return err
}

// CopyToDeviceAsync queues a copy of src to p on s and returns without waiting. src must stay
// valid and unchanged until the stream has passed the copy; it should be pinned (HostAlloc),
// otherwise the driver copies synchronously.
func (d *Device) CopyToDeviceAsync(p alloc.Ptr, src []byte, s alloc.Stream) error {
	if len(src) == 0 {
		return nil
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return d.do(func() error {
		return check("cuMemcpyHtoDAsync", C.carve_cuMemcpyHtoDAsync(C.CUdeviceptr(p), unsafe.Pointer(&src[0]), C.size_t(len(src)), cs))
	})
}

// CopyToHostAsync queues a copy of len(dst) bytes at p into dst on s and returns without
// waiting; dst must be pinned (HostAlloc) and stay valid until the stream has passed the copy.
func (d *Device) CopyToHostAsync(dst []byte, p alloc.Ptr, s alloc.Stream) error {
	if len(dst) == 0 {
		return nil
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return d.do(func() error {
		return check("cuMemcpyDtoHAsync", C.carve_cuMemcpyDtoHAsync(unsafe.Pointer(&dst[0]), C.CUdeviceptr(p), C.size_t(len(dst)), cs))
	})
}

// CopyAsync queues a device-to-device copy of n bytes from src to dst on s.
func (d *Device) CopyAsync(dst, src alloc.Ptr, n int64, s alloc.Stream) error {
	if n <= 0 {
		return nil
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return d.do(func() error {
		return check("cuMemcpyDtoDAsync", C.carve_cuMemcpyDtoDAsync(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), cs))
	})
}

// MemsetBytes queues filling n bytes at p with v on s.
func (d *Device) MemsetBytes(p alloc.Ptr, v byte, n int64, s alloc.Stream) error {
	if n <= 0 {
		return nil
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return d.do(func() error {
		return check("cuMemsetD8Async", C.carve_cuMemsetD8Async(C.CUdeviceptr(p), C.uchar(v), C.size_t(n), cs))
	})
}

// NewTimingEvent creates an event that records time, for ElapsedMs; for benchmarks.
func (d *Device) NewTimingEvent() (alloc.Event, error) {
	var ce C.CUevent
	if err := d.do(func() error { return check("cuEventCreate", C.carve_cuEventCreate(&ce, C.CU_EVENT_DEFAULT)) }); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h := alloc.Event(newHandle())
	d.events[h] = ce
	return h, nil
}

// ElapsedMs returns the milliseconds between two completed timing events.
func (d *Device) ElapsedMs(start, end alloc.Event) (float32, error) {
	cs, err := d.event(start)
	if err != nil {
		return 0, err
	}
	ce, err := d.event(end)
	if err != nil {
		return 0, err
	}
	var ms C.float
	err = d.do(func() error { return check("cuEventElapsedTime", C.carve_cuEventElapsedTime(&ms, cs, ce)) })
	return float32(ms), err
}
