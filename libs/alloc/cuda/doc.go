// Package cuda is carve's NVIDIA GPU backend for libs/alloc, built only with the `cuda` build tag
// (bazel build --config=cuda); without it the package is empty and needs no CUDA headers.
package cuda
