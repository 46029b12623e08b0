// Copyright 2025 The npyio Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package ast declares the types used to represent syntax trees for dtype descr.
package ast

import "codeberg.org/sbinet/npyio/internal/dtp/token"

// Node is a node in dtype.descr string.
type Node interface {
	Pos() token.Pos // position of first character belonging to the node.
	End() token.Pos // position of first character immediately after the node.

	isNode()
}

// List is a collection of nodes.
type List struct {
	Lbrack token.Pos // position of '['
	X      []Node
	Rbrack token.Pos // position of ']'
}

func (x *List) isNode()        {}
func (x *List) Pos() token.Pos { return x.Lbrack }
func (x *List) End() token.Pos { return x.Lbrack }

// Tuple is a fixed collection of nodes.
type Tuple struct {
	Lparen token.Pos // position of '('
	X      []Node
	Rparen token.Pos // position of ')'
}

func (x *Tuple) isNode()        {}
func (x *Tuple) Pos() token.Pos { return x.Lparen }
func (x *Tuple) End() token.Pos { return x.Rparen }

// Literal is a a literal of a basic type (integer or string).
type Literal struct {
	LitPos token.Pos
	Text   string
	Kind   token.Kind
}

func (x *Literal) isNode()        {}
func (x *Literal) Pos() token.Pos { return x.LitPos }
func (x *Literal) End() token.Pos { return token.Pos(int(x.LitPos) + len(x.Text)) }

var (
	_ Node = (*List)(nil)
	_ Node = (*Tuple)(nil)
	_ Node = (*Literal)(nil)
)
