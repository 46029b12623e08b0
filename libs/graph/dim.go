package graph

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Dim is one dimension of a shape: a constant, or an expression over the model's named dims
// (batch, seq, ...) such as "batch*seq", "seq + 1" or "max(seq, 16)". The zero Dim is the
// constant 0. Dims are immutable and safe for concurrent use.
//
// Expressions are kept in a canonical form (sums of products of named dims and opaque
// functions, with integer coefficients), so equal polynomials compare Equal and exact
// divisions such as (batch*seq*64)/(batch*seq) fold to constants. Arithmetic never fails:
// an impossible result (division by zero, broadcasting 3 with 5, an int64 overflow) is a
// poisoned Dim whose Err reports the problem, like NaN; evaluation reports it too.
type Dim struct {
	c int64 // the value when e is nil
	e *expr
}

// Shape is a tensor's shape over symbolic dims. A nil Shape is a scalar.
type Shape []Dim

// maxExprSize bounds the node count of one dim expression, so that evaluating a dim costs
// little even for hostile models that build ever larger expressions.
const maxExprSize = 512

// DimError reports a dim expression that cannot be evaluated or built.
type DimError struct {
	Expr    string // the expression, or the operation that failed
	Problem string
}

func (e *DimError) Error() string { return "graph: dim " + e.Expr + ": " + e.Problem }

// UnboundDimError reports a named dim that a binding does not give a value for.
type UnboundDimError struct{ Name string }

func (e *UnboundDimError) Error() string {
	return fmt.Sprintf("graph: dim %q has no value in the binding", e.Name)
}

type exprKind uint8

const (
	exSym  exprKind = iota // a named dim
	exFn                   // an opaque function of dims
	exPoly                 // a sum of terms
	exBad                  // a poisoned result
)

type fnOp uint8

const (
	fnFloorDiv  fnOp = iota // floor(a / b)
	fnCeilDiv               // ceil(a / b)
	fnExactDiv              // a / b, an error unless b divides a
	fnMod                   // a mod b, with the sign of b (Python's and ONNX fmod=0)
	fnMax                   // max(a, b)
	fnMin                   // min(a, b)
	fnBroadcast             // numpy broadcasting of two dims
	fnSliceLen              // length of Slice(dim=a, start=b, end=c, step=d)
	fnEq                    // 1 if a == b else 0
	fnLt                    // 1 if a < b else 0
	fnSelect                // b if a != 0 else c
)

var fnNames = [...]string{
	fnFloorDiv: "floordiv", fnCeilDiv: "ceildiv", fnExactDiv: "exactdiv", fnMod: "mod",
	fnMax: "max", fnMin: "min", fnBroadcast: "broadcast", fnSliceLen: "slicelen",
	fnEq: "eq", fnLt: "lt", fnSelect: "select",
}

type expr struct {
	kind  exprKind
	name  string // exSym
	op    fnOp   // exFn
	args  []Dim  // exFn
	terms []term // exPoly: at least one term with atoms; sorted by monomial key
	err   error  // exBad
	key   string // canonical text: equal keys mean equal expressions
	size  int    // node count
}

// term is coef times the product of atoms (exSym or exFn expressions, sorted by key; a
// repeated atom is a power). A term without atoms is the constant term.
type term struct {
	coef  int64
	atoms []*expr
	mono  string // the atoms' keys joined by "*"
}

// Const returns the constant dim v.
func Const(v int64) Dim { return Dim{c: v} }

// Sym returns the named dim name.
func Sym(name string) Dim {
	key := name
	if !isPlainName(name) {
		key = strconv.Quote(name)
	}
	return Dim{e: &expr{kind: exSym, name: name, key: key, size: 1}}
}

func isPlainName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r == '.' || r == ':' || r == '/' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

func badDim(what, format string, args ...any) Dim {
	err := &DimError{Expr: what, Problem: fmt.Sprintf(format, args...)}
	return Dim{e: &expr{kind: exBad, err: err, key: "!" + err.Error(), size: 1}}
}

// IsConst reports whether d is a constant.
func (d Dim) IsConst() bool { return d.e == nil }

// Value returns d's value and true if d is a constant.
func (d Dim) Value() (int64, bool) { return d.c, d.e == nil }

// Err returns the problem of a poisoned dim, or nil.
func (d Dim) Err() error {
	if d.e != nil && d.e.kind == exBad {
		return d.e.err
	}
	return nil
}

// Equal reports whether a and b are the same constant or the same canonical expression.
// Expressions that are equal only for some bindings are not Equal.
func (d Dim) Equal(o Dim) bool {
	if d.e == nil || o.e == nil {
		return d.e == nil && o.e == nil && d.c == o.c
	}
	return d.e.kind != exBad && d.e.key == o.e.key
}

func (d Dim) String() string {
	if d.e == nil {
		return strconv.FormatInt(d.c, 10)
	}
	return d.e.key
}

func (d Dim) size() int {
	if d.e == nil {
		return 1
	}
	return d.e.size
}

// Syms appends the names of the named dims d depends on to names, each once, and returns it.
func (d Dim) Syms(names []string) []string {
	if d.e == nil {
		return names
	}
	switch d.e.kind {
	case exSym:
		for _, n := range names {
			if n == d.e.name {
				return names
			}
		}
		return append(names, d.e.name)
	case exFn:
		for _, a := range d.e.args {
			names = a.Syms(names)
		}
	case exPoly:
		for _, t := range d.e.terms {
			for _, a := range t.atoms {
				names = Dim{e: a}.Syms(names)
			}
		}
	}
	return names
}

// Eval returns d's value for the given named dims.
func (d Dim) Eval(dims map[string]int64) (int64, error) {
	if d.e == nil {
		return d.c, nil
	}
	return d.e.eval(dims)
}

func (e *expr) eval(dims map[string]int64) (int64, error) {
	switch e.kind {
	case exSym:
		v, ok := dims[e.name]
		if !ok {
			return 0, &UnboundDimError{Name: e.name}
		}
		return v, nil
	case exBad:
		return 0, e.err
	case exPoly:
		var sum int64
		for _, t := range e.terms {
			p := t.coef
			for _, a := range t.atoms {
				v, err := a.eval(dims)
				if err != nil {
					return 0, err
				}
				var ok bool
				if p, ok = CheckedMul(p, v); !ok {
					return 0, &OverflowError{What: "dim " + e.key}
				}
			}
			var ok bool
			if sum, ok = addSigned(sum, p); !ok {
				return 0, &OverflowError{What: "dim " + e.key}
			}
		}
		return sum, nil
	}
	var vs [4]int64
	for i, a := range e.args {
		v, err := a.Eval(dims)
		if err != nil {
			return 0, err
		}
		vs[i] = v
	}
	v, err := applyFn(e.op, vs[:len(e.args)])
	if err != nil {
		return 0, fmt.Errorf("evaluating %s: %w", e.key, err)
	}
	return v, nil
}

// applyFn computes a function of constants.
func applyFn(op fnOp, a []int64) (int64, error) {
	name := fnNames[op]
	switch op {
	case fnFloorDiv, fnCeilDiv, fnExactDiv, fnMod:
		if a[1] == 0 {
			return 0, &DimError{Expr: fmtCall(name, a), Problem: "division by zero"}
		}
		if a[0] == math.MinInt64 && a[1] == -1 {
			return 0, &OverflowError{What: fmtCall(name, a)}
		}
		q, r := a[0]/a[1], a[0]%a[1]
		switch op {
		case fnFloorDiv:
			if r != 0 && (r < 0) != (a[1] < 0) {
				q--
			}
			return q, nil
		case fnCeilDiv:
			if r != 0 && (r < 0) == (a[1] < 0) {
				q++
			}
			return q, nil
		case fnExactDiv:
			if r != 0 {
				return 0, &DimError{Expr: fmtCall(name, a), Problem: fmt.Sprintf("%d is not a multiple of %d", a[0], a[1])}
			}
			return q, nil
		default:
			if r != 0 && (r < 0) != (a[1] < 0) {
				r += a[1]
			}
			return r, nil
		}
	case fnMax:
		return max(a[0], a[1]), nil
	case fnMin:
		return min(a[0], a[1]), nil
	case fnBroadcast:
		switch {
		case a[0] == a[1] || a[1] == 1:
			return a[0], nil
		case a[0] == 1:
			return a[1], nil
		}
		return 0, &DimError{Expr: fmtCall(name, a), Problem: fmt.Sprintf("dims %d and %d do not broadcast", a[0], a[1])}
	case fnSliceLen:
		return sliceLen(a[0], a[1], a[2], a[3])
	case fnEq:
		return b2i(a[0] == a[1]), nil
	case fnLt:
		return b2i(a[0] < a[1]), nil
	case fnSelect:
		if a[0] != 0 {
			return a[1], nil
		}
		return a[2], nil
	}
	return 0, fmt.Errorf("graph: unknown dim function %d", op)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func fmtCall(name string, a []int64) string {
	s := make([]string, len(a))
	for i, v := range a {
		s[i] = strconv.FormatInt(v, 10)
	}
	return name + "(" + strings.Join(s, ", ") + ")"
}

// sliceLen is the length of ONNX Slice over a dim of size dim: negative starts and ends
// count from the end, both are clamped, and the step may be negative.
func sliceLen(dim, start, end, step int64) (int64, error) {
	if step == 0 {
		return 0, &DimError{Expr: fmtCall("slicelen", []int64{dim, start, end, step}), Problem: "slice step is 0"}
	}
	if dim < 0 {
		return 0, &DimError{Expr: fmtCall("slicelen", []int64{dim, start, end, step}), Problem: "negative dim"}
	}
	if dim == 0 {
		return 0, nil
	}
	clamp := func(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }
	norm := func(v int64) int64 { // v + dim for negative v, without overflow
		if v < 0 {
			if v < -dim {
				return -1
			}
			return v + dim
		}
		return v
	}
	if step > 0 {
		s, e := clamp(norm(start), 0, dim), clamp(norm(end), 0, dim)
		if e <= s {
			return 0, nil
		}
		return (e-s-1)/step + 1, nil
	}
	s, e := clamp(norm(start), 0, dim-1), clamp(norm(end), -1, dim-1)
	if s <= e {
		return 0, nil
	}
	if step == math.MinInt64 {
		return 1, nil
	}
	return (s-e-1)/(-step) + 1, nil
}

func addSigned(a, b int64) (int64, bool) {
	c := a + b
	if (c > a) != (b > 0) {
		return 0, false
	}
	return c, true
}

// ---- canonical polynomial arithmetic ----

func (d Dim) terms() []term {
	if d.e == nil {
		if d.c == 0 {
			return nil
		}
		return []term{{coef: d.c}}
	}
	if d.e.kind == exPoly {
		return d.e.terms
	}
	return []term{{coef: 1, atoms: []*expr{d.e}, mono: d.e.key}}
}

// fromTerms builds the canonical Dim of a sum of terms with distinct monomials sorted by mono.
func fromTerms(ts []term) Dim {
	switch {
	case len(ts) == 0:
		return Const(0)
	case len(ts) == 1 && len(ts[0].atoms) == 0:
		return Const(ts[0].coef)
	case len(ts) == 1 && ts[0].coef == 1 && len(ts[0].atoms) == 1:
		return Dim{e: ts[0].atoms[0]}
	}
	size := 0
	var b strings.Builder
	first := true
	write := func(t term) {
		c := t.coef
		if !first {
			if c < 0 && c != math.MinInt64 {
				b.WriteString(" - ")
				c = -c
			} else {
				b.WriteString(" + ")
			}
		}
		first = false
		switch {
		case len(t.atoms) == 0:
			b.WriteString(strconv.FormatInt(c, 10))
		case c == 1:
		case c == -1:
			b.WriteString("-")
		default:
			b.WriteString(strconv.FormatInt(c, 10))
			b.WriteString("*")
		}
		for i, a := range t.atoms {
			if i > 0 {
				b.WriteString("*")
			}
			if a.kind == exFn || a.kind == exSym {
				b.WriteString(a.key)
			}
		}
	}
	var constant *term
	for i := range ts {
		size++
		for _, a := range ts[i].atoms {
			size += a.size
		}
		if len(ts[i].atoms) == 0 {
			constant = &ts[i]
			continue
		}
		write(ts[i])
	}
	if constant != nil {
		write(*constant)
	}
	if size > maxExprSize {
		return badDim(b.String()[:min(b.Len(), 80)]+"...", "expression has more than %d nodes", maxExprSize)
	}
	return Dim{e: &expr{kind: exPoly, terms: ts, key: b.String(), size: size}}
}

func firstBad(ds ...Dim) (Dim, bool) {
	for _, d := range ds {
		if d.e != nil && d.e.kind == exBad {
			return d, true
		}
	}
	return Dim{}, false
}

// Add returns d + o.
func (d Dim) Add(o Dim) Dim {
	if bad, ok := firstBad(d, o); ok {
		return bad
	}
	if d.e == nil && o.e == nil {
		s, ok := addSigned(d.c, o.c)
		if !ok {
			return badDim(fmt.Sprintf("%d + %d", d.c, o.c), "overflows int64")
		}
		return Const(s)
	}
	return sumTerms(append(append([]term(nil), d.terms()...), o.terms()...), d, o, "+")
}

// Sub returns d - o.
func (d Dim) Sub(o Dim) Dim { return d.Add(o.Mul(Const(-1))) }

// Mul returns d * o.
func (d Dim) Mul(o Dim) Dim {
	if bad, ok := firstBad(d, o); ok {
		return bad
	}
	if d.e == nil && o.e == nil {
		p, ok := CheckedMul(d.c, o.c)
		if !ok {
			return badDim(fmt.Sprintf("%d * %d", d.c, o.c), "overflows int64")
		}
		return Const(p)
	}
	ta, tb := d.terms(), o.terms()
	if len(ta)*len(tb) > maxExprSize {
		return badDim(d.String()+" * "+o.String(), "expression has more than %d nodes", maxExprSize)
	}
	out := make([]term, 0, len(ta)*len(tb))
	for _, x := range ta {
		for _, y := range tb {
			c, ok := CheckedMul(x.coef, y.coef)
			if !ok {
				return badDim(d.String()+" * "+o.String(), "coefficient overflows int64")
			}
			atoms := make([]*expr, 0, len(x.atoms)+len(y.atoms))
			atoms = append(append(atoms, x.atoms...), y.atoms...)
			sort.SliceStable(atoms, func(i, j int) bool { return atoms[i].key < atoms[j].key })
			out = append(out, term{coef: c, atoms: atoms, mono: monoKey(atoms)})
		}
	}
	return sumTerms(out, d, o, "*")
}

func monoKey(atoms []*expr) string {
	switch len(atoms) {
	case 0:
		return ""
	case 1:
		return atoms[0].key
	}
	s := make([]string, len(atoms))
	for i, a := range atoms {
		s[i] = a.key
	}
	return strings.Join(s, "*")
}

// sumTerms combines terms with equal monomials and builds the canonical Dim.
func sumTerms(ts []term, a, b Dim, op string) Dim {
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].mono < ts[j].mono })
	out := ts[:0]
	for _, t := range ts {
		if n := len(out); n > 0 && out[n-1].mono == t.mono {
			c, ok := addSigned(out[n-1].coef, t.coef)
			if !ok {
				return badDim(a.String()+" "+op+" "+b.String(), "coefficient overflows int64")
			}
			out[n-1].coef = c
			continue
		}
		out = append(out, t)
	}
	kept := out[:0]
	for _, t := range out {
		if t.coef != 0 {
			kept = append(kept, t)
		}
	}
	return fromTerms(kept)
}

func fnDim(op fnOp, args ...Dim) Dim {
	if bad, ok := firstBad(args...); ok {
		return bad
	}
	allConst := true
	for _, a := range args {
		allConst = allConst && a.e == nil
	}
	if allConst {
		vs := make([]int64, len(args))
		for i, a := range args {
			vs[i] = a.c
		}
		v, err := applyFn(op, vs)
		if err != nil {
			var de *DimError
			if errors.As(err, &de) {
				return badDim(de.Expr, "%s", de.Problem)
			}
			return badDim(fmtCall(fnNames[op], vs), "%v", err)
		}
		return Const(v)
	}
	size := 1
	keys := make([]string, len(args))
	for i, a := range args {
		size += a.size()
		keys[i] = a.String()
	}
	key := fnNames[op] + "(" + strings.Join(keys, ", ") + ")"
	if size > maxExprSize {
		return badDim(key[:min(len(key), 80)]+"...", "expression has more than %d nodes", maxExprSize)
	}
	return Dim{e: &expr{kind: exFn, op: op, args: append([]Dim(nil), args...), key: key, size: size}}
}

// FloorDiv returns floor(d / o). Exact divisions of polynomials by a constant or by a
// single product of named dims fold; others stay as a function.
func (d Dim) FloorDiv(o Dim) Dim {
	if q, ok := divExact(d, o); ok {
		return q
	}
	return fnDim(fnFloorDiv, d, o)
}

// ExactDiv returns d / o where o divides d: constants that divide, or a polynomial every term
// of which is a multiple of o, o being a non-zero constant or a single product of named dims
// (batch*64 by 64 is batch; batch by 4 is not known to divide). ok is false otherwise.
func (d Dim) ExactDiv(o Dim) (q Dim, ok bool) {
	if x, okd := d.Value(); okd {
		if y, oko := o.Value(); oko {
			if y == 0 || x%y != 0 {
				return Dim{}, false
			}
			return Const(x / y), true
		}
	}
	return divExact(d, o)
}

// ceilDiv returns ceil(d / o).
func (d Dim) ceilDiv(o Dim) Dim {
	if q, ok := divExact(d, o); ok {
		return q
	}
	return fnDim(fnCeilDiv, d, o)
}

// exactDiv returns d / o and evaluates to an error where o does not divide d.
func (d Dim) exactDiv(o Dim) Dim {
	if q, ok := divExact(d, o); ok {
		return q
	}
	return fnDim(fnExactDiv, d, o)
}

// mod returns d mod o with the sign of o.
func (d Dim) mod(o Dim) Dim {
	if _, ok := divExact(d, o); ok {
		return Const(0)
	}
	return fnDim(fnMod, d, o)
}

// divExact divides symbolically when every term of d is a multiple of o, o being a non-zero
// constant or a single term. It does not fold constant / constant (fnDim does, with checks).
func divExact(d, o Dim) (Dim, bool) {
	if _, bad := firstBad(d, o); bad || (d.e == nil && o.e == nil) {
		return Dim{}, false
	}
	if d.e != nil && d.Equal(o) {
		return Const(1), true
	}
	ot := o.terms()
	if len(ot) != 1 || ot[0].coef == 0 {
		return Dim{}, false
	}
	den := ot[0]
	if den.coef == -1 && len(den.atoms) == 0 {
		return Dim{}, false // d / -1: leave to Mul; avoids MinInt64 edge cases
	}
	dt := d.terms()
	out := make([]term, 0, len(dt))
	for _, t := range dt {
		if t.coef%den.coef != 0 {
			return Dim{}, false
		}
		rest, ok := removeAtoms(t.atoms, den.atoms)
		if !ok {
			return Dim{}, false
		}
		out = append(out, term{coef: t.coef / den.coef, atoms: rest, mono: monoKey(rest)})
	}
	return sumTerms(out, d, o, "/"), true
}

// removeAtoms removes each atom of sub from the sorted multiset atoms.
func removeAtoms(atoms, sub []*expr) ([]*expr, bool) {
	rest := append([]*expr(nil), atoms...)
	for _, s := range sub {
		found := false
		for i, a := range rest {
			if a.key == s.key {
				rest = append(rest[:i], rest[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return rest, true
}

// MaxDim returns max(a, b).
func MaxDim(a, b Dim) Dim {
	switch {
	case a.Equal(b):
		return a
	case b.IsConst() && b.c == 0 && a.nonNeg():
		return a
	case a.IsConst() && a.c == 0 && b.nonNeg():
		return b
	}
	return fnDim(fnMax, a, b)
}

// nonNeg reports whether d is known to be >= 0 for every binding (named dims are never
// negative).
func (d Dim) nonNeg() bool {
	if d.e == nil {
		return d.c >= 0
	}
	switch d.e.kind {
	case exSym:
		return true
	case exPoly:
		for _, t := range d.e.terms {
			if t.coef < 0 {
				return false
			}
			for _, a := range t.atoms {
				if !(Dim{e: a}).nonNeg() {
					return false
				}
			}
		}
		return true
	case exFn:
		args := d.e.args
		switch d.e.op {
		case fnSliceLen, fnEq, fnLt:
			return true
		case fnFloorDiv, fnCeilDiv, fnExactDiv, fnBroadcast, fnMin:
			return args[0].nonNeg() && args[1].nonNeg()
		case fnMax:
			return args[0].nonNeg() || args[1].nonNeg()
		case fnSelect:
			return args[1].nonNeg() && args[2].nonNeg()
		}
	}
	return false
}

// MinDim returns min(a, b).
func MinDim(a, b Dim) Dim {
	if a.Equal(b) {
		return a
	}
	return fnDim(fnMin, a, b)
}

// broadcastDim is numpy broadcasting of two dims; it evaluates to an error where they differ
// and neither is 1.
func broadcastDim(a, b Dim) Dim {
	switch {
	case a.Equal(b):
		return a
	case b.e == nil && b.c == 1:
		return a
	case a.e == nil && a.c == 1:
		return b
	}
	return fnDim(fnBroadcast, a, b)
}

func sliceLenDim(dim, start, end, step Dim) Dim {
	if s, ok := step.Value(); ok && s == 1 {
		if st, ok := start.Value(); ok && st == 0 {
			if e, ok := end.Value(); ok && e >= math.MaxInt32 {
				return dim // dim is never negative, so [0:huge] takes it all
			}
			if end.Equal(dim) {
				return dim
			}
			if end.nonNeg() {
				return MinDim(end, dim) // [0:end] of a dim, end never negative
			}
		}
	}
	return fnDim(fnSliceLen, dim, start, end, step)
}

func eqDim(a, b Dim) Dim {
	switch {
	case a.Equal(b):
		return Const(1)
	case negConst(a) && b.nonNeg(), negConst(b) && a.nonNeg():
		return Const(0) // TorchScript's expand(-1) tests a dim for -1
	}
	return fnDim(fnEq, a, b)
}

func ltDim(a, b Dim) Dim {
	switch {
	case a.Equal(b):
		return Const(0)
	case negConst(a) && b.nonNeg():
		return Const(1)
	case negConst(b) && a.nonNeg():
		return Const(0)
	}
	return fnDim(fnLt, a, b)
}

// negConst reports whether d is a negative constant, which a dim known to be non-negative
// never equals nor undercuts.
func negConst(d Dim) bool { return d.e == nil && d.c < 0 }

func selectDim(c, x, y Dim) Dim {
	if v, ok := c.Value(); ok {
		if v != 0 {
			return x
		}
		return y
	}
	if x.Equal(y) {
		return x
	}
	return fnDim(fnSelect, c, x, y)
}

// ---- Shape ----

// IsConst reports whether every dim of s is a constant.
func (s Shape) IsConst() bool {
	for _, d := range s {
		if !d.IsConst() {
			return false
		}
	}
	return true
}

// Eval returns the concrete shape for the given named dims.
func (s Shape) Eval(dims map[string]int64) ([]int64, error) {
	out := make([]int64, len(s))
	for i, d := range s {
		v, err := d.Eval(dims)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// NumElements returns the symbolic product of s's dims.
func (s Shape) NumElements() Dim {
	n := Const(1)
	for _, d := range s {
		n = n.Mul(d)
	}
	return n
}

// Err returns the first poisoned dim's problem, or nil.
func (s Shape) Err() error {
	for _, d := range s {
		if err := d.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// ConstShape returns the Shape of constant dims.
func ConstShape(dims []int64) Shape {
	s := make(Shape, len(dims))
	for i, d := range dims {
		s[i] = Const(d)
	}
	return s
}
