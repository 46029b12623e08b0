package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
)

// TestBindRefusesZeroDims binds every fixture with each of its dims at 0 (the others at 2) and
// at -1: Bind refuses before evaluating a shape, with a *DimValueError naming the dim. Nothing is
// planned or reserved from a failed Bind, so no kernel ever sees a zero-size input.
func TestBindRefusesZeroDims(t *testing.T) {
	checked := 0
	for _, fx := range testmodels.Models() {
		t.Run(fx.Name, func(t *testing.T) {
			b, err := fx.Bytes()
			require.NoError(t, err)
			m, err := graph.Parse(b, "")
			require.NoError(t, err)
			for _, dim := range m.DimNames {
				for _, v := range []int64{0, -1} {
					dims := map[string]int64{}
					for _, n := range m.DimNames {
						dims[n] = 2
					}
					dims[dim] = v
					_, err := graph.Bind(m, dims)
					var dve *graph.DimValueError
					require.ErrorAs(t, err, &dve, "%s=%d", dim, v)
					require.Equal(t, graph.DimValueError{Dim: dim, Value: v}, *dve)
					var be *graph.BindError
					require.ErrorAs(t, err, &be)
					require.Nil(t, be.Node, "refused before any node is bound")
					checked++
				}
			}
		})
	}
	require.Positive(t, checked)
	require.Contains(t, (&graph.DimValueError{Dim: "batch"}).Error(), `dim "batch" is 0: zero-size inputs are not supported`)
}
