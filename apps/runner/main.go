// Command runner runs ONNX models on carve's planned arenas: `runner run` and `runner bench`.
// See README.md; the commands live in internal/app.
package main

import (
	"os"

	"carve.dev/apps/runner/internal/app"
	"golang.org/x/term"
)

func main() {
	os.Exit(app.Process(os.Args, app.Env{Stdout: os.Stdout, Stderr: os.Stderr,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd()))}))
}
