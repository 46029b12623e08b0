package graph_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
)

func loadFixture(t testing.TB, m testmodels.Model) *graph.Model {
	t.Helper()
	g, err := graph.Load(m.WriteTemp(t))
	require.NoError(t, err, "loading %s", m.Name)
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	return g
}

// TestFixtureShapes binds every fixture at the bindings onnxruntime ran and compares every
// value's shape and dtype with what onnxruntime produced.
func TestFixtureShapes(t *testing.T) {
	for _, m := range testmodels.Models() {
		t.Run(m.Name, func(t *testing.T) {
			g := loadFixture(t, m)
			for i, b := range m.Bindings {
				t.Run(fmt.Sprint(b.Dims), func(t *testing.T) {
					want, err := testmodels.MustGet(m.Name).ValueShapes(i)
					require.NoError(t, err)
					bd, err := graph.Bind(g, b.Dims)
					require.NoError(t, err)
					checked := 0
					for _, n := range g.Nodes {
						for _, o := range n.Outputs {
							if o == nil {
								continue
							}
							w, ok := want[o.Name]
							if !ok {
								continue // optional outputs onnxruntime did not return
							}
							require.Equal(t, w.Shape, bd.Shape(o), "%s: value %q (symbolic %v)", n, o.Name, o.Shape)
							require.Equal(t, graph.DType(w.DType), o.DType, "%s: dtype of %q", n, o.Name)
							checked++
						}
					}
					require.Equal(t, len(want), checked, "every value onnxruntime reported is in the graph")
				})
			}
		})
	}
}
