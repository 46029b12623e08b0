module carve.dev/libs/alloc

go 1.26
