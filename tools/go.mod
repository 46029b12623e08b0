module carve.dev/tools

go 1.26
