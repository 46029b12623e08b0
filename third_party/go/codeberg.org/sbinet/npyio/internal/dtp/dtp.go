// Copyright 2025 The npyio Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package dtp provides tools to parse dtype strings specifications.
package dtp

import (
	"fmt"
	"strconv"
	"strings"

	"codeberg.org/sbinet/npyio/internal/dtp/ast"
	"codeberg.org/sbinet/npyio/internal/dtp/token"
)

// Parse parses a dtype.descr string.
func Parse(s string) (ast.Node, error) {
	p := newParser(s)

	n, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("could not parse dtype string %q: %w", s, err)
	}

	return n, nil
}

func Convert(v ast.Node) (any, error) {
	switch v := v.(type) {
	case *ast.Literal:
		switch v.Kind {
		case token.String:
			vv, err := String(v)
			if err != nil {
				return nil, err
			}
			return vv, nil
		case token.Number:
			vv, err := Int(v)
			if err != nil {
				return nil, err
			}
			return vv, nil
		default:
			return nil, fmt.Errorf("unknown ast literal kind %v", v.Kind)
		}
	case *ast.List, *ast.Tuple:
		vs, err := Slice(v)
		if err != nil {
			return nil, err
		}
		return vs, nil
	default:
		return nil, fmt.Errorf("unknown ast node type %T", v)
	}
}

func String(v *ast.Literal) (string, error) {
	if v.Kind != token.String {
		return "", fmt.Errorf("invalid ast literal kind: %v", v.Kind)
	}

	if len(v.Text) < 2 {
		return "", fmt.Errorf("too short string literal %q", v.Text)
	}

	if v.Text[0] != '\'' || v.Text[len(v.Text)-1] != '\'' {
		return "", fmt.Errorf("invalid string literal %q", v.Text)
	}

	return string(v.Text[1 : len(v.Text)-1]), nil
}

func Int(v *ast.Literal) (int, error) {
	if v.Kind != token.Number {
		return 0, fmt.Errorf("invalid ast literal kind: %v", v.Kind)
	}

	if len(v.Text) < 1 {
		return 0, fmt.Errorf("too short number literal %q", v.Text)
	}

	i, err := strconv.ParseInt(v.Text, 10, 64)
	if err != nil {
		return 0, err
	}

	return int(i), nil
}

func Slice(v ast.Node) (sli []any, err error) {
	switch v := v.(type) {
	case *ast.List:
		sli, err = cnvSlice(sli, v.X)
		if err != nil {
			return nil, fmt.Errorf("could not convert ast list: %w", err)
		}
	case *ast.Tuple:
		sli, err = cnvSlice(sli, v.X)
		if err != nil {
			return nil, fmt.Errorf("could not convert ast tuple: %w", err)
		}
	default:
		return nil, fmt.Errorf("invalid ast node type %T", v)
	}

	return sli, nil
}

func cnvSlice(sli []any, vs []ast.Node) ([]any, error) {
	for i := range vs {
		v, err := Convert(vs[i])
		if err != nil {
			return nil, err
		}
		sli = append(sli, v)
	}

	return sli, nil
}

func repr(nodes ...ast.Node) string {
	o := new(strings.Builder)
	for i, n := range nodes {
		if i > 0 {
			o.WriteString(" ")
		}
		repr1(o, n)
	}
	return o.String()
}

func repr1(o *strings.Builder, n ast.Node) {
	switch n := n.(type) {
	case *ast.Literal:
		o.WriteString(n.Text)
	case *ast.Tuple:
		o.WriteString("(")
		for i, v := range n.X {
			if i > 0 {
				o.WriteString(", ")
			}
			repr1(o, v)
		}
		if len(n.X) == 1 {
			o.WriteString(",")
		}
		o.WriteString(")")
	case *ast.List:
		o.WriteString("[")
		for i, v := range n.X {
			if i > 0 {
				o.WriteString(", ")
			}
			repr1(o, v)
		}
		o.WriteString("]")
	default:
		panic(fmt.Errorf("unknown ast node %T", n))
	}
}
