//go:build !cuda

package cuda

import "carve.dev/libs/alloc"

func launchKernel(_ alloc.Stream, kernel string, _, _ Dim3, _ uint32, _ bool, _ []Arg) error {
	return &NotBuiltError{Op: "launch " + kernel}
}
