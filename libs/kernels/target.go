package kernels

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// Target describes the machine a kernel is selected for: everything tactic selection may depend
// on besides a node's dtypes, shapes and attributes. Select and Bound are pure functions of those
// and of a Target, so the estimator can plan for a GPU it does not have (ParseTarget) and still
// agree with the runner on that GPU, which fills the Target from the real device, to the byte.
//
// A Target is a plain value, safe to copy and share.
type Target struct {
	// Backend names the kernel set: BackendCPU, BackendSim or BackendCUDA.
	Backend string
	// Arch is the GPU architecture, for example "sm_90"; "" on the CPU.
	Arch string
	// SMs is the GPU's multiprocessor count; 0 on the CPU.
	SMs int
	// SharedMemPerBlock is the most shared memory one GPU block may use, in bytes; 0 on the CPU.
	SharedMemPerBlock int64
	// Memory is the device's total memory in bytes; 0 when unknown (the CPU's host memory).
	Memory int64
	// Workers is how many goroutines a CPU kernel may run at once (>= 1). Workspace that is
	// per worker (scratch slots) scales with it, so the estimator and the runner must agree on it.
	Workers int
	// WorkspaceCap, when set, is the most workspace in bytes one kernel whose workspace is a
	// choice rather than a need may declare: the CUDA Conv and ConvTranspose, which admit only
	// the cuDNN algorithms that fit (libs/kernels/cuda/conv.go). nil sets no cap (those kernels
	// declare their own policy's bound); a cap of 0 declares no workspace at all, so that only
	// algorithms needing none run. Kernels whose workspace is what their algorithm needs (the
	// CPU's im2col tiles) and cuBLASLt's fixed cap do not read it. Set it with WithWorkspaceCap,
	// read it with CappedWorkspace; String and ParseTarget leave it out (it is not the device's).
	// The pointed-to value is never changed once set, so copies may share it.
	WorkspaceCap *int64
}

// WithWorkspaceCap is t with WorkspaceCap set to bytes (a fresh value, so t's copies keep
// theirs); a negative bytes clears the cap.
func (t Target) WithWorkspaceCap(bytes int64) Target {
	if bytes < 0 {
		t.WorkspaceCap = nil
		return t
	}
	t.WorkspaceCap = &bytes
	return t
}

// CappedWorkspace is want bounded by t's WorkspaceCap: want itself when t has no cap.
func (t Target) CappedWorkspace(want int64) int64 {
	if t.WorkspaceCap == nil {
		return want
	}
	return max(min(want, *t.WorkspaceCap), 0)
}

// Backend names.
const (
	BackendCPU  = "cpu"  // host memory, kernels run on stream goroutines
	BackendSim  = "sim"  // a discrete device simulated in host memory, reached only through copies
	BackendCUDA = "cuda" // NVIDIA GPUs through the CUDA driver API
)

// CPU describes the CPU backend with the given number of workers; workers <= 0 means GOMAXPROCS.
func CPU(workers int) Target {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return Target{Backend: BackendCPU, Workers: workers}
}

// HostVisible reports whether the target's kernels read and write host memory (the CPU): then
// weights, graph inputs and host-computed values stay where they are, and tensors carry host
// Data. Other targets are discrete devices that reach only their own memory, through addresses.
func (t Target) HostVisible() bool { return t.Backend == BackendCPU }

// GPU reports whether the target is a CUDA GPU.
func (t Target) GPU() bool { return t.Backend == BackendCUDA }

// String writes the target in the form ParseTarget reads back.
func (t Target) String() string {
	switch t.Backend {
	case BackendCUDA:
		s := fmt.Sprintf("%s:%d:%s", t.Arch, t.SMs, sizeString(t.SharedMemPerBlock))
		if t.Memory > 0 {
			s += ":" + sizeString(t.Memory)
		}
		return s
	case "":
		return "unset"
	}
	return fmt.Sprintf("%s:%d", t.Backend, t.Workers)
}

// KnownGPUs are the GPUs ParseTarget knows by name, with their published figures: compute
// capability, multiprocessors, the opt-in shared memory per block and memory as the driver
// reports it (cuDeviceTotalMem, which is what the CUDA backend's Target reads: for the H200,
// read on the GPU machine with driver 580.159.04, 615 MiB less than nvidia-smi's 143771 MiB).
var KnownGPUs = map[string]Target{
	"h200": {Backend: BackendCUDA, Arch: "sm_90", SMs: 132, SharedMemPerBlock: 227 << 10, Memory: 150109880320},
	"h100": {Backend: BackendCUDA, Arch: "sm_90", SMs: 132, SharedMemPerBlock: 227 << 10, Memory: 85017755648},
	"a100": {Backend: BackendCUDA, Arch: "sm_80", SMs: 108, SharedMemPerBlock: 163 << 10, Memory: 85097971712},
}

// TargetError reports a target description that cannot be read.
type TargetError struct {
	Spec    string
	Problem string
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("target %q: %s", e.Spec, e.Problem)
}

// ParseTarget reads a target description:
//
//	cpu, cpu:N        the CPU backend with GOMAXPROCS or N workers
//	sim, sim:N        the simulated discrete device (CPU kernels behind device addresses)
//	h200, h100, a100  a GPU from KnownGPUs
//	sm_XY:SMS:SHARED[:MEMORY]
//	                  a CUDA GPU by compute capability, multiprocessor count, shared memory per
//	                  block and optionally total memory; sizes take KiB, MiB, GiB (or plain bytes)
func ParseTarget(spec string) (Target, error) {
	s := strings.ToLower(strings.TrimSpace(spec))
	if t, ok := KnownGPUs[s]; ok {
		return t, nil
	}
	fields := strings.Split(s, ":")
	bad := func(format string, args ...any) (Target, error) {
		return Target{}, &TargetError{Spec: spec, Problem: fmt.Sprintf(format, args...)}
	}
	switch name := fields[0]; {
	case name == BackendCPU || name == BackendSim:
		if len(fields) > 2 {
			return bad("want %s or %s:WORKERS", name, name)
		}
		workers := 0
		if len(fields) == 2 {
			w, err := strconv.Atoi(fields[1])
			if err != nil || w < 1 {
				return bad("workers %q is not a positive whole number", fields[1])
			}
			workers = w
		}
		t := CPU(workers)
		t.Backend = name
		return t, nil
	case strings.HasPrefix(name, "sm_"):
		if len(fields) < 3 || len(fields) > 4 {
			return bad("want sm_XY:SMS:SHARED[:MEMORY], for example sm_90:132:227KiB")
		}
		if cc, err := strconv.Atoi(name[3:]); err != nil || cc < 50 || cc > 200 {
			return bad("architecture %q is not sm_ and a compute capability such as 90", name)
		}
		sms, err := strconv.Atoi(fields[1])
		if err != nil || sms < 1 {
			return bad("multiprocessor count %q is not a positive whole number", fields[1])
		}
		t := Target{Backend: BackendCUDA, Arch: name, SMs: sms}
		if t.SharedMemPerBlock, err = parseSize(fields[2]); err != nil || t.SharedMemPerBlock < 1 {
			return bad("shared memory per block %q is not a size such as 227KiB", fields[2])
		}
		if len(fields) == 4 {
			if t.Memory, err = parseSize(fields[3]); err != nil || t.Memory < 1 {
				return bad("memory %q is not a size such as 141GiB", fields[3])
			}
		}
		return t, nil
	}
	names := make([]string, 0, len(KnownGPUs))
	for n := range KnownGPUs {
		names = append(names, n)
	}
	sort.Strings(names)
	return bad("unknown target: use cpu, cpu:N, sim, one of %s, or sm_XY:SMS:SHARED[:MEMORY]", strings.Join(names, ", "))
}

// parseSize reads a whole number of bytes with an optional binary suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"b", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// sizeString writes a byte count with the largest binary suffix that divides it.
func sizeString(n int64) string {
	switch {
	case n > 0 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return strconv.FormatInt(n, 10)
}
