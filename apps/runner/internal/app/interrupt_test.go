package app

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInterrupts: the first signal cancels the context; the second exits with 130.
func TestInterrupts(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var stderr bytes.Buffer
	ctx, stop := interrupts(context.Background(), sigs, func(code int) { exited <- code }, &stderr)
	defer stop()
	sigs <- os.Interrupt
	<-ctx.Done()
	require.ErrorIs(t, ctx.Err(), context.Canceled)
	require.Empty(t, exited, "one interrupt cancels, it does not exit")
	sigs <- os.Interrupt
	require.Equal(t, ExitInterrupted, <-exited)
	require.Equal(t, "runner: interrupted\n", stderr.String())
}

// TestInterruptedRunExits130: a run whose context is canceled stops, says "interrupted" and
// exits 130, leaving nothing allocated.
func TestInterruptedRunExits130(t *testing.T) {
	for _, args := range [][]string{{"run", "--repeat", "3"}, {"bench", "--runs", "5"}} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errb bytes.Buffer
		code := Main(ctx, append([]string{"runner"}, args...), Env{Stdout: &out, Stderr: &errb, DeviceMemory: 1 << 30})
		require.Equal(t, ExitInterrupted, code, "%v: %s", args, errb.String())
		require.Equal(t, "runner: interrupted\n", errb.String())
	}
	require.Equal(t, ExitInterrupted, ExitCode(fmt.Errorf("session 0: %w", context.Canceled)))
}

// The helper process: TestSignals runs the test binary again with RUNNER_SIGNAL_HELPER set,
// and the process sends itself nothing; the parent sends real SIGINTs.
func TestMain(m *testing.M) {
	switch os.Getenv("RUNNER_SIGNAL_HELPER") {
	case "bench":
		// A long benchmark: the first SIGINT stops it between runs.
		os.Exit(Process([]string{"runner", "bench", "--runs", "10000000", "--warmup", "1"},
			Env{Stdout: os.Stdout, Stderr: os.Stderr, DeviceMemory: 1 << 30}))
	case "stuck":
		// Work that ignores cancellation (Process's wiring, with a stuck command): only the
		// second SIGINT ends it.
		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, os.Interrupt)
		ctx, _ := interrupts(context.Background(), sigs, os.Exit, os.Stderr)
		fmt.Println("ready")
		<-ctx.Done()
		fmt.Println("canceled")
		select {}
	}
	os.Exit(m.Run())
}

// TestSignals sends real SIGINTs to a runner process: one ends a benchmark between runs with
// "interrupted" and exit code 130; two end a process that is stuck, also with 130.
func TestSignals(t *testing.T) {
	for _, tc := range []struct {
		helper string
		sigs   int
	}{{"bench", 1}, {"stuck", 2}} {
		t.Run(tc.helper, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "RUNNER_SIGNAL_HELPER="+tc.helper)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			// The process is ready when it has written its first line (the load table, or
			// "ready"); its signal handler is installed before.
			lines := bufio.NewScanner(stdout)
			require.True(t, lines.Scan(), "the process wrote a first line")
			for range tc.sigs {
				require.NoError(t, cmd.Process.Signal(os.Interrupt))
				if tc.sigs == 2 {
					// Wait until the first one was seen before sending the second.
					for lines.Scan() && !strings.Contains(lines.Text(), "canceled") {
					}
				}
			}
			for lines.Scan() {
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "exit: %v; stderr: %s", err, stderr.String())
			require.Equal(t, ExitInterrupted, ee.ExitCode(), stderr.String())
			require.Contains(t, stderr.String(), "runner: interrupted")
		})
	}
}
