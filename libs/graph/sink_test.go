package graph_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/planner"
)

// sinkModel computes an early product s = x*y [n, n] that only the last node reads, then
// t = -x*y, |t| and its row sums z [n, 1]:
//
//	s = Mul(x, y); a = Neg(x); t = Mul(a, y); u = Abs(t); z = ReduceSum(u, [1]); d = MatMul(s, z)
//
// In the model's order s, t and u are live at once; s sunk to just before d, two of them.
func sinkModel(t *testing.T) (*graph.Model, *graph.Binding) {
	m := newModel().input("x", f32, "n", 1).input("y", f32, 1, "n").
		initInt64("ax", []int64{1}, 1).
		node("Mul", []string{"x", "y"}, []string{"s"}).
		node("Neg", []string{"x"}, []string{"a"}).
		node("Mul", []string{"a", "y"}, []string{"t"}).
		node("Abs", []string{"t"}, []string{"u"}).
		node("ReduceSum", []string{"u", "ax"}, []string{"z"}).
		node("MatMul", []string{"s", "z"}, []string{"d"}).
		output("d")
	g, err := graph.Parse(m.bytes(t), "")
	require.NoError(t, err)
	b, err := graph.Bind(g, map[string]int64{"n": 64})
	require.NoError(t, err)
	return g, b
}

func opsIn(steps []*graph.Node) []string {
	var ops []string
	for _, n := range steps {
		ops = append(ops, n.Outputs[0].Name)
	}
	return ops
}

// TestLifetimesSunk: the early product runs just before its reader, and the peak drops from
// three [n, n] tensors to two.
func TestLifetimesSunk(t *testing.T) {
	g, b := sinkModel(t)
	l, err := b.Lifetimes(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"s", "a", "t", "u", "z", "d"}, opsIn(l.Steps))
	sz := b.Size(g.Value("s"))
	require.Equal(t, 3*sz, planner.LowerBound(l.Problem))

	for _, r := range []graph.Residency{graph.HostResident, graph.DeviceResident} {
		s, err := b.LifetimesSunk(r, nil, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "t", "u", "z", "s", "d"}, opsIn(s.Steps))
		if r == graph.HostResident {
			checkLifetimes(t, b, s)
			require.Equal(t, 2*sz, planner.LowerBound(s.Problem))
		}
	}
}

// TestLifetimesSunkExternal: a node reading an external value keeps its place (its bytes may be
// an external output's, written in place later), and with nothing else to move the model's
// order stays.
func TestLifetimesSunkExternal(t *testing.T) {
	g, b := sinkModel(t)
	l, err := b.LifetimesSunk(graph.HostResident, nil, nil, g.Value("x"))
	require.NoError(t, err)
	require.Equal(t, []string{"s", "a", "t", "u", "z", "d"}, opsIn(l.Steps))
	require.True(t, slices.Equal(g.Nodes, l.Steps))
}

// TestLifetimesIn refuses orders that are not execution orders of the model.
func TestLifetimesIn(t *testing.T) {
	g, b := sinkModel(t)
	rev := slices.Clone(g.Nodes)
	slices.Reverse(rev)
	for name, order := range map[string][]*graph.Node{
		"reversed": rev,
		"short":    g.Nodes[1:],
		"repeated": append(slices.Clone(g.Nodes[:5]), g.Nodes[0]),
	} {
		_, err := b.LifetimesIn(order, graph.HostResident, nil)
		require.Error(t, err, name)
	}
	swapped := slices.Clone(g.Nodes)
	swapped[0], swapped[1] = swapped[1], swapped[0] // Neg before the first Mul: both read inputs only
	l, err := b.LifetimesIn(swapped, graph.HostResident, nil)
	require.NoError(t, err)
	checkLifetimes(t, b, l)
}

// TestLifetimesSunkFixtures: on every fixture the sunk lifetimes are valid and never peak
// higher than the model's order, nor in place than without.
func TestLifetimesSunkFixtures(t *testing.T) {
	ws := func(n *graph.Node) (int64, error) {
		if n.OpType == "MatMul" {
			return 4096, nil
		}
		return 0, nil
	}
	for _, m := range testmodels.Models() {
		t.Run(m.Name, func(t *testing.T) {
			g := loadFixture(t, m)
			for _, dims := range []map[string]int64{m.Dims(1, 1, 1), m.Dims(3, 17, 4), m.Dims(2, 48, 4)} {
				b, err := graph.Bind(g, dims)
				require.NoError(t, err)
				l, err := b.Lifetimes(ws)
				require.NoError(t, err)
				s, err := b.LifetimesSunk(graph.HostResident, ws, nil)
				require.NoError(t, err)
				checkLifetimes(t, b, s)
				require.LessOrEqual(t, planner.LowerBound(s.Problem), planner.LowerBound(l.Problem))
				// In place (every pair offered; the graph's rules decide), with the peak moves:
				// valid, and never above the sunk order without.
				ip, err := b.LifetimesSunk(graph.HostResident, ws, everyPair)
				require.NoError(t, err)
				checkLifetimes(t, b, ip)
				require.LessOrEqual(t, planner.LowerBound(ip.Problem), planner.LowerBound(s.Problem))
				plan, err := planner.Solve(context.Background(), ip.Problem, planner.Options{Algorithm: planner.Best})
				require.NoError(t, err)
				require.NoError(t, planner.Verify(ip.Problem, plan))
			}
		})
	}
}
