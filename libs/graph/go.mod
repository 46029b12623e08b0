module carve.dev/libs/graph

go 1.26
