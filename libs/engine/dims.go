package engine

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Range is an inclusive range [Lo, Hi] of one named dim; Lo == Hi for a fixed dim. Open marks a
// dim whose largest fitting value is to be searched for (written "name=?" or "name=?:hi").
type Range struct {
	Lo, Hi int64
	Open   bool
}

func (r Range) String() string {
	switch {
	case r.Open && r.Hi > 0:
		return fmt.Sprintf("?:%d", r.Hi)
	case r.Open:
		return "?"
	case r.Lo == r.Hi:
		return strconv.FormatInt(r.Lo, 10)
	}
	return fmt.Sprintf("%d:%d", r.Lo, r.Hi)
}

// Fixed reports whether the range holds exactly one value.
func (r Range) Fixed() bool { return !r.Open && r.Lo == r.Hi }

// Envelope maps named dims (batch, seq, ...) to the ranges a run admits.
type Envelope map[string]Range

// Names returns the envelope's dim names, sorted.
func (e Envelope) Names() []string {
	ns := make([]string, 0, len(e))
	for n := range e {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

func (e Envelope) String() string {
	parts := make([]string, 0, len(e))
	for _, n := range e.Names() {
		parts = append(parts, n+"="+e[n].String())
	}
	return strings.Join(parts, " ")
}

// Binding is one concrete value per named dim.
type Binding map[string]int64

func (b Binding) String() string {
	ns := make([]string, 0, len(b))
	for n := range b {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("%s=%d", n, b[n])
	}
	return strings.Join(parts, " ")
}

// DimSyntaxError reports a --dim argument that is not name=value, name=lo:hi or name=?.
type DimSyntaxError struct {
	Arg     string
	Problem string
}

func (e *DimSyntaxError) Error() string {
	return fmt.Sprintf("bad dim %q: %s (want name=value, name=lo:hi or name=?, e.g. batch=1:32)", e.Arg, e.Problem)
}

// MaxDimValue bounds every dim value, so that products of a few dims stay far from overflow
// checks' territory only through honest sizes: 2^40 elements along one axis is already absurd.
const MaxDimValue = int64(1) << 40

// ParseDim parses one --dim argument: "batch=8", "seq=1:8192", "batch=?" or "batch=?:64".
func ParseDim(arg string) (string, Range, error) {
	name, spec, ok := strings.Cut(arg, "=")
	name, spec = strings.TrimSpace(name), strings.TrimSpace(spec)
	if !ok {
		return "", Range{}, &DimSyntaxError{arg, "missing '='"}
	}
	if name == "" {
		return "", Range{}, &DimSyntaxError{arg, "empty dim name"}
	}
	if spec == "" {
		return "", Range{}, &DimSyntaxError{arg, "empty value"}
	}
	num := func(s string) (int64, error) {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		switch {
		case err != nil:
			return 0, &DimSyntaxError{arg, fmt.Sprintf("%q is not an integer", s)}
		case v < 0:
			return 0, &DimSyntaxError{arg, fmt.Sprintf("%d is negative", v)}
		case v > MaxDimValue:
			return 0, &DimSyntaxError{arg, fmt.Sprintf("%d exceeds the largest dim carve admits (%d)", v, MaxDimValue)}
		}
		return v, nil
	}
	if rest, open := strings.CutPrefix(spec, "?"); open {
		if rest == "" {
			return name, Range{Lo: 1, Open: true}, nil
		}
		hiS, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return "", Range{}, &DimSyntaxError{arg, "an open dim is written name=? or name=?:max"}
		}
		hi, err := num(hiS)
		if err != nil {
			return "", Range{}, err
		}
		if hi < 1 {
			return "", Range{}, &DimSyntaxError{arg, "the largest value to search must be at least 1"}
		}
		return name, Range{Lo: 1, Hi: hi, Open: true}, nil
	}
	loS, hiS, isRange := strings.Cut(spec, ":")
	lo, err := num(loS)
	if err != nil {
		return "", Range{}, err
	}
	hi := lo
	if isRange {
		if hi, err = num(hiS); err != nil {
			return "", Range{}, err
		}
		if hi < lo {
			return "", Range{}, &DimSyntaxError{arg, fmt.Sprintf("empty range: %d > %d", lo, hi)}
		}
	}
	return name, Range{Lo: lo, Hi: hi}, nil
}

// ParseEnvelope parses --dim arguments; a dim given twice is an error.
func ParseEnvelope(args []string) (Envelope, error) {
	env := Envelope{}
	for _, a := range args {
		name, r, err := ParseDim(a)
		if err != nil {
			return nil, err
		}
		if _, dup := env[name]; dup {
			return nil, &DimSyntaxError{a, fmt.Sprintf("dim %q is given twice", name)}
		}
		env[name] = r
	}
	return env, nil
}

// ErrNoOpenDim and ErrManyOpenDims report a fit search without exactly one open dim.
var (
	ErrNoOpenDim    = errors.New("no open dim to search: mark one with name=? (e.g. batch=?)")
	ErrManyOpenDims = errors.New("more than one open dim: search one at a time")
)

// Open returns the envelope's one open dim.
func (e Envelope) Open() (string, Range, error) {
	var name string
	for _, n := range e.Names() {
		if e[n].Open {
			if name != "" {
				return "", Range{}, ErrManyOpenDims
			}
			name = n
		}
	}
	if name == "" {
		return "", Range{}, ErrNoOpenDim
	}
	return name, e[name], nil
}
