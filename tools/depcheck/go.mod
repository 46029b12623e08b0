module carve.dev/tools/depcheck

go 1.26
