package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// Process runs the estimator as a process: the first SIGINT cancels the work (a fit search or
// an exact solve stops and reports "interrupted" with ExitInterrupted), a second one ends the
// process at once with the same code. It returns the exit code for os.Exit. (The runner's
// Process is the same: the two apps share no package.)
func Process(args []string, s Streams) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	ctx, stop := interrupts(context.Background(), sigs, os.Exit, s.Stderr)
	defer stop()
	return Main(ctx, args, s)
}

// interrupts returns a context canceled by the first value on sigs; the second calls exit with
// ExitInterrupted after saying so on stderr. stop ends the watch.
func interrupts(parent context.Context, sigs <-chan os.Signal, exit func(int), stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			fmt.Fprintln(stderr, "estimator: interrupted")
			exit(ExitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		cancel()
	}
}
