// Copyright 2025 The npyio Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package dtp

import (
	"fmt"
	"io"
	txt "text/scanner"

	"codeberg.org/sbinet/npyio/internal/dtp/token"
)

type scanner struct {
	sc *txt.Scanner

	r   rune
	tok token.Token

	errs []error
}

func newScanner(r io.Reader) *scanner {
	sc := &scanner{
		sc: new(txt.Scanner).Init(r),
	}

	// text/scanner only accepts double-quote strings and 1-len character "strings".
	// Python's dtype.descr writes strings as single-quote strings.
	// define our own error function that tries to handle this impedance mismatch.
	sc.sc.Error = func(s *txt.Scanner, msg string) {
		if msg == "invalid char literal" && isCharLit(s.TokenText()) {
			s.ErrorCount--
			return
		}
		pos := s.Position
		if !pos.IsValid() {
			pos = s.Pos()
		}
		sc.errs = append(sc.errs, fmt.Errorf("%s: %s", pos, msg))
	}
	sc.sc.Whitespace = 1<<' ' | 1<<'\t' | 1<<'\n' | 1<<'\r'
	sc.sc.Filename = "<stdin>"

	return sc
}

func isCharLit(v string) bool {
	return v == "'" || (len(v) > 2 && v[0] == '\'')
}

// Token returns the most recently parsed token
func (s *scanner) Token() token.Token {
	return s.tok
}

// Next iterates over all tokens.
// Next retrieves the most recent token with Token().
// It returns false once it reaches token.EOF.
func (s *scanner) Next() bool {
	s.tok = s.scan()
	return s.tok.Kind != token.EOF
}

func (s *scanner) scan() token.Token {
	s.next()
	pos := s.pos()
	switch s.r {
	case ',':
		return token.Token{
			Kind: token.Comma,
			Pos:  pos,
			Text: s.sc.TokenText(),
		}
	case '[':
		return token.Token{
			Kind: token.Lbrack,
			Pos:  pos,
			Text: s.sc.TokenText(),
		}
	case ']':
		return token.Token{
			Kind: token.Rbrack,
			Pos:  pos,
			Text: s.sc.TokenText(),
		}
	case '(':
		return token.Token{
			Kind: token.Lparen,
			Pos:  pos,
			Text: s.sc.TokenText(),
		}
	case ')':
		return token.Token{
			Kind: token.Rparen,
			Pos:  pos,
			Text: s.sc.TokenText(),
		}
	case txt.Int, txt.Float:
		return token.Token{
			Kind: token.Number,
			Pos:  pos,
			Text: s.sc.TokenText(),
		}
	case txt.String, txt.Char:
		return token.Token{
			Kind: token.String,
			Pos:  pos,
			Text: s.sc.TokenText(),
		}
	case txt.EOF:
		return token.Token{
			Kind: token.EOF,
			Pos:  pos,
		}
	default:
		panic(fmt.Errorf("unhandled token: %v %v", txt.TokenString(s.r), s.r))
	}
}

func (s *scanner) next() {
	s.r = s.sc.Scan()
}

func (s *scanner) pos() token.Pos {
	return token.Pos(s.sc.Position.Offset)
}
