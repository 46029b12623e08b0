// Copyright 2025 The npyio Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:generate stringer -type Kind

// Package token defines constants representing the lexical tokens of dtype descr strings.
package token

import "go/token"

type FileSet = token.FileSet
type File = token.File

func NewFileSet() *FileSet {
	return token.NewFileSet()
}

type Pos = token.Pos
type Position = token.Position

// Kind is a kind of dtype.descr token.
type Kind int

const (
	Invalid Kind = iota
	Space
	Comma
	String
	Lbrack
	Rbrack
	Lparen
	Rparen
	Number
	EOF
)

// Token holds informations about a token.
type Token struct {
	Kind Kind // Kind is the kind of token.
	Pos  Pos  // Pos is the position of a token.
	Text string
}
