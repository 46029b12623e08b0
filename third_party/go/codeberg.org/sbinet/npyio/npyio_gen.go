// Copyright 2020 The npyio Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build tools

package npyio

import (
	_ "github.com/campoy/embedmd" // needed for generating gallery
)
