module carve.dev/apps/estimator

go 1.26
