//go:build !cuda

package run

// errCUDA is what --device cuda says in a build without CUDA support.
var errCUDA = &UsageError{"--device cuda: this runner was not built with cuda support (rebuild with -tags cuda, or bazel --config=cuda); use --device cpu"}
