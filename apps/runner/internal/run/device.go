package run

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"

	"carve.dev/libs/alloc"
)

// newDevice opens the named device. Only the CPU exists so far; the CUDA backend is a later
// issue (see device_cuda.go and device_nocuda.go for what "cuda" says meanwhile).
func newDevice(name string, memory int64) (*alloc.CPUDevice, error) {
	switch name {
	case "", "cpu":
	case "cuda":
		return nil, errCUDA
	default:
		return nil, &UsageError{fmt.Sprintf("unknown device %q: use --device cpu (or cuda in a build with -tags cuda)", name)}
	}
	if memory == 0 {
		memory = hostAvailable()
	}
	return alloc.NewCPU(alloc.CPUConfig{Memory: memory})
}

// hostAvailable is the host's available memory (MemAvailable in /proc/meminfo), or
// alloc.DefaultCPUMemory where that cannot be read. It is what the CPU device reports free.
func hostAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return alloc.DefaultCPUMemory
	}
	if n, ok := parseMemAvailable(b); ok {
		return n
	}
	return alloc.DefaultCPUMemory
}

// parseMemAvailable reads the "MemAvailable:   123456 kB" line of /proc/meminfo.
func parseMemAvailable(b []byte) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == "MemAvailable:" && string(f[2]) == "kB" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil || kb <= 0 || kb > 1<<50 {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
