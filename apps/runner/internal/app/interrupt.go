package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// ExitInterrupted is the exit code of a run ended by Ctrl-C (SIGINT): 128 + the signal's
// number, as shells report it.
const ExitInterrupted = 130

// Process runs the runner as a process: the first SIGINT cancels the run (which stops between
// runs and reports "interrupted" with ExitInterrupted), a second one ends the process at once
// with the same code, whatever it is doing. It returns the exit code for os.Exit.
func Process(args []string, env Env) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	ctx, stop := interrupts(context.Background(), sigs, os.Exit, env.Stderr)
	defer stop()
	return Main(ctx, args, env)
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
			fmt.Fprintln(stderr, "runner: interrupted")
			exit(ExitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		cancel()
	}
}
