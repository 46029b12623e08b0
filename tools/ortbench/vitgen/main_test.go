package main

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// fields splits one protobuf message into (field, wire type, payload) triples; varint and
// fixed32 payloads are returned as their bytes.
func fields(t *testing.T, b []byte) (out []struct {
	f, w int
	v    []byte
}) {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatal("bad tag")
		}
		b = b[n:]
		f, w := int(key>>3), int(key&7)
		var v []byte
		switch w {
		case 0:
			_, n = binary.Uvarint(b)
			v, b = b[:n], b[n:]
		case 2:
			l, n := binary.Uvarint(b)
			v, b = b[n:n+int(l)], b[n+int(l):]
		case 5:
			v, b = b[:4], b[4:]
		default:
			t.Fatalf("wire type %d", w)
		}
		out = append(out, struct {
			f, w int
			v    []byte
		}{f, w, v})
	}
	return out
}

// The written graph is well formed: every node input is a graph input, an initializer or an
// earlier node's output, no initializer name repeats, and the graph's output is produced; a
// layer adds the same nodes whatever the shape.
func TestGraphIsTopological(t *testing.T) {
	nodes := func(layers int) int {
		g := &builder{rng: rand.New(rand.NewPCG(1, 2))}
		g.vit(vitShape{size: 32, patch: 8, layers: layers, hidden: 32, heads: 4, mlp: 64, classes: 10})
		var graph []byte
		for _, f := range fields(t, g.Model("vit", "carve vitgen", 20)) {
			if f.f == 7 {
				graph = f.v
			}
		}
		known := map[string]bool{}
		var ns [][]byte
		for _, f := range fields(t, graph) {
			switch f.f {
			case 1:
				ns = append(ns, f.v)
			case 5, 11: // initializers (name is field 8) and inputs (name is field 1)
				for _, x := range fields(t, f.v) {
					if f.f == 5 && x.f == 8 || f.f == 11 && x.f == 1 {
						if known[string(x.v)] {
							t.Fatalf("%q declared twice", x.v)
						}
						known[string(x.v)] = true
					}
				}
			}
		}
		for i, n := range ns {
			for _, x := range fields(t, n) {
				if x.f == 1 && !known[string(x.v)] {
					t.Fatalf("node %d reads %q before it is produced", i, x.v)
				}
			}
			for _, x := range fields(t, n) {
				if x.f == 2 {
					known[string(x.v)] = true
				}
			}
		}
		if !known["output"] {
			t.Fatal("no node produces output")
		}
		return len(ns)
	}
	one, two := nodes(1), nodes(2)
	if per := two - one; per != 47 || one-per != 11 {
		t.Fatalf("%d nodes a layer and %d besides, want 47 and 11", per, one-per)
	}
}
