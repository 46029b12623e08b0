// Command runner runs ONNX models on carve's planned arenas: `runner run` and `runner bench`.
// See README.md; the commands live in internal/app.
package main

import (
	"context"
	"os"
	"os/signal"

	"carve.dev/apps/runner/internal/app"
	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := app.Main(ctx, os.Args, app.Env{Stdout: os.Stdout, Stderr: os.Stderr,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd()))})
	stop()
	os.Exit(code)
}
