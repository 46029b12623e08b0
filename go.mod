module carve.dev

go 1.26

// The root module holds the repository's Go tools (tools/...); the libraries and apps are
// modules of their own, joined by go.work. Vendored and fetched code is not ours to build here.
ignore (
	./bazel-bin
	./bazel-carve
	./bazel-out
	./bazel-testlogs
	./third_party
)
