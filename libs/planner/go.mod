module carve.dev/libs/planner

go 1.26
