module carve.dev/libs/engine

go 1.26
