package graph_test

import (
	"testing"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
)

// FuzzLoad feeds arbitrary bytes to the loader; whatever loads must also bind and yield
// lifetimes without panicking. The seeds are small (a few kB at most): the fuzzer mutates and
// minimises every seed, and a fixture of tens of kB spends a short CI run minimising.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"contrib_norm"} {
		b, err := testmodels.MustGet(name).Bytes()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(mlp().bytes(f))
	f.Add(mlp().initExternal("e", f32, []int64{2}, "location", "data.bin").bytes(f))
	f.Add(newModel().input("x", f32, "b", 3).initInt64("ax", []int64{1}, 1).
		node("Unsqueeze", []string{"x", "ax"}, []string{"u"}).
		node("Softmax", []string{"u"}, []string{"y"}, attrInt("axis", -1)).output("y").bytes(f))
	f.Add([]byte{})
	f.Add([]byte{0x3a, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := graph.Parse(data, "")
		if err != nil {
			return
		}
		dims := map[string]int64{}
		for i, n := range m.DimNames {
			dims[n] = int64(i%3 + 1)
		}
		b, err := graph.Bind(m, dims)
		if err != nil {
			return
		}
		if _, err := b.Lifetimes(func(n *graph.Node) (int64, error) { return int64(n.Index), nil }); err != nil {
			t.Fatalf("lifetimes of a bound model: %v", err)
		}
		for _, v := range m.Initializers {
			_, _ = v.Init.Bytes()
		}
	})
}
