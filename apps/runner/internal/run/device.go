package run

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"

	"carve.dev/libs/kernels/cuda"

	// The backends this runner can open: they register their drivers. CUDA's opens only in a
	// build with the cuda tag and says so otherwise.
	_ "carve.dev/libs/kernels/cpu"
	_ "carve.dev/libs/kernels/sim"
)

// DeviceSpec is a parsed --device value: a backend kind and the ordinal of its device.
type DeviceSpec struct {
	Kind    string // kernels.BackendCPU, BackendSim or BackendCUDA
	Ordinal int
}

func (d DeviceSpec) String() string {
	if d.Kind == kernels.BackendCUDA || d.Ordinal > 0 {
		return fmt.Sprintf("%s:%d", d.Kind, d.Ordinal)
	}
	return d.Kind
}

// ParseDevices reads a --device list: one device, or replicas separated by commas ("cuda:0,cuda:1",
// "sim,sim:1"), or "cuda:all" for every GPU the driver sees. Replicas must be of one kind, and no
// device may be named twice.
func ParseDevices(s string) ([]DeviceSpec, error) {
	if strings.TrimSpace(s) == kernels.BackendCUDA+":all" {
		drv, err := kernels.LookupDriver(kernels.BackendCUDA)
		if err != nil {
			return nil, err
		}
		n, err := drv.Count()
		if err != nil {
			return nil, notBuilt(s, err)
		}
		if n == 0 {
			return nil, &UsageError{"--device cuda:all: the CUDA driver sees no GPU"}
		}
		specs := make([]DeviceSpec, n)
		for i := range specs {
			specs[i] = DeviceSpec{Kind: kernels.BackendCUDA, Ordinal: i}
		}
		return specs, nil
	}
	var specs []DeviceSpec
	seen := map[DeviceSpec]bool{}
	for _, part := range strings.Split(s, ",") {
		spec, err := ParseDevice(part)
		if err != nil {
			return nil, err
		}
		if len(specs) > 0 && spec.Kind != specs[0].Kind {
			return nil, &UsageError{fmt.Sprintf("--device %s: replicas must be devices of one kind, not %s and %s", s, specs[0].Kind, spec.Kind)}
		}
		if seen[spec] {
			return nil, &UsageError{fmt.Sprintf("--device %s: %s is named twice", s, spec)}
		}
		seen[spec] = true
		specs = append(specs, spec)
	}
	if len(specs) > 1 && specs[0].Kind == kernels.BackendCPU {
		return nil, &UsageError{fmt.Sprintf("--device %s: the CPU is one device; use --concurrency for more sessions", s)}
	}
	return specs, nil
}

// ParseDevice reads "cpu", "sim", "sim:N", "cuda" or "cuda:N" ("" means cpu).
func ParseDevice(s string) (DeviceSpec, error) {
	kind, ord, hasOrd := strings.Cut(strings.TrimSpace(s), ":")
	if kind == "" {
		kind = kernels.BackendCPU
	}
	spec := DeviceSpec{Kind: kind}
	switch kind {
	case kernels.BackendCPU:
		if hasOrd {
			return spec, &UsageError{fmt.Sprintf("--device %s: the cpu device takes no number", s)}
		}
	case kernels.BackendCUDA, kernels.BackendSim:
		if hasOrd {
			n, err := strconv.Atoi(ord)
			if err != nil || n < 0 {
				return spec, &UsageError{fmt.Sprintf("--device %s: %q is not a device number (%s:0, %s:1, ...)", s, ord, kind, kind)}
			}
			spec.Ordinal = n
		}
	default:
		return spec, &UsageError{fmt.Sprintf("unknown device %q: use --device cpu, sim (a simulated GPU) or cuda[:N]", s)}
	}
	return spec, nil
}

// openBackend opens the device's backend. memory sizes the cpu and sim devices (0: the host's
// available memory).
func openBackend(spec DeviceSpec, workers int, memory int64) (kernels.Backend, error) {
	drv, err := kernels.LookupDriver(spec.Kind)
	if err != nil {
		return nil, err
	}
	if memory == 0 && spec.Kind != kernels.BackendCUDA {
		memory = alloc.HostAvailableMemory()
	}
	be, err := drv.Open(kernels.OpenOptions{Ordinal: spec.Ordinal, Workers: workers, Memory: memory})
	if err != nil {
		return nil, notBuilt(spec.String(), err)
	}
	return be, nil
}

// notBuilt words the CUDA driver's *cuda.NotBuiltError, from a build without the cuda tag, as a
// usage error about --device; other errors pass through.
func notBuilt(device string, err error) error {
	var nb *cuda.NotBuiltError
	if errors.As(err, &nb) {
		return &UsageError{fmt.Sprintf("--device %s: this runner was not built with cuda support (rebuild with -tags cuda, or bazel --config=cuda); use --device cpu or sim", device)}
	}
	return err
}

// deviceCalls reads the device's call counters, or zeros for a device that does not count.
func deviceCalls(dev alloc.Device) alloc.CPUCalls {
	if c, ok := dev.(alloc.CallCounter); ok {
		return c.Calls()
	}
	return alloc.CPUCalls{}
}
