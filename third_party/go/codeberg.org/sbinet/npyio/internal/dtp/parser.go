// Copyright 2025 The npyio Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package dtp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"codeberg.org/sbinet/npyio/internal/dtp/ast"
	"codeberg.org/sbinet/npyio/internal/dtp/token"
)

var errUnbalanced = errors.New("unbalanced")

type parser struct {
	s *scanner
	f *token.File
}

func newParser(src string) *parser {
	p := &parser{s: newScanner(strings.NewReader(src)), f: token.NewFileSet().AddFile("<stdin>", -1, len(src))}
	return p
}

func (p *parser) pos(pos token.Pos) token.Position {
	if pos == 0 {
		return token.Position{
			Filename: p.f.Name(),
			Line:     1,
			Column:   0,
		}
	}
	return p.f.Position(pos)
}

func (p *parser) parse() (ast.Node, error) {
	var nodes []ast.Node
	for p.s.Next() {
		tok := p.s.Token()
		node, err := p.parseNode(tok)
		if err != nil {
			return nil, err
		}
		if node == nil {
			continue
		}
		nodes = append(nodes, node)
	}

	if len(p.s.errs) > 0 {
		return nil, p.s.errs[0]
	}

	switch n := len(nodes); n {
	case 0:
		return nil, nil
	case 1:
		return nodes[0], nil
	default:
		return nil, fmt.Errorf("invalid number of root nodes: got=%d, want=1", n)
	}
}

func (p *parser) parseNode(tok token.Token) (ast.Node, error) {
	switch tok.Kind {
	case token.String:
		return p.parseString(tok)
	case token.Number:
		return p.parseNumber(tok)
	case token.Lbrack:
		return p.parseList(tok)
	case token.Lparen:
		return p.parseTuple(tok)
	case token.Rbrack, token.Rparen:
		return nil, errUnbalanced
	default:
		return nil, fmt.Errorf("impossible: %v (%v)", tok, tok.Kind)
	}
}

func (p *parser) parseString(tok token.Token) (ast.Node, error) {
	return &ast.Literal{
		LitPos: tok.Pos,
		Text:   tok.Text,
		Kind:   tok.Kind,
	}, nil
}

func (p *parser) parseNumber(tok token.Token) (ast.Node, error) {
	_, err := strconv.ParseInt(tok.Text, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrSyntax) {
			return nil, fmt.Errorf("%s: not an integer", p.pos(tok.Pos))
		}
		return nil, err
	}
	return &ast.Literal{
		LitPos: tok.Pos,
		Text:   tok.Text,
		Kind:   tok.Kind,
	}, nil
}

func (p *parser) parseTuple(tok token.Token) (ast.Node, error) {
	var (
		tpl = &ast.Tuple{
			Lparen: tok.Pos,
		}

		prev token.Token
		cur  = tok
	)

loop:
	for p.s.Next() {
		prev, cur = cur, p.s.tok
		switch p.s.tok.Kind {
		case token.Rparen:
			tpl.Rparen = p.s.tok.Pos
			break loop
		case token.Comma:
			switch prev.Kind {
			case token.Comma:
				return nil, fmt.Errorf("%s: invalid syntax", p.pos(p.s.tok.Pos))
			case token.Lparen:
				if len(tpl.X) == 0 {
					return nil, fmt.Errorf("%s: invalid syntax", p.pos(p.s.tok.Pos))
				}
			}
			continue
		default:
			node, err := p.parseNode(p.s.tok)
			if err != nil {
				if errors.Is(err, errUnbalanced) {
					return nil, fmt.Errorf("%s: tuple not terminated", p.pos(tpl.Lparen))
				}
				return nil, err
			}
			if node == nil {
				continue
			}
			tpl.X = append(tpl.X, node)
		}
	}

	if tpl.Rparen == 0 {
		return nil, fmt.Errorf("%s: tuple not terminated", p.pos(tpl.Lparen))
	}

	return tpl, nil
}

func (p *parser) parseList(tok token.Token) (ast.Node, error) {
	var (
		lst = &ast.List{
			Lbrack: tok.Pos,
		}

		prev token.Token
		cur  = tok
	)

loop:
	for p.s.Next() {
		prev, cur = cur, p.s.tok
		switch p.s.tok.Kind {
		case token.Rbrack:
			lst.Rbrack = p.s.tok.Pos
			break loop
		case token.Comma:
			switch prev.Kind {
			case token.Lbrack, token.Comma:
				return nil, fmt.Errorf("%s: invalid syntax", p.pos(p.s.tok.Pos))
			}
			continue
		default:
			node, err := p.parseNode(p.s.tok)
			if err != nil {
				if errors.Is(err, errUnbalanced) {
					return nil, fmt.Errorf("%s: list not terminated", p.pos(lst.Lbrack))
				}
				return nil, err
			}
			if node == nil {
				continue
			}
			lst.X = append(lst.X, node)
		}
	}

	if lst.Rbrack == 0 {
		return nil, fmt.Errorf("%s: list not terminated", p.pos(lst.Lbrack))
	}

	return lst, nil
}
