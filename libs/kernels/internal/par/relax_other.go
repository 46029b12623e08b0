//go:build !amd64

package par

// cpuRelax is a spin-wait hint; elsewhere than amd64 there is none.
func cpuRelax() {}
