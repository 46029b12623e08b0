package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"carve.dev/apps/runner/internal/npyfile"
	"carve.dev/apps/runner/internal/run"
	acuda "carve.dev/libs/alloc/cuda"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"github.com/urfave/cli/v2"
)

// Errors reach the user as one line, "runner: MESSAGE", and an exit code. The libraries'
// errors are typed and say nothing of flags; explain reads their fields (errors.As, errors.Is,
// never the text) and words them in the runner's terms: which flag to change, and how.

// usageError is a command-line mistake found by the app itself; its message names the flag.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// noFitError is a reservation that does not fit, worded by the command that asked for it.
type noFitError struct {
	msg string
	err error
}

func (e *noFitError) Error() string { return e.msg }
func (e *noFitError) Unwrap() error { return e.err }

// generateError is a problem with the model or the generation, worded for `runner generate`.
type generateError struct{ msg string }

func (e *generateError) Error() string { return e.msg }

// badFileError is a file the user named whose contents cannot be used (a prompt of floats, of
// the wrong rank or of ids outside the vocabulary), worded by the command: ExitError, as for a
// corrupt or missing file.
type badFileError struct{ msg string }

func (e *badFileError) Error() string { return e.msg }

// inputFileError is a problem with the input read from file.
type inputFileError struct {
	file string
	err  error
}

func (e *inputFileError) Error() string { return fmt.Sprintf("%v (from %s)", e.err, e.file) }
func (e *inputFileError) Unwrap() error { return e.err }

// inputReadError is a failure to read the file of an input.
type inputReadError struct {
	name, file string
	err        error
}

func (e *inputReadError) Error() string { return fmt.Sprintf("input %q: %v", e.name, e.err) }
func (e *inputReadError) Unwrap() error { return e.err }

func (e *inputReadError) explain() string {
	switch {
	case errors.Is(e.err, fs.ErrNotExist):
		return fmt.Sprintf("input %q: no such file: %s", e.name, e.file)
	case errors.Is(e.err, npyfile.ErrNotRegularFile):
		return fmt.Sprintf("input %q: %s is not a regular file (a device, FIFO or directory): give a .npy file", e.name, e.file)
	}
	return e.Error()
}

// explain turns an error into the line the user reads and the exit code: ExitNoFits when the
// reservation does not fit, ExitUsage for command-line mistakes, ExitInterrupted after Ctrl-C,
// ExitError for the rest: a failed run, and any file the user named that is missing,
// unreadable or unusable, whatever is wrong with it.
func explain(err error) (string, int) {
	var (
		ife *inputFileError
		re  *engine.ReservationError
		ue  *usageError
		rue *run.UsageError
		dse *engine.DimSyntaxError
		ee  *engine.EnvelopeError
		dve *graph.DimValueError
		ie  *engine.InputError
		me  *run.ModelError
		pe  *engine.PlanError
		be  *graph.BindError
		bse *bytesize.SyntaxError
		ire *inputReadError
		nfe *noFitError
		gne *generateError
		bfe *badFileError
		nde *acuda.NoDriverError
		nse *acuda.NoDeviceError
		dle *engine.DeviceLostError
		ec  cli.ExitCoder
	)
	switch {
	case err == nil:
		return "", ExitOK
	case errors.Is(err, context.Canceled):
		return "interrupted", ExitInterrupted
	case errors.As(err, &nfe):
		return nfe.msg, ExitNoFits
	case errors.As(err, &gne):
		return gne.msg, ExitError
	case errors.As(err, &bfe):
		return bfe.msg, ExitError
	case errors.As(err, &ife):
		msg, code := explain(ife.err)
		return msg + " (from " + ife.file + ")", code
	case errors.As(err, &re):
		return re.Error(), ExitNoFits
	case errors.As(err, &ue):
		return ue.msg, ExitUsage
	case errors.As(err, &rue):
		return rue.Problem, ExitUsage
	case errors.As(err, &nde):
		return noDriverProblem(nde), ExitError
	case errors.As(err, &nse):
		return noDeviceProblem(nse), ExitUsage
	case errors.As(err, &dse):
		return "--dim: " + dse.Error(), ExitUsage
	case errors.As(err, &ee):
		return envelopeProblem(ee), ExitUsage
	case errors.As(err, &dve):
		if dve.Value < 0 {
			return fmt.Sprintf("dim %s=%d is negative: every dim must be at least 1", dve.Dim, dve.Value), ExitUsage
		}
		return fmt.Sprintf("dim %s=0 (from --dim or an --input's shape): zero-size tensors are not supported; every dim must be at least 1",
			dve.Dim), ExitUsage
	case errors.As(err, &ie):
		return inputProblem(ie)
	case errors.As(err, &me):
		return modelProblem(me), ExitError
	case errors.As(err, &pe) && errors.As(err, &be):
		where := ""
		if be.Node != nil {
			where = fmt.Sprintf("node %q (%s): ", be.Node.Name, be.Node.OpType)
		}
		return fmt.Sprintf("the model does not admit %s: %s%s (narrow the --dim ranges)", pe.Binding, where, graphProblem(be.Problem)), ExitError
	case errors.As(err, &bse):
		return bse.Error(), ExitUsage
	case errors.As(err, &ire):
		return ire.explain(), ExitError
	case errors.As(err, &dle):
		return deviceLost(dle), ExitError
	case errors.As(err, &ec):
		return err.Error(), ExitUsage // urfave/cli's own, e.g. "No help topic for 'x'"
	}
	return err.Error(), ExitError
}

// noDriverProblem words a cuda build's missing or outdated NVIDIA driver: the host cannot run
// --device cuda, whatever the command line says, so it is an error (1), not a usage mistake.
func noDriverProblem(e *acuda.NoDriverError) string {
	if e.Symbol != "" {
		return fmt.Sprintf("--device cuda: the NVIDIA driver is too old: %s has no %s; this runner needs a driver for CUDA %s or later (or use --device cpu)",
			e.Library, e.Symbol, e.Version())
	}
	return fmt.Sprintf("--device cuda: no NVIDIA driver found: %s could not be loaded (%s); install the NVIDIA driver "+
		"(or add its folder to LD_LIBRARY_PATH), or use --device cpu", e.Library, e.Reason)
}

// noDeviceProblem words a --device ordinal the host does not have, listing those it has: a
// mistake in the command line (2), as with cuda:all on a host without GPUs.
func noDeviceProblem(e *acuda.NoDeviceError) string {
	var has string
	switch {
	case e.Count == 0:
		has = "none"
	case e.Count <= 3:
		names := make([]string, e.Count)
		for i := range names {
			names[i] = fmt.Sprintf("%s:%d", kernels.BackendCUDA, i)
		}
		has = fmt.Sprintf("%d (%s)", e.Count, strings.Join(names, ", "))
	default:
		has = fmt.Sprintf("%d (%s:0 to %s:%d)", e.Count, kernels.BackendCUDA, kernels.BackendCUDA, e.Count-1)
	}
	return fmt.Sprintf("--device %s:%d: no such GPU; this host has %s", kernels.BackendCUDA, e.Ordinal, has)
}

// graphProblem words a problem that graph found in a binding from its type's fields.
func graphProblem(err error) string {
	var (
		de *graph.DimError
		oe *graph.OverflowError
	)
	switch {
	case errors.As(err, &de):
		return de.Expr + ": " + de.Problem
	case errors.As(err, &oe):
		return oe.What + " overflows int64"
	}
	return err.Error()
}

func envelopeProblem(e *engine.EnvelopeError) string {
	dims := strings.Join(e.Dims, ", ")
	switch e.Problem {
	case engine.UnknownDim:
		return fmt.Sprintf("unknown dim %q in --dim: the model's dims are %s", dims, engine.DimList(e.Known))
	case engine.OpenDim:
		return fmt.Sprintf("dim %q is open (--dim %s=?): the runner takes a value or a range, --dim %s=N or %s=LO:HI (estimator fit searches open dims)",
			dims, dims, dims, dims)
	case engine.MissingDims:
		d := e.Dims[0]
		return fmt.Sprintf("no value for dim %q: give --dim %s=N or a range --dim %s=LO:HI, or --input files whose shapes give it (the model's dims are %s)",
			d, d, d, engine.DimList(e.Known))
	case engine.TooManyVarying:
		return fmt.Sprintf("%d dims vary; the runner plans at most %d varying dims: fix some with --dim NAME=N", e.Varying, e.MaxVarying)
	}
	return e.Error()
}

func inputProblem(e *engine.InputError) (string, int) {
	switch e.Kind {
	case engine.InputUnknown:
		return fmt.Sprintf("unknown input %q: the model's inputs are %s", e.Input, strings.Join(e.Known, ", ")), ExitUsage
	case engine.InputMissing:
		return fmt.Sprintf("missing input %s: give --input %s=FILE.npy for every input, or no --input to run on random inputs",
			strings.Join(e.Missing, ", "), e.Missing[0]), ExitUsage
	case engine.InputDimUnset:
		return fmt.Sprintf("no input's shape gives dim %q: give --dim %s=N", e.Dim, e.Dim), ExitUsage
	case engine.InputOutsideEnvelope:
		return fmt.Sprintf("%s=%d is outside the declared envelope %s=%s: widen it, e.g. --dim %s=%d:%d", e.Dim, e.Value, e.Dim, e.Range,
			e.Dim, min(e.Range.Lo, e.Value), max(e.Range.Hi, e.Value)), ExitError
	}
	return e.Error(), ExitError
}

func modelProblem(e *run.ModelError) string {
	var (
		pe  *fs.PathError
		gme *graph.ModelError
		uoe *graph.UnsupportedOpError
	)
	switch {
	case errors.Is(e.Err, fs.ErrNotExist):
		return fmt.Sprintf("--model %s: no such file", e.Path)
	case errors.As(e.Err, &pe):
		return fmt.Sprintf("--model %s: %v: give the path of an .onnx file", e.Path, pe.Err)
	case errors.As(e.Err, &gme):
		return fmt.Sprintf("--model %s: not a usable ONNX model: %s", e.Path, describeModelError(gme))
	case errors.As(e.Err, &uoe):
		var ops []string
		for _, o := range uoe.Ops {
			ops = append(ops, o.OpType)
		}
		return fmt.Sprintf("--model %s: unsupported ops %s (supported: %s)", e.Path, strings.Join(ops, ", "), strings.Join(uoe.Supported, " "))
	}
	return fmt.Sprintf("--model %s: %v", e.Path, e.Err)
}

// describeModelError words a *graph.ModelError from its fields.
func describeModelError(e *graph.ModelError) string {
	var b strings.Builder
	if e.Node != nil {
		fmt.Fprintf(&b, "node %q (%s): ", e.Node.Name, e.Node.OpType)
	}
	if e.Tensor != "" {
		fmt.Fprintf(&b, "tensor %q: ", e.Tensor)
	}
	b.WriteString(e.Problem)
	if errors.Is(e.Err, graph.ErrLocationEscapes) {
		b.WriteString(": its external data lies outside the model's folder (through a symbolic link), which carve refuses")
	} else if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// deviceLost words a device left unusable by a kernel's fault. The runner ends with it: the
// runtime refuses every later run, since the device would give errors or wrong results.
func deviceLost(e *engine.DeviceLostError) string {
	msg := e.Error()
	if e.Node == nil && strings.HasPrefix(e.Device, "cuda") {
		msg += " (CUDA reports a kernel's fault at the next synchronize, so the failing kernel is unknown: " +
			"run again with CUDA_LAUNCH_BLOCKING=1 to have its launch report it and name it)"
	}
	return msg
}
