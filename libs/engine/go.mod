module carve.dev/libs/engine

go 1.26.0

require (
	carve.dev/libs/graph v0.0.0
	carve.dev/libs/kernels v0.0.0
	carve.dev/libs/planner v0.0.0
)

require go.uber.org/goleak v1.3.0

require golang.org/x/sys v0.50.0 // indirect

require (
	carve.dev/libs/alloc v0.0.0
	codeberg.org/sbinet/npyio v0.14.0 // indirect
	github.com/campoy/embedmd v1.0.0 // indirect
	github.com/nlpodyssey/gopickle v0.3.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/stretchr/testify v1.12.1
	github.com/x448/float16 v0.8.4
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/text v0.34.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace (
	carve.dev/libs/alloc => ../alloc
	carve.dev/libs/graph => ../graph
	carve.dev/libs/kernels => ../kernels
	carve.dev/libs/planner => ../planner
)
