// Package cuda is carve's NVIDIA GPU backend for libs/alloc. Its devices are built only with
// the `cuda` build tag (bazel build --config=cuda); without it the package holds only its error
// types and needs no CUDA headers.
//
// A cuda build does not link the CUDA driver: it loads libcuda.so.1 at the first Open,
// DeviceCount or Probe (driver.go), so the same binary starts and plans on hosts without an
// NVIDIA driver, where those calls return a *NoDriverError.
package cuda
