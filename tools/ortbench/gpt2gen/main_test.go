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
// earlier node's output, and the graph's output is produced.
func TestGraphIsTopological(t *testing.T) {
	g := &builder{rng: rand.New(rand.NewPCG(1, 2))}
	g.gpt2(2, 16, 2, 32, 16)
	var graph []byte
	for _, f := range fields(t, g.Model("gpt2", "carve gpt2gen", 18)) {
		if f.f == 7 {
			graph = f.v
		}
	}
	known := map[string]bool{}
	var nodes [][]byte
	for _, f := range fields(t, graph) {
		switch f.f {
		case 1:
			nodes = append(nodes, f.v)
		case 5, 11: // initializers (name is field 8) and inputs (name is field 1)
			for _, x := range fields(t, f.v) {
				if f.f == 5 && x.f == 8 || f.f == 11 && x.f == 1 {
					known[string(x.v)] = true
				}
			}
		}
	}
	if len(nodes) < 30 {
		t.Fatalf("%d nodes", len(nodes))
	}
	for i, n := range nodes {
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
	if !known["logits"] {
		t.Fatal("no node produces logits")
	}
}
