module carve.dev/libs/graph

go 1.26

require carve.dev/libs/planner v0.0.0

require google.golang.org/protobuf v1.36.12 // indirect

replace carve.dev/libs/planner => ../planner
