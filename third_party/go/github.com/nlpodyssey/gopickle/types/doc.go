// Copyright 2020 NLP Odyssey Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

/*
Package types provides a minimal implementation for commonly used Python
classes, objects and functions.

Most of the types implemented here are related to Python builtins or the
Python standard library.

Only a minimal subset of traits is reproduced here for the sole purpose of
making them work with the unpickling machine and, more in general, in the
context of the packages provided by the GoPickle library.
*/
package types
