package planner

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MiniMalloc's CSV format has one row per buffer under a header naming the columns:
//
//	id,lower,upper,size
//	b1,0,3,4
//
// The buffer needs size bytes over the half-open interval [lower, upper). A solution adds an
// offset column. MiniMalloc has no alignment: buffers read from CSV get Align 1, unless the file
// carries an alignment column (newer MiniMalloc versions write one).

// CSVError reports a malformed MiniMalloc CSV file, naming the line (1-based) at fault.
type CSVError struct {
	Line   int
	Column string // the column at fault, if any
	Err    error
}

func (e *CSVError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("csv: line %d, column %q: %v", e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("csv: line %d: %v", e.Line, e.Err)
}

func (e *CSVError) Unwrap() error { return e.Err }

var requiredColumns = []string{"id", "lower", "upper", "size"}

// ReadCSV reads a problem in MiniMalloc's CSV format. The header may list the columns in any
// order; columns other than id, lower, upper, size and alignment (such as offset, or gaps, whose
// buffers are then taken as live throughout [lower, upper)) are ignored. The problem has no
// capacity. Errors are *CSVError with the line number, or an I/O error from r.
func ReadCSV(r io.Reader) (Problem, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return Problem{}, &CSVError{Line: 1, Err: errors.New("empty input: want a header such as id,lower,upper,size")}
	}
	if err != nil {
		return Problem{}, csvReadError(err)
	}
	col := map[string]int{}
	for i, name := range header {
		name = strings.ToLower(strings.TrimSpace(name))
		if _, dup := col[name]; dup && name != "" {
			return Problem{}, &CSVError{Line: 1, Column: name, Err: errors.New("column named twice")}
		}
		col[name] = i
	}
	for _, name := range requiredColumns {
		if _, ok := col[name]; !ok {
			return Problem{}, &CSVError{Line: 1, Err: fmt.Errorf("header lacks column %q (want id,lower,upper,size)", name)}
		}
	}
	alignCol, hasAlign := col["alignment"]
	var p Problem
	var lines []int
	firstLine := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Problem{}, csvReadError(err)
		}
		line, _ := cr.FieldPos(0)
		field := func(name string) string { return strings.TrimSpace(rec[col[name]]) }
		integer := func(name string, s string) (int64, error) {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return 0, &CSVError{Line: line, Column: name, Err: fmt.Errorf("%q is not an integer", s)}
			}
			return v, nil
		}
		b := Buffer{ID: field("id"), Align: 1}
		if b.ID == "" {
			return Problem{}, &CSVError{Line: line, Column: "id", Err: errors.New("empty id")}
		}
		if prev, dup := firstLine[b.ID]; dup {
			return Problem{}, &CSVError{Line: line, Column: "id", Err: fmt.Errorf("id %q already used on line %d", b.ID, prev)}
		}
		firstLine[b.ID] = line
		lower, err := integer("lower", field("lower"))
		if err != nil {
			return Problem{}, err
		}
		upper, err := integer("upper", field("upper"))
		if err != nil {
			return Problem{}, err
		}
		if b.Size, err = integer("size", field("size")); err != nil {
			return Problem{}, err
		}
		if hasAlign {
			if s := strings.TrimSpace(rec[alignCol]); s != "" {
				if b.Align, err = integer("alignment", s); err != nil {
					return Problem{}, err
				}
				if b.Align <= 0 {
					return Problem{}, &CSVError{Line: line, Column: "alignment", Err: fmt.Errorf("alignment %d is not positive", b.Align)}
				}
			}
		}
		if int64(int(lower)) != lower || int64(int(upper)) != upper {
			return Problem{}, &CSVError{Line: line, Err: fmt.Errorf("lifetime [%d, %d) does not fit an int", lower, upper)}
		}
		b.Start, b.End = int(lower), int(upper)
		p.Buffers = append(p.Buffers, b)
		lines = append(lines, line)
	}
	if err := p.Validate(); err != nil {
		var pe *ProblemError
		if errors.As(err, &pe) && pe.Index >= 0 {
			return Problem{}, &CSVError{Line: lines[pe.Index], Err: errors.New(pe.Msg)}
		}
		return Problem{}, err
	}
	return p, nil
}

func csvReadError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &CSVError{Line: pe.Line, Err: pe.Err}
	}
	return err
}

// WriteCSV writes p with the plan's offsets in MiniMalloc's format: id,lower,upper,size,offset,
// one row per buffer in problem order. An alignment column is added when some buffer's
// alignment is not 1, so that ReadCSV gives back the same problem.
func WriteCSV(w io.Writer, p Problem, plan Plan) error {
	if len(plan.Offsets) != len(p.Buffers) {
		return fmt.Errorf("planner: plan has %d offsets for %d buffers", len(plan.Offsets), len(p.Buffers))
	}
	withAlign := false
	for _, b := range p.Buffers {
		withAlign = withAlign || b.Alignment() != 1
	}
	cw := csv.NewWriter(w)
	header := []string{"id", "lower", "upper", "size", "offset"}
	if withAlign {
		header = append(header, "alignment")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	for i, b := range p.Buffers {
		row[0] = b.ID
		row[1] = strconv.Itoa(b.Start)
		row[2] = strconv.Itoa(b.End)
		row[3] = strconv.FormatInt(b.Size, 10)
		row[4] = strconv.FormatInt(plan.Offsets[i], 10)
		if withAlign {
			row[5] = strconv.FormatInt(b.Alignment(), 10)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Summary is the one-line account of a plan that CLIs print (as JSON with these tags). It is a
// plain value.
type Summary struct {
	Peak       int64     `json:"peak"`
	LowerBound int64     `json:"lower_bound"`
	Optimal    bool      `json:"optimal"`
	Algorithm  Algorithm `json:"algorithm"`
	Seconds    float64   `json:"seconds"`
	Buffers    int       `json:"buffers"`
	Capacity   int64     `json:"capacity,omitempty"`
}

// NewSummary summarises a plan for p.
func NewSummary(p Problem, plan Plan) Summary {
	return Summary{
		Peak: plan.Peak, LowerBound: plan.LowerBound, Optimal: plan.Optimal, Algorithm: plan.Algorithm,
		Seconds: plan.Elapsed.Seconds(), Buffers: len(p.Buffers), Capacity: p.Capacity,
	}
}

// String renders the summary for humans, e.g. on stderr.
func (s Summary) String() string {
	over := 0.0
	if s.LowerBound > 0 {
		over = 100 * float64(s.Peak-s.LowerBound) / float64(s.LowerBound)
	}
	proven := "not proven optimal"
	if s.Optimal {
		proven = "optimal"
	}
	return fmt.Sprintf("peak %d bytes (lower bound %d, +%.2f%%, %s), %d buffers, %s, %.3f s",
		s.Peak, s.LowerBound, over, proven, s.Buffers, s.Algorithm, s.Seconds)
}
