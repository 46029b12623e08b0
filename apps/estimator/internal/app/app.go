// Package app is the estimator's command line: report, fit, solve and ops, with their flags,
// output formats and exit codes. main calls Main; tests call Run with captured output.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// Streams are where a run reads and writes. StderrTerminal says that Stderr is a terminal,
// which is the only case in which progress bars are drawn. Runs may go on concurrently as
// long as they do not share Streams.
type Streams struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	StderrTerminal bool
}

// Run runs the estimator with args (args[0] is the program name) and returns the exit code.
// It reads nothing from stdin and never draws progress bars.
func Run(args []string, stdout, stderr io.Writer) int {
	return Main(context.Background(), args, Streams{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr})
}

// Main runs the estimator and returns the exit code. Errors are one line on s.Stderr,
// "estimator: MESSAGE", and for mistakes in the command line " (see estimator COMMAND --help)"
// after it, as the runner writes its own.
func Main(ctx context.Context, args []string, s Streams) (code int) {
	defer func() {
		// A panic is a bug, not a mistake in the command line: Go's own exit code for it, 2,
		// is ExitUsage's.
		if p := recover(); p != nil {
			fmt.Fprintf(s.Stderr, "estimator: internal error: %v (a bug: please report it with the stack below)\n%s", p, debug.Stack())
			code = ExitInternal
		}
	}()
	a := newApp(s)
	if len(args) == 0 {
		args = []string{"estimator"}
	}
	args, err := reorder(a, args)
	if err == nil {
		err = a.RunContext(ctx, args)
	}
	if err == nil {
		return ExitOK
	}
	msg, code := explain(err)
	msg = strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; ")
	if code == ExitUsage {
		help := "estimator --help"
		if len(args) > 1 && a.Command(args[1]) != nil {
			help = "estimator " + a.Command(args[1]).Name + " --help"
		}
		msg += " (see " + help + ")"
	}
	fmt.Fprintf(s.Stderr, "estimator: %s\n", msg)
	return code
}

// IsTerminal reports whether f is a terminal (a character device), for Streams.StderrTerminal.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func newApp(s Streams) *cli.App {
	a := &cli.App{
		Name:  "estimator",
		Usage: "plan the memory of an ONNX model before running it",
		Description: "The estimator plans where every activation and kernel workspace of a model lives in one arena,\n" +
			"for a binding of its dims or over ranges of them, with the same code the runner reserves memory with.\n" +
			"Without --model it uses a small GPT-2 built into the binary. Exit codes: 0 ok, 1 error (a bad file, failed work),\n" +
			"2 usage (the command line), 3 does not fit, 70 internal error (a bug), 130 interrupted (Ctrl-C; a second\n" +
			"Ctrl-C quits at once).",
		Commands:        []*cli.Command{reportCommand(s), fitCommand(s), kvCommand(s), solveCommand(s), opsCommand(s)},
		Reader:          s.Stdin,
		Writer:          s.Stdout,
		ErrWriter:       s.Stderr,
		HideVersion:     true,
		HideHelpCommand: true,
		// Errors are printed by Main, once; urfave must neither print them nor exit.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   onUsageError,
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("unknown command %q: the commands are report, fit, kv, solve and ops", c.Args().First())
			}
			return usagef("no command given: the commands are report, fit, kv, solve and ops")
		},
	}
	for _, c := range a.Commands {
		c.OnUsageError = onUsageError
	}
	return a
}

// onUsageError makes a flag parsing error a usageError (Main adds where to find help).
func onUsageError(_ *cli.Context, err error, _ bool) error {
	return &usageError{strings.TrimSpace(err.Error())}
}

// reorder moves the flags of a command before its positional arguments: urfave/cli v2 stops
// parsing flags at the first positional argument (v3 does not), and the estimator's usage
// puts flags after the file, as in "estimator solve FILE.csv --capacity 1GiB". A token is a
// flag if it starts with "-" (and is not "-" itself); a flag that takes a value and is not
// written name=value takes the next token; one without a next token is a usage error. Everything
// after "--" stays positional.
func reorder(a *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	var cmd *cli.Command
	for _, c := range a.Commands {
		if c.HasName(args[1]) {
			cmd = c
		}
	}
	if cmd == nil {
		return args, nil
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		tv, ok := f.(cli.DocGenerationFlag)
		for _, n := range f.Names() {
			takesValue[n] = ok && tv.TakesValue()
		}
	}
	var flags, pos []string
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		switch {
		case t == "--":
			pos = append(pos, rest[i+1:]...)
			i = len(rest)
		case strings.HasPrefix(t, "-") && t != "-":
			flags = append(flags, t)
			name := strings.TrimLeft(t, "-")
			if !strings.Contains(name, "=") && takesValue[name] {
				if i+1 == len(rest) {
					return nil, usagef("flag needs an argument: %s", t)
				}
				i++
				flags = append(flags, rest[i])
			}
		default:
			pos = append(pos, t)
		}
	}
	out := append([]string{args[0], args[1]}, flags...)
	for _, f := range flags {
		if f == "-h" || f == "--help" || f == "-help" {
			return out, nil // urfave would take the arguments for help topics
		}
	}
	if len(pos) > 0 {
		out = append(append(out, "--"), pos...)
	}
	return out, nil
}

// noArgs rejects positional arguments for commands that take none.
func noArgs(c *cli.Context) error {
	if c.Args().Present() {
		return usagef("estimator %s takes no arguments, got %q (flags start with --)", c.Command.Name, c.Args().First())
	}
	return nil
}

// format reads --format.
func format(c *cli.Context) (string, error) {
	f := strings.ToLower(c.String("format"))
	switch f {
	case "table", "json":
		return f, nil
	}
	return "", usagef("unknown --format %q: want table or json", c.String("format"))
}
