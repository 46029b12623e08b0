module carve.dev/libs/graph

go 1.26

require carve.dev/libs/planner v0.0.0

replace carve.dev/libs/planner => ../planner
