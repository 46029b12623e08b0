//go:build cuda

package cuda

import (
	"fmt"

	"gorgonia.org/cu"
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

// Probe reports the devices the CUDA driver sees, with the free memory of each.
func Probe() ([]Info, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("cuda: counting devices: %w", err)
	}
	ver := cu.Version()
	infos := make([]Info, 0, n)
	for i := 0; i < n; i++ {
		dev, err := cu.GetDevice(i)
		if err != nil {
			return nil, fmt.Errorf("cuda: device %d: %w", i, err)
		}
		info := Info{Ordinal: i, DriverVersion: ver}
		if info.Name, err = dev.Name(); err != nil {
			return nil, fmt.Errorf("cuda: device %d name: %w", i, err)
		}
		if info.ComputeMajor, info.ComputeMinor, err = dev.ComputeCapability(); err != nil {
			return nil, fmt.Errorf("cuda: device %d compute capability: %w", i, err)
		}
		ctx, err := dev.MakeContext(cu.SchedAuto)
		if err != nil {
			return nil, fmt.Errorf("cuda: device %d context: %w", i, err)
		}
		free, total, err := cu.MemInfo()
		ctx.Destroy()
		if err != nil {
			return nil, fmt.Errorf("cuda: device %d memory info: %w", i, err)
		}
		info.FreeBytes, info.TotalBytes = free, total
		infos = append(infos, info)
	}
	return infos, nil
}
