module carve.dev/libs/engine

go 1.26

require (
	carve.dev/libs/alloc v0.0.0
	carve.dev/libs/graph v0.0.0
	carve.dev/libs/kernels v0.0.0
	carve.dev/libs/planner v0.0.0
)

require github.com/stretchr/testify v1.12.1 // indirect

replace (
	carve.dev/libs/alloc => ../alloc
	carve.dev/libs/graph => ../graph
	carve.dev/libs/kernels => ../kernels
	carve.dev/libs/planner => ../planner
)
