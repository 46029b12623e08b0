module carve.dev/libs/kernels

go 1.26
