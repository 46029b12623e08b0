package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/planner"
)

// checkLifetimes verifies the invariants of a Lifetimes against its binding.
func checkLifetimes(t *testing.T, b *graph.Binding, l *graph.Lifetimes) {
	t.Helper()
	m := b.Model
	steps := len(m.Nodes)
	require.NoError(t, l.Problem.Validate())
	require.Len(t, l.Steps, steps)
	for i, n := range l.Steps {
		require.Equal(t, i, l.Step(n), "step %d runs %s", i, n)
		for _, v := range n.Inputs {
			if v != nil && v.Producer != nil {
				require.Less(t, l.Step(v.Producer), i, "%s runs after the producer of its input %s", n, v.Name)
			}
		}
	}
	require.Len(t, l.Owners, len(l.Problem.Buffers))
	ids := map[string]bool{}
	for i, buf := range l.Problem.Buffers {
		require.False(t, ids[buf.ID], "buffer id %q is unique", buf.ID)
		ids[buf.ID] = true
		o := l.Owners[i]
		require.NotNil(t, o.Node)
		require.Equal(t, l.Step(o.Node), buf.Start, "buffer %s starts at its defining step", buf.ID)
		if buf.Kind == planner.Workspace {
			require.Nil(t, o.Values)
			require.Equal(t, buf.Start+1, buf.End)
			continue
		}
		root := o.Values[0]
		require.Equal(t, b.Size(root), buf.Size, "buffer %s holds its root value", buf.ID)
		end := buf.Start + 1
		out := false
		for _, v := range o.Values {
			j, ok := l.Buffer(v)
			require.True(t, ok)
			require.Equal(t, i, j)
			require.Equal(t, b.Size(root), b.Size(v), "a view has its root's size")
			for _, c := range v.Consumers {
				end = max(end, l.Step(c)+1)
			}
			out = out || v.Output
		}
		if out {
			end = steps
			require.Equal(t, planner.Output, buf.Kind)
		}
		require.Equal(t, end, buf.End, "buffer %s ends after its last use", buf.ID)
	}
	for _, v := range m.Values {
		_, ok := l.Buffer(v)
		switch {
		case v.Kind != graph.KindActivation || v.Host:
			require.False(t, ok, "%s (%s, host %v) takes no arena bytes", v.Name, v.Kind, v.Host)
		case v.Producer.IsView():
			in := v.Producer.Input(0)
			ib, inOK := l.Buffer(in)
			vb, _ := l.Buffer(v)
			require.Equal(t, inOK, ok, "view %s is in the arena iff its input is", v.Name)
			if ok {
				require.Equal(t, ib, vb, "view %s shares its input's buffer", v.Name)
			}
		default:
			require.True(t, ok, "activation %s has a buffer", v.Name)
		}
	}
}

func TestLifetimesFixtures(t *testing.T) {
	ws := func(n *graph.Node) (int64, error) {
		if n.OpType == "MatMul" || n.OpType == "Softmax" {
			return 1000 + int64(n.Index), nil
		}
		return 0, nil
	}
	for _, m := range testmodels.Models() {
		t.Run(m.Name, func(t *testing.T) {
			g := loadFixture(t, m)
			for _, dims := range []map[string]int64{m.Dims(1, 1, 1), m.Dims(3, 17, 4)} {
				b, err := graph.Bind(g, dims)
				require.NoError(t, err)
				l, err := b.Lifetimes(nil)
				require.NoError(t, err)
				checkLifetimes(t, b, l)
				lw, err := b.Lifetimes(ws)
				require.NoError(t, err)
				checkLifetimes(t, b, lw)
				nws := 0
				for _, buf := range lw.Problem.Buffers {
					if buf.Kind == planner.Workspace {
						nws++
					}
				}
				want := 0
				for _, n := range g.Nodes {
					if n.OpType == "MatMul" || n.OpType == "Softmax" {
						want++
					}
				}
				require.Equal(t, want, nws, "one workspace per node that asks for one")
				require.Equal(t, len(l.Problem.Buffers)+nws, len(lw.Problem.Buffers))
			}
		})
	}
}

// TestLifetimesSmall pins the lifetimes of a hand-built graph:
//
//	x (input) -> Reshape r0 (view of an input: no bytes) -> Neg a -> Unsqueeze u (view of a)
//	  -> Abs c -> Identity y (graph output, view of c) ; u is read again by Add d at the end.
func TestLifetimesSmall(t *testing.T) {
	m := newModel().input("x", f32, "n", 4).
		initInt64("s", []int64{1}, -1).
		initInt64("ax", []int64{1}, 0).
		node("Reshape", []string{"x", "s"}, []string{"r0"}).
		node("Neg", []string{"r0"}, []string{"a"}).
		node("Unsqueeze", []string{"a", "ax"}, []string{"u"}).
		node("Abs", []string{"u"}, []string{"c"}).
		node("Identity", []string{"c"}, []string{"y"}).
		node("Add", []string{"u", "c"}, []string{"d"}).
		output("y", "d")
	g, err := graph.Parse(m.bytes(t), "")
	require.NoError(t, err)
	b, err := graph.Bind(g, map[string]int64{"n": 2})
	require.NoError(t, err)
	l, err := b.Lifetimes(func(n *graph.Node) (int64, error) {
		if n.OpType == "Abs" {
			return 64, nil
		}
		return 0, nil
	})
	require.NoError(t, err)
	checkLifetimes(t, b, l)
	got := map[string]string{}
	for i, buf := range l.Problem.Buffers {
		var names []string
		for _, v := range l.Owners[i].Values {
			names = append(names, v.Name)
		}
		got[buf.ID] = fmt.Sprintf("[%d,%d) %d %s %v", buf.Start, buf.End, buf.Size, buf.Kind, names)
	}
	require.Equal(t, map[string]string{
		"a":               "[1,6) 32 activation [a u]",
		"c":               "[3,6) 32 output [c y]",
		"d":               "[5,6) 32 output [d]",
		"workspace/Abs_c": "[3,4) 64 workspace []",
	}, got)
	_, ok := l.Buffer(g.Value("r0"))
	require.False(t, ok, "a view of a graph input takes no arena bytes")

	_, err = b.Lifetimes(func(*graph.Node) (int64, error) { return -1, nil })
	require.ErrorContains(t, err, "negative size")
}

// TestLifetimesExternal pins what external values (state held outside the arena) take: a graph
// input and a computed output held elsewhere take no arena bytes on either residency, nor do
// views of them; an external view, weight or inner value is refused.
func TestLifetimesExternal(t *testing.T) {
	m := newModel().input("x", f32, "n", 4).input("past", f32, "n", 4).
		node("Add", []string{"x", "past"}, []string{"present"}).
		node("Identity", []string{"present"}, []string{"y"}).
		node("Neg", []string{"present"}, []string{"z"}).
		output("present", "y", "z")
	g, err := graph.Parse(m.bytes(t), "")
	require.NoError(t, err)
	b, err := graph.Bind(g, map[string]int64{"n": 2})
	require.NoError(t, err)
	for _, r := range []graph.Residency{graph.HostResident, graph.DeviceResident} {
		l, err := b.LifetimesFor(r, nil, g.Value("past"), g.Value("present"))
		require.NoError(t, err)
		var ids []string
		for _, buf := range l.Problem.Buffers {
			ids = append(ids, buf.ID)
		}
		want := []string{"z"}
		if r == graph.DeviceResident {
			want = []string{"x", "z"}
		}
		require.Equal(t, want, ids, "residency %d", r)
		for _, name := range []string{"past", "present", "y"} {
			_, ok := l.Buffer(g.Value(name))
			require.False(t, ok, "%s takes no arena bytes", name)
		}
	}
	_, err = b.LifetimesFor(graph.HostResident, nil, g.Value("y"))
	require.ErrorContains(t, err, "computed by a kernel")
	_, err = b.LifetimesFor(graph.HostResident, nil, g.Value("z"), nil)
	require.Error(t, err)
}

// TestPlanFixture plans the 28-layer graph end to end with the planner.
func TestPlanFixture(t *testing.T) {
	g := loadFixture(t, testmodels.MustGet("qwen2_1p5b_graph"))
	b, err := graph.Bind(g, map[string]int64{"batch": 1, "seq": 512})
	require.NoError(t, err)
	l, err := b.Lifetimes(nil)
	require.NoError(t, err)
	checkLifetimes(t, b, l)
	plan, err := planner.Solve(context.Background(), l.Problem, planner.Options{})
	require.NoError(t, err)
	require.NoError(t, planner.Verify(l.Problem, plan))
	lb := planner.LowerBound(l.Problem)
	require.GreaterOrEqual(t, plan.Peak, lb)
	// The logits alone: 512 x 151936 bf16.
	require.GreaterOrEqual(t, plan.Peak, int64(512*151936*2))
}
