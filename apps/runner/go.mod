module carve.dev/apps/runner

go 1.26
