// Command estimator plans the memory of an ONNX model before it runs: weights, the arena of
// activations and workspaces over ranges of dims, the largest dims that fit a budget, and
// MiniMalloc CSV problems. See README.md.
package main

import (
	"os"

	"carve.dev/apps/estimator/internal/app"
)

func main() {
	os.Exit(app.Process(os.Args, app.Streams{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, StderrTerminal: app.IsTerminal(os.Stderr),
	}))
}
