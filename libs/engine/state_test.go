package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// concatCache is the concat form of a cache at its smallest: present = Concat(past, x) along the
// sequence, and y sums present over the sequence, so y tells which values the cache held.
func concatCache(t *testing.T) *graph.Model {
	t.Helper()
	axes, err := graph.NewTensor("axes", graph.Int64, []int64{1}, kernels.BytesOf([]int64{1}))
	require.NoError(t, err)
	m, err := graph.Build(graph.Spec{
		Inputs: []graph.ValueSpec{
			{Name: "x", DType: graph.Float32, Shape: graph.Shape{graph.Sym("batch"), graph.Const(1), graph.Const(4)}},
			{Name: "past", DType: graph.Float32, Shape: graph.Shape{graph.Sym("batch"), graph.Sym("past_seq"), graph.Const(4)}},
		},
		Initializers: []*graph.Tensor{axes},
		Nodes: []graph.NodeSpec{
			{Name: "cat", OpType: "Concat", Inputs: []string{"past", "x"}, Outputs: []string{"present"}, Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: 1})},
			{Name: "sum", OpType: "ReduceSum", Inputs: []string{"present", "axes"}, Outputs: []string{"y"}, Attrs: graph.NewAttributes(graph.Attribute{Name: "keepdims", Kind: graph.AttrInt, Int: 0})},
		},
		Outputs: []string{"y", "present"},
		Opsets:  map[string]int64{"": 18},
	})
	require.NoError(t, err)
	return m
}

// TestStateBuffersCarryACache runs a cache through runs the way a decoder does in the concat
// form: the past is held in buffer "a", the present in buffer "b", and after each run the new
// row moves from b to a. No arena byte holds either, nothing is copied to or from the host for
// them, and a second run of the same shapes compiles nothing.
func TestStateBuffersCarryACache(t *testing.T) {
	for _, backend := range []string{"cpu", "sim"} {
		t.Run(backend, func(t *testing.T) {
			var be kernels.Backend
			var al *alloc.Allocator
			if backend == "cpu" {
				be, al = newCPU(t, 1<<26)
			} else {
				be, al = newSim(t, 1<<26)
			}
			m := concatCache(t)
			const batch, capacity = 2, 8
			row := int64(4 * 4)
			state := []StateBuffer{
				{Name: "a", Bytes: batch * capacity * row, Values: []string{"past"}},
				{Name: "b", Bytes: batch * (capacity + 1) * row, Values: []string{"present"}},
			}
			env := Envelope{"batch": {Lo: 1, Hi: batch}, "past_seq": {Lo: 1, Hi: capacity}}
			rt, s := newSession(t, m, be, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: env, State: state})
			require.Equal(t, []string{"past", "present"}, rt.opts.External)
			for _, buf := range rt.Reserve.Worst.Lifetimes.Problem.Buffers {
				require.NotEqual(t, "present", buf.ID, "a held value takes no arena bytes")
			}
			const past = 4 // the bucket: the past is always 4 rows, the first `used` of them real
			ctx := context.Background()
			want := make([]float32, batch*4)
			for step := 0; step < past; step++ {
				x := kernels.MustTensor(graph.Float32, batch, 1, 4)
				xs := x.Float32s()
				for i := range xs {
					xs[i] = float32(step + 1)
				}
				in := map[string]kernels.Tensor{"x": x, "past": {DType: graph.Float32, Shape: []int64{batch, past, 4}}}
				out, err := s.Run(ctx, in)
				require.NoError(t, err)
				// y = sum of the rows held so far (zeros where none was written yet) + x.
				for i := range want {
					want[i] += float32(step + 1)
				}
				require.Equal(t, want, out[0].Float32s(), "step %d", step)
				b, err := s.State("b")
				require.NoError(t, err)
				require.Equal(t, b, out[1].Addr, "the present is in its buffer")
				if backend == "sim" {
					require.Empty(t, out[1].Data, "nothing copies the present out")
				}
				if step+1 < past {
					require.NoError(t, s.CopyRows(
						Rows{Buffer: "a", Offset: int64(step) * row, Pitch: past * row, Width: row, Count: batch},
						Rows{Buffer: "b", Offset: past * row, Pitch: (past + 1) * row, Width: row, Count: batch}))
				}
			}
			st := rt.Stats()
			require.EqualValues(t, 1, st.Programs.Misses, "one pattern, compiled once")

			err := s.CopyRows(Rows{Buffer: "a", Width: row, Pitch: row, Count: batch * capacity * 2}, Rows{Buffer: "b", Width: row, Pitch: row, Count: batch * capacity * 2})
			var se *StateError
			require.True(t, errors.As(err, &se), "%v", err)
			require.Contains(t, err.Error(), "outside")

			_, err = s.Run(ctx, map[string]kernels.Tensor{"x": kernels.MustTensor(graph.Float32, batch, 1, 4), "past": kernels.MustTensor(graph.Float32, batch, past, 4)})
			require.ErrorContains(t, err, "give its shape only")

			_, err = s.Run(ctx, map[string]kernels.Tensor{"x": kernels.MustTensor(graph.Float32, batch, 1, 4), "past": {DType: graph.Float32, Shape: []int64{batch, capacity, 4}}})
			require.NoError(t, err, "the largest past fits its buffer")
		})
	}
}

// TestStateDeclarationErrors: a buffer holds inputs and outputs the model has, at most one of each.
func TestStateDeclarationErrors(t *testing.T) {
	m := concatCache(t)
	be, al := newCPU(t, 1<<26)
	env := Envelope{"batch": {Lo: 1, Hi: 1}, "past_seq": {Lo: 1, Hi: 2}}
	for _, tc := range []struct {
		state []StateBuffer
		want  string
	}{
		{[]StateBuffer{{Name: "a", Bytes: 64, Values: []string{"nope"}}}, `no value "nope"`},
		{[]StateBuffer{{Name: "a", Bytes: 64, Values: []string{"past", "x"}}}, "more than one input"},
		{[]StateBuffer{{Name: "a", Bytes: 64, Values: []string{"past"}}, {Name: "a", Bytes: 64}}, "declared twice"},
		{[]StateBuffer{{Name: "a", Bytes: 0, Values: []string{"past"}}}, "at least 1"},
		{[]StateBuffer{{Name: "a", Bytes: 64, Values: []string{"axes"}}}, "neither a graph input"},
		{[]StateBuffer{{Name: "a", Bytes: 64, Values: []string{"past"}}, {Name: "b", Bytes: 64, Values: []string{"past"}}}, `also held by "a"`},
	} {
		_, err := NewRuntime(context.Background(), m, be, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: env, State: tc.state})
		var se *StateError
		require.True(t, errors.As(err, &se), "%v", err)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestSwitchingPatternsAllocatesNothing: once a session has run two patterns, going back and
// forth between them (a generator's prefill and decode buckets) finds each program by its input
// shapes, binding nothing and allocating nothing.
func TestSwitchingPatternsAllocatesNothing(t *testing.T) {
	m := concatCache(t)
	be, al := newCPU(t, 1<<26)
	const batch, capacity = 2, 8
	row := int64(4 * 4)
	state := []StateBuffer{
		{Name: "a", Bytes: batch * capacity * row, Values: []string{"past"}},
		{Name: "b", Bytes: batch * (capacity + 1) * row, Values: []string{"present"}},
	}
	env := Envelope{"batch": {Lo: batch, Hi: batch}, "past_seq": {Lo: 1, Hi: capacity}}
	rt, s := newSession(t, m, be, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: env, State: state})
	x := kernels.MustTensor(graph.Float32, batch, 1, 4)
	short := map[string]kernels.Tensor{"x": x, "past": {DType: graph.Float32, Shape: []int64{batch, 2, 4}}}
	long := map[string]kernels.Tensor{"x": x, "past": {DType: graph.Float32, Shape: []int64{batch, capacity, 4}}}
	ctx := context.Background()
	for _, in := range []map[string]kernels.Tensor{short, long} {
		_, err := s.Run(ctx, in)
		require.NoError(t, err)
	}
	before := rt.Stats()
	allocs := testing.AllocsPerRun(10, func() {
		for _, in := range []map[string]kernels.Tensor{short, long} {
			if _, err := s.Run(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
	})
	require.Zero(t, allocs, "Go allocations per switch")
	after := rt.Stats()
	require.Equal(t, before.Programs.Misses, after.Programs.Misses, "no program compiled")
	require.Equal(t, before.Patterns.Misses, after.Patterns.Misses, "no pattern planned")
	require.Equal(t, before.Programs.Hits+22, after.Programs.Hits, "each switch is a hit of the session's programs")
}

// TestStateReservation: the state's reservation computed without a runtime is what a runtime
// reserves, and a bad declaration fails the same way.
func TestStateReservation(t *testing.T) {
	m := concatCache(t)
	be, al := newCPU(t, 1<<26)
	state := []StateBuffer{
		{Name: "a", Bytes: 1000, Values: []string{"past"}},
		{Name: "b", Bytes: 3000, Values: []string{"present"}},
	}
	env := Envelope{"batch": {Lo: 1, Hi: 1}, "past_seq": {Lo: 1, Hi: 8}}
	rt, _ := newSession(t, m, be, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: env, State: state})
	got, err := StateReservation(m, state)
	require.NoError(t, err)
	require.Equal(t, rt.StateBytes(), got)
	require.GreaterOrEqual(t, got, int64(1024+3000), "each buffer aligned")
	none, err := StateReservation(m, nil)
	require.NoError(t, err)
	require.Zero(t, none)
	_, err = StateReservation(m, []StateBuffer{{Name: "a", Bytes: 64, Values: []string{"nope"}}})
	var se *StateError
	require.ErrorAs(t, err, &se)
}

// TestDeviceOutputs: on a discrete device an output named in RuntimeOptions.DeviceOutputs stays
// where the kernel wrote it: Run copies nothing out and returns its address, CopyOut reads any
// part of it, and CopyOut refuses addresses outside the session's memory.
func TestDeviceOutputs(t *testing.T) {
	be, al := newSim(t, 1<<26)
	m := concatCache(t)
	env := Envelope{"batch": {Lo: 2, Hi: 2}, "past_seq": {Lo: 1, Hi: 4}}
	_, s := newSession(t, m, be, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: env, DeviceOutputs: []string{"y"}})
	x := kernels.MustTensor(graph.Float32, 2, 1, 4)
	for i, xs := 0, x.Float32s(); i < len(xs); i++ {
		xs[i] = float32(i)
	}
	past := kernels.MustTensor(graph.Float32, 2, 2, 4)
	before := be.Counters()
	out, err := s.Run(context.Background(), map[string]kernels.Tensor{"x": x, "past": past})
	require.NoError(t, err)
	require.Nil(t, out[0].Data, "y stays on the device")
	require.NotZero(t, out[0].Addr)
	require.NotEmpty(t, out[1].Data, "present is copied out as usual")
	require.Equal(t, before.Downloads+1, be.Counters().Downloads)
	row := make([]byte, 16)
	require.NoError(t, s.CopyOut(row, out[0].Addr.Add(16)))
	require.Equal(t, []float32{4, 5, 6, 7}, kernels.ViewAs[float32](row), "y's second row: x's, the past being zeros")
	require.ErrorContains(t, s.CopyOut(row, out[0].Addr.Add(1<<40)), "not inside the session's arena")
}
