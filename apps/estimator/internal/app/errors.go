package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"carve.dev/apps/estimator/internal/planview"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/planner"
)

// Exit codes of the estimator, the same rule as the runner's (README.md, "Exit codes").
const (
	ExitOK          = 0   // done; for report and fit, everything asked about fits
	ExitError       = 1   // the work failed: a file named (model, CSV) missing, unreadable or unusable; an output not written
	ExitUsage       = 2   // bad flags or arguments: dim syntax, unknown or missing dim, empty range, budget syntax
	ExitDoesNotFit  = 3   // the model does not fit the budget (report, fit) or the capacity (solve)
	ExitInternal    = 70  // a bug of the estimator's own (a panic), with the stack on stderr
	ExitInterrupted = 130 // Ctrl-C (SIGINT): 128 + the signal's number, as shells report it
)

// usageError is a mistake in the command line; it exits with ExitUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// fitError says that something does not fit; it exits with ExitDoesNotFit. The command has
// already written its report, if any.
type fitError struct{ msg string }

func (e *fitError) Error() string { return e.msg }

// modelError is a model that cannot be read; the message already names the file.
type modelError struct {
	path string
	err  error
}

func (e *modelError) Error() string { return e.path + ": " + e.err.Error() }
func (e *modelError) Unwrap() error { return e.err }

// explain turns any error of a command into the one line the user reads and the exit code.
// The libraries' errors are typed and name no flags; explain reads their fields (errors.As,
// errors.Is, never their text) and says what to do in the estimator's terms.
func explain(err error) (string, int) {
	var (
		ue  *usageError
		fe  *fitError
		dse *engine.DimSyntaxError
		ene *engine.EnvelopeError
		dve *graph.DimValueError
		bse *bytesize.SyntaxError
		ube *kernels.UnknownBackendError
		uok *kernels.UnsupportedOpError
		mke *engine.MissingKernelsError
		uog *graph.UnsupportedOpError
		me  *modelError
		pe  *engine.PlanError
		nfe *planner.NoFitError
		ce  *planner.CSVError
		pfe *fs.PathError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return "interrupted", ExitInterrupted
	case errors.As(err, &ue):
		return ue.msg, ExitUsage
	case errors.As(err, &fe):
		return fe.msg, ExitDoesNotFit
	case errors.As(err, &dse):
		return "--dim: " + dse.Error(), ExitUsage
	case errors.Is(err, engine.ErrNoOpenDim):
		return "no open dim to search: mark one with --dim NAME=? (e.g. --dim batch=?)", ExitUsage
	case errors.Is(err, engine.ErrManyOpenDims):
		return "more than one open dim (--dim NAME=?): fit searches one at a time", ExitUsage
	case errors.As(err, &ene):
		return envelopeProblem(ene), ExitUsage
	case errors.As(err, &dve):
		if dve.Value < 0 {
			return fmt.Sprintf("--dim %s=%d: dims cannot be negative", dve.Dim, dve.Value), ExitUsage
		}
		return fmt.Sprintf("--dim %s=0: zero-size tensors are not supported; every dim must be at least 1", dve.Dim), ExitUsage
	case errors.As(err, &bse):
		return err.Error(), ExitUsage // wrapped with the flag's name
	case errors.As(err, &ube):
		return fmt.Sprintf("no kernels for backend %q in this estimator: it has %s (give --target %s)",
			ube.Backend, strings.Join(ube.Known, ", "), firstOr(ube.Known, "cpu")), ExitUsage
	case errors.As(err, &mke):
		return missingKernels(mke), ExitError
	case errors.As(err, &uok):
		return unsupportedKernel(uok), ExitError
	case errors.As(err, &uog):
		return unsupportedShape(err, uog), ExitError
	case errors.As(err, &me):
		return modelProblem(me), ExitError
	case errors.As(err, &pe):
		return planProblem(pe), ExitError
	case errors.As(err, &nfe):
		return noFit(nfe), ExitDoesNotFit
	case errors.As(err, &ce):
		return err.Error(), ExitError // wrapped with the file's name
	case errors.As(err, &pfe) && pfe.Op == "write":
		return fmt.Sprintf("cannot write %s: %v", pfe.Path, pfe.Err), ExitError
	case errors.As(err, &pfe) && errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("no such file: %s", pfe.Path), ExitError
	case errors.As(err, &pfe) && errors.Is(err, errNotRegular):
		return fmt.Sprintf("%s is not a regular file (a device, FIFO or directory): give a file, or - for stdin", pfe.Path), ExitError
	case errors.As(err, &pfe):
		return fmt.Sprintf("%s: %v", pfe.Path, pfe.Err), ExitError
	}
	return err.Error(), ExitError
}

func envelopeProblem(e *engine.EnvelopeError) string {
	dims := strings.Join(e.Dims, ", ")
	switch e.Problem {
	case engine.UnknownDim:
		return fmt.Sprintf("unknown dim %q in --dim: the model's dims are %s", dims, engine.DimList(e.Known))
	case engine.OpenDim:
		return fmt.Sprintf("dim %q is open (--dim %s=?): only estimator fit searches an open dim; give a value or a range", dims, dims)
	case engine.MissingDims:
		q := make([]string, len(e.Dims))
		for i, d := range e.Dims {
			q[i] = fmt.Sprintf("%q", d)
		}
		d := e.Dims[0]
		return fmt.Sprintf("no value for dim %s: give --dim %s=N or a range --dim %s=LO:HI (the model's dims are %s)",
			strings.Join(q, ", "), d, d, engine.DimList(e.Known))
	case engine.TooManyVarying:
		return fmt.Sprintf("%d dims vary; carve plans at most %d varying dims at once: fix some with --dim NAME=N", e.Varying, e.MaxVarying)
	}
	return e.Error()
}

func firstOr(ss []string, def string) string {
	if len(ss) > 0 {
		return ss[0]
	}
	return def
}

func opLabel(domain, op string) string {
	if domain == "" || domain == "ai.onnx" {
		return op
	}
	return domain + "." + op
}

func domainLabel(domain string) string {
	if domain == "" {
		return "ai.onnx"
	}
	return domain
}

// unsupportedKernel: the backend has no kernel for an op of the model.
func unsupportedKernel(e *kernels.UnsupportedOpError) string {
	names := make([]string, len(e.Supported))
	for i, k := range e.Supported {
		names[i] = opLabel(k.Domain, k.Op)
	}
	return fmt.Sprintf("unsupported op %s (domain %s, node %q): backend %q has no kernel for it; supported: %s (see estimator ops)",
		e.Op.Op, domainLabel(e.Op.Domain), e.Node, e.Backend, strings.Join(names, " "))
}

// missingKernels: the target's backend lacks kernels for some of the model's ops.
func missingKernels(e *engine.MissingKernelsError) string {
	names := make([]string, len(e.Ops))
	for i, k := range e.Ops {
		names[i] = opLabel(k.Domain, k.Op)
	}
	return fmt.Sprintf("backend %q has no kernel for %d of this model's ops (%d nodes): %s; nothing was planned (see estimator ops --target)",
		e.Backend, len(e.Ops), e.Nodes, strings.Join(names, " "))
}

// unsupportedShape: the model loads, but uses ops whose shapes carve cannot infer.
func unsupportedShape(err error, e *graph.UnsupportedOpError) string {
	var b strings.Builder
	var me *modelError
	if errors.As(err, &me) {
		b.WriteString(me.path + ": ")
	}
	for i, o := range e.Ops {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "unsupported op %s (domain %s, node %q", o.OpType, domainLabel(o.Domain), o.Node)
		if o.Count > 1 {
			fmt.Fprintf(&b, ", and %d more nodes", o.Count-1)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "; supported: %s", strings.Join(e.Supported, " "))
	return b.String()
}

// modelProblem: a model file that cannot be read or is not a usable ONNX model.
func modelProblem(e *modelError) string {
	var pfe *fs.PathError
	var gme *graph.ModelError
	switch {
	case errors.Is(e.err, fs.ErrNotExist):
		return fmt.Sprintf("no such file: %s (give the path of an .onnx model, or leave --model out to use the bundled one)", e.path)
	case errors.As(e.err, &gme):
		return fmt.Sprintf("%s: not a usable ONNX model: %s", e.path, describeModelError(gme))
	case errors.As(e.err, &pfe):
		return fmt.Sprintf("cannot read %s: %v", e.path, pfe.Err)
	}
	return fmt.Sprintf("%s: %v", e.path, e.err)
}

// describeModelError words a *graph.ModelError from its fields.
func describeModelError(e *graph.ModelError) string {
	var b strings.Builder
	if e.Node != nil {
		fmt.Fprintf(&b, "node %q (%s): ", planview.NodeLabel(e.Node), opLabel(e.Node.Domain, e.Node.OpType))
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

// planProblem: a binding that cannot be planned.
func planProblem(e *engine.PlanError) string {
	var be *graph.BindError
	var oe *graph.OverflowError
	var pre *planner.ProblemError
	at := e.Binding.String()
	switch {
	case errors.As(e.Err, &oe):
		return fmt.Sprintf("at %s the sizes overflow int64 (%s overflows int64): use smaller dims", at, oe.What)
	case errors.As(e.Err, &pre):
		// The engine's problems are valid by construction but for their size.
		return fmt.Sprintf("at %s the buffers are too large to plan (%s; the planner places at most %d bytes): use smaller dims",
			at, pre.Msg, planner.MaxTotalBytes)
	case errors.As(e.Err, &be):
		where := ""
		if be.Node != nil {
			where = fmt.Sprintf("node %q (%s): ", planview.NodeLabel(be.Node), opLabel(be.Node.Domain, be.Node.OpType))
		}
		return fmt.Sprintf("the model does not admit %s: %s%s (narrow the --dim ranges)", at, where, graphProblem(be.Problem))
	case e.Node != nil:
		return fmt.Sprintf("cannot plan node %q (%s) at %s: %v", planview.NodeLabel(e.Node), opLabel(e.Node.Domain, e.Node.OpType), at, e.Err)
	}
	return fmt.Sprintf("cannot plan %s: %v", at, e.Err)
}

// graphProblem words a problem that graph found in a binding from its type's fields.
func graphProblem(err error) string {
	var (
		de *graph.DimError
		oe *graph.OverflowError
		ue *graph.UnboundDimError
	)
	switch {
	case errors.As(err, &de):
		return de.Expr + ": " + de.Problem
	case errors.As(err, &oe):
		return oe.What + " overflows int64"
	case errors.As(err, &ue):
		return fmt.Sprintf("dim %q has no value", ue.Name)
	}
	return err.Error()
}

func noFit(e *planner.NoFitError) string {
	if e.Proven {
		return fmt.Sprintf("does not fit: the buffers need at least %d bytes (lower bound %d), the capacity is %d; raise --capacity",
			max(e.LowerBound, e.Capacity+1), e.LowerBound, e.Capacity)
	}
	return fmt.Sprintf("no plan within the capacity %d found in the time allowed (best peak %d, lower bound %d); raise --capacity or --time-limit",
		e.Capacity, e.Best.Peak, e.LowerBound)
}
