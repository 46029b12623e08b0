//go:build cuda

package cuda

/*
#include "driver.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Info describes one CUDA device.
type Info struct {
	Ordinal       int    `json:"ordinal"`
	Name          string `json:"name"`
	ComputeMajor  int    `json:"compute_major"`
	ComputeMinor  int    `json:"compute_minor"`
	TotalBytes    int64  `json:"total_bytes"`
	FreeBytes     int64  `json:"free_bytes"`
	DriverVersion int    `json:"driver_version"`
}

// Probe reports the devices the CUDA driver sees, with the free memory of each. Without a
// driver it returns a *NoDriverError.
func Probe() ([]Info, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	var ver C.int
	if err := check("cuDriverGetVersion", C.carve_cuDriverGetVersion(&ver)); err != nil {
		return nil, err
	}
	infos := make([]Info, 0, n)
	for i := 0; i < n; i++ {
		info, err := probe(i)
		if err != nil {
			return nil, fmt.Errorf("cuda: device %d: %w", i, err)
		}
		info.DriverVersion = int(ver)
		infos = append(infos, info)
	}
	return infos, nil
}

// probe reads one device's figures through its primary context.
func probe(ordinal int) (Info, error) {
	d, err := Open(ordinal)
	if err != nil {
		return Info{}, err
	}
	p, err := d.Properties()
	if err != nil {
		return Info{}, errors.Join(err, d.Close())
	}
	free, total, err := d.MemInfo()
	if err := errors.Join(err, d.Close()); err != nil {
		return Info{}, err
	}
	return Info{Ordinal: ordinal, Name: p.Name, ComputeMajor: p.Major, ComputeMinor: p.Minor,
		TotalBytes: total, FreeBytes: free}, nil
}
