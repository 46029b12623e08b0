package alloc

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// HostAvailableMemory is the host's available memory in bytes (MemAvailable in /proc/meminfo:
// what can be allocated without swapping), or DefaultCPUMemory where that cannot be read (other
// systems, a /proc without it). It is the natural size of a CPUDevice that may use the host.
func HostAvailableMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return DefaultCPUMemory
	}
	if n, ok := parseMemAvailable(b); ok {
		return n
	}
	return DefaultCPUMemory
}

// parseMemAvailable reads the "MemAvailable:   123456 kB" line of /proc/meminfo. The format
// is Linux's (proc(5)); three fields, the unit always kB.
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
