package app

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"
)

// table aligns tab-separated columns with text/tabwriter and trims the padding tabwriter
// leaves at the ends of lines, so that outputs (and golden files) carry no trailing blanks.
type table struct {
	w   io.Writer
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

func newTable(w io.Writer) *table {
	t := &table{w: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

// row writes one formatted line; cells are separated by tabs.
func (t *table) row(format string, args ...any) { fmt.Fprintf(t.tw, format, args...) }

// flush writes the aligned lines.
func (t *table) flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	lines := bytes.SplitAfter(t.buf.Bytes(), []byte("\n"))
	for _, l := range lines {
		nl := bytes.HasSuffix(l, []byte("\n"))
		l = bytes.TrimRight(l, " \n")
		if nl {
			l = append(l, '\n')
		}
		if _, err := t.w.Write(l); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}
