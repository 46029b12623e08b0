package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHostileInputs: files that never end are refused before they are read, stdin is read up
// to a bound, and sizes have one meaning.
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.csv")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"csv is a device", []string{"solve", "/dev/zero"}, ExitError, "/dev/zero is not a regular file (a device, FIFO or directory): give a file, or - for stdin"},
		{"csv is a fifo", []string{"solve", fifo}, ExitError, fifo + " is not a regular file"},
		{"csv is a directory", []string{"solve", dir}, ExitError, dir + " is not a regular file"},
		{"model is a device", []string{"report", "--model", "/dev/zero"}, ExitError, "cannot read /dev/zero: not a regular file"},
		{"model is a directory", []string{"report", "--model", dir}, ExitError, "cannot read " + dir + ": is a directory, not a regular file"},
		{"zero capacity", []string{"solve", "testdata/small.csv", "--capacity", "0"}, ExitUsage, "--capacity 0: nothing fits in 0 bytes; leave --capacity out"},
		{"empty capacity", []string{"solve", "testdata/small.csv", "--capacity", ""}, ExitUsage, `--capacity: bad size "": empty size`},
		{"fractional budget", []string{"report", "--budget", "1.5"}, ExitUsage, `--budget: bad size "1.5": 1.5 is not a whole number of bytes`},
		{"zero dim", []string{"report", "--dim", "batch=0"}, ExitUsage, "--dim batch=0: zero-size tensors are not supported"},
		{"zero in a range", []string{"report", "--dim", "batch=0:4"}, ExitUsage, "--dim batch=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tc.args...)
			require.Equal(t, tc.code, code, stderr)
			require.Contains(t, oneLine(t, stderr), tc.want)
			require.Empty(t, stdout)
		})
	}

	// Endless stdin: read up to the bound, then refused.
	defer func(n int64) { maxCSVBytes = n }(maxCSVBytes)
	maxCSVBytes = 1 << 16
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"estimator", "solve", "-"},
		Streams{Stdin: io.MultiReader(strings.NewReader("id,lower,upper,size\n"), endless{}), Stdout: &stdout, Stderr: &stderr})
	require.Equal(t, ExitError, code)
	require.Contains(t, stderr.String(), "- holds more than 64.00 KiB of CSV")
}

// endless is stdin from /dev/zero, without the file: one field that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

var _ io.Reader = endless{}

// TestInterrupted: a canceled context stops the work with "interrupted" and exit code 130;
// a second interrupt ends the process at once.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, []string{"estimator", "fit", "--budget", "1GiB", "--dim", "batch=?"},
		Streams{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
	require.Equal(t, ExitInterrupted, code, stderr.String())
	require.Equal(t, "estimator: interrupted\n", stderr.String())

	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var errb bytes.Buffer
	ctx, stop := interrupts(context.Background(), sigs, func(code int) { exited <- code }, &errb)
	defer stop()
	sigs <- os.Interrupt
	<-ctx.Done()
	require.Empty(t, exited)
	sigs <- os.Interrupt
	require.Equal(t, ExitInterrupted, <-exited)
	require.Equal(t, "estimator: interrupted\n", errb.String())
}

// TestMain runs the helper of TestAtomicWrites when asked to: the estimator in a process whose
// files may not grow beyond 64 bytes (RLIMIT_FSIZE), so that writes fail part way.
func TestMain(m *testing.M) {
	if args := os.Getenv("ESTIMATOR_FSIZE_HELPER"); args != "" {
		signal.Ignore(syscall.SIGXFSZ) // a write past the limit then fails with EFBIG
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 64, Max: 64}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(99)
		}
		os.Exit(Main(context.Background(), append([]string{"estimator"}, strings.Split(args, "\x1f")...),
			Streams{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: os.Stderr}))
	}
	os.Exit(m.Run())
}

// TestAtomicWrites: --svg and solve -o replace their file whole or not at all. A write that
// fails part way (the file size limit) leaves the previous file as it was and no temporary file.
func TestAtomicWrites(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.csv")
	var rows strings.Builder
	rows.WriteString("id,lower,upper,size\n")
	for i := range 40 {
		fmt.Fprintf(&rows, "b%d,%d,%d,%d\n", i, i, i+3, 64+i)
	}
	require.NoError(t, os.WriteFile(big, []byte(rows.String()), 0o644))
	for _, tc := range []struct {
		name string
		args func(out string) []string
	}{
		{"svg", func(out string) []string { return []string{"report", "--workers", "2", "--svg", out} }},
		{"solve -o", func(out string) []string { return []string{"solve", big, "--algorithm", "greedy-by-size", "-o", out} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			require.NoError(t, os.WriteFile(out, []byte("the previous file"), 0o644))
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "ESTIMATOR_FSIZE_HELPER="+strings.Join(tc.args(out), "\x1f"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			require.Error(t, err, "the write must fail under the size limit")
			require.Equal(t, ExitError, cmd.ProcessState.ExitCode(), "%v: %s", cmd.ProcessState, stderr.String())
			require.Contains(t, stderr.String(), "estimator: ")
			require.Contains(t, stderr.String(), out, "the error names the file asked for")
			got, err := os.ReadFile(out)
			require.NoError(t, err)
			require.Equal(t, "the previous file", string(got), "the previous file is untouched")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "no temporary file is left")
		})
	}
}

// TestOutputStreams: solve -o and --svg write through a FIFO (or a character device such as
// /dev/null) instead of renaming a regular file over it, and refuse a directory before any
// work.
func TestOutputStreams(t *testing.T) {
	dir := t.TempDir()
	read := func(name string) (string, <-chan []byte) {
		p := filepath.Join(dir, name)
		require.NoError(t, syscall.Mkfifo(p, 0o644))
		got := make(chan []byte, 1)
		go func() {
			b, err := os.ReadFile(p) // waits for the writer, reads to its close
			if err != nil {
				b = []byte(err.Error())
			}
			got <- b
		}()
		return p, got
	}
	stillFIFO := func(p string) {
		t.Helper()
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		require.Equal(t, fs.ModeNamedPipe, fi.Mode().Type(), "%s is still a FIFO", p)
	}

	rows, got := read("rows.csv")
	_, stderr, code := run(t, "solve", "testdata/small.csv", "--algorithm", "greedy-by-size", "-o", rows)
	require.Equal(t, ExitOK, code, stderr)
	stillFIFO(rows)
	require.True(t, strings.HasPrefix(string(<-got), "id,lower,upper,size,offset\n"))

	svg, got := read("plan.svg")
	_, stderr, code = run(t, "report", "--workers", "2", "--svg", svg)
	require.Equal(t, ExitOK, code, stderr)
	stillFIFO(svg)
	require.True(t, strings.HasPrefix(string(<-got), "<svg "))

	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	for _, args := range [][]string{
		{"solve", "testdata/small.csv", "-o", sub},
		{"report", "--svg", sub},
		{"report", "--model", filepath.Join(dir, "none.onnx"), "--svg", sub}, // refused before the model is read
	} {
		stdout, stderr, code := run(t, args...)
		require.Equal(t, ExitError, code, "%v: %s", args, stderr)
		require.Equal(t, "estimator: cannot write "+sub+": is a directory: give a file name", oneLine(t, stderr))
		require.Empty(t, stdout)
	}
	fi, err := os.Stat(sub)
	require.NoError(t, err)
	require.True(t, fi.IsDir())
}

// TestHostileNumbers: kv's sizes are bounded where they are read, with the bound in the
// message: --context 9223372036854775807 spun forever (a doubling that wrapped to 0), and a
// context one short of it was worded as "-9223372036854775808 positions". A per-layer name
// takes one %d and no other verb.
func TestHostileNumbers(t *testing.T) {
	kv := fixture(t, "qwen2_kv")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"largest context", []string{"--context", "9223372036854775807"},
			`--context "9223372036854775807": want a whole number from 1 to 1099511627776 (the largest dim carve admits), ? or ?:MAX`},
		{"context one short", []string{"--context", "9223372036854775806"}, `--context "9223372036854775806": want a whole number from 1 to 1099511627776`},
		{"largest search", []string{"--context", "?:9223372036854775807", "--budget", "1GiB"},
			"--context ?:9223372036854775807: want N, ? or ?:MAX with MAX from 1 to 1099511627776 (the largest dim carve admits)"},
		{"largest batch", []string{"--context", "64", "--batch", "9223372036854775807"}, `--batch "9223372036854775807": want a whole number from 1 to 1099511627776`},
		{"largest prompt", []string{"--context", "64", "--prompt", "9223372036854775807"},
			"--prompt 9223372036854775807: want 1 to 1099511627776 positions (the largest dim carve admits)"},
		{"too many workers", []string{"--context", "64", "--workers", "100000"}, "--workers 100000: want at most 4096"},
		{"name with another verb", []string{"--context", "64", "--past-key-name", "foo.%s.%d"},
			`--past-key-name "foo.%s.%d": want a name with one %d for the layer and no other %, e.g. past_key_values.%d.key`},
		{"name with a verb", []string{"--context", "64", "--mask-name", "mask%d"}, `--mask-name "mask%d": want a name (without %)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type out struct {
				stdout, stderr string
				code           int
			}
			done := make(chan out, 1)
			go func() {
				stdout, stderr, code := run(t, append([]string{"kv", "--model", kv}, tc.args...)...)
				done <- out{stdout, stderr, code}
			}()
			var r out
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("estimator kv %v has not returned after a minute", tc.args)
			}
			require.Equal(t, ExitUsage, r.code, r.stderr)
			line := oneLine(t, r.stderr)
			require.Contains(t, line, tc.want)
			require.NotContains(t, line, "-922337203685477", "no overflowed numbers")
			require.NotContains(t, line, "%!", "no format errors")
			require.Empty(t, r.stdout)
		})
	}
}

// TestPanicIsInternal: a panic inside a command (here its output's writer) exits 70 with the
// stack, not Go's 2, which reads as a usage error.
func TestPanicIsInternal(t *testing.T) {
	var stderr strings.Builder
	code := Main(context.Background(), []string{"estimator", "report"}, Streams{Stdin: strings.NewReader(""), Stdout: panicWriter{}, Stderr: &stderr})
	require.Equal(t, ExitInternal, code, stderr.String())
	first, _, _ := strings.Cut(stderr.String(), "\n")
	require.True(t, strings.HasPrefix(first, "estimator: internal error: "), stderr.String())
	require.Contains(t, first, "the writer broke")
	require.True(t, strings.HasSuffix(first, " (a bug: please report it with the stack below)"), first)
	require.Contains(t, stderr.String(), "goroutine ")
}

// panicWriter panics at every write, as a bug would.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("the writer broke") }
