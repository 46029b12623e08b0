package graph

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// ParseDimParam reads an ONNX dim_param. Exporters name a dim that depends on others by its
// expression, as in "past_seq + seq" (the transformers/optimum convention for a KV cache's
// present length, or dynamo's "s0 + s1"); such a param becomes that expression over the dims it
// names, so that a binding derives it instead of taking it as one more free dim. Anything else
// is one named dim, as before.
//
// The grammar is integers, names, parentheses, "+", "*" and " - " (a minus with a space on
// each side: "seq-len" stays a name). names are the named dims the expression mentions, in
// order of first use; a plain name gives itself.
func ParseDimParam(s string) (d Dim, names []string) {
	if !strings.ContainsAny(s, "+*()") && !strings.Contains(s, " - ") {
		return Sym(s), []string{s}
	}
	p := dimParser{src: s}
	d, ok := p.sum()
	p.space()
	if !ok || p.pos != len(p.src) || d.Err() != nil || len(p.names) == 0 {
		return Sym(s), []string{s}
	}
	return d, p.names
}

type dimParser struct {
	src   string
	pos   int
	names []string
}

func (p *dimParser) space() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

func (p *dimParser) sum() (Dim, bool) {
	d, ok := p.product()
	for ok {
		p.space()
		switch {
		case strings.HasPrefix(p.src[p.pos:], "+"):
			p.pos++
			var e Dim
			if e, ok = p.product(); ok {
				d = d.Add(e)
			}
		case p.pos > 0 && p.src[p.pos-1] == ' ' && strings.HasPrefix(p.src[p.pos:], "- "):
			p.pos++
			var e Dim
			if e, ok = p.product(); ok {
				d = d.Sub(e)
			}
		default:
			return d, true
		}
	}
	return d, false
}

func (p *dimParser) product() (Dim, bool) {
	d, ok := p.atom()
	for ok {
		p.space()
		if !strings.HasPrefix(p.src[p.pos:], "*") {
			return d, true
		}
		p.pos++
		var e Dim
		if e, ok = p.atom(); ok {
			d = d.Mul(e)
		}
	}
	return d, false
}

func (p *dimParser) atom() (Dim, bool) {
	p.space()
	start := p.pos
	switch {
	case p.pos >= len(p.src):
		return Dim{}, false
	case p.src[p.pos] == '(':
		p.pos++
		d, ok := p.sum()
		p.space()
		if !ok || p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return Dim{}, false
		}
		p.pos++
		return d, true
	case p.src[p.pos] >= '0' && p.src[p.pos] <= '9':
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		v, err := strconv.ParseInt(p.src[start:p.pos], 10, 64)
		return Const(v), err == nil
	}
	for p.pos < len(p.src) {
		r := rune(p.src[p.pos])
		if r != '_' && r != '.' && !unicode.IsLetter(r) && !(p.pos > start && unicode.IsDigit(r)) {
			break
		}
		p.pos++
	}
	if p.pos == start {
		return Dim{}, false
	}
	name := p.src[start:p.pos]
	if !slices.Contains(p.names, name) {
		p.names = append(p.names, name)
	}
	return Sym(name), true
}
