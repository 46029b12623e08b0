package cpu

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/collective"
)

func collectiveAttrs(group string, rank, ranks int, axis int64) graph.Attributes {
	return graph.NewAttributes(
		graph.Attribute{Name: "group", Kind: graph.AttrString, String: group},
		graph.Attribute{Name: "rank", Kind: graph.AttrInt, Int: int64(rank)},
		graph.Attribute{Name: "ranks", Kind: graph.AttrInt, Int: int64(ranks)},
		graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: axis})
}

// runRanks runs one collective node per rank, concurrently, and returns each rank's output.
func runRanks(t *testing.T, op string, ranks int, axis int64, in []kernels.Tensor, outShape []int64) []kernels.Tensor {
	t.Helper()
	g, err := collective.New(t.Name()+op, ranks)
	require.NoError(t, err)
	defer g.Close()
	outs := make([]kernels.Tensor, ranks)
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for r := range ranks {
		n := node(op, collectiveAttrs(g.Name(), r, ranks, axis), in[r:r+1], kernels.Value{DType: in[r].DType, Shape: outShape})
		n.Domain = kernels.DomainCarve
		inst, err := registry.Select(n, dev)
		require.NoError(t, err)
		require.Equal(t, "direct", inst.Tactic())
		outs[r] = kernels.MustTensor(in[r].DType, outShape...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = inst.Run(in[r:r+1], outs[r:r+1], nil, 0)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return outs
}

// TestAllReduce: every rank gets the sum of the ranks' tensors in rank order, the same bytes on
// every rank, in float32 and bfloat16.
func TestAllReduce(t *testing.T) {
	r := rng(t, 1)
	const ranks = 3
	var in []kernels.Tensor
	for range ranks {
		in = append(in, randF32(r, 2, 5))
	}
	outs := runRanks(t, "AllReduce", ranks, 0, in, []int64{2, 5})
	for i := range 10 {
		want := in[0].Float32s()[i] + in[1].Float32s()[i] + in[2].Float32s()[i]
		require.Equal(t, want, outs[0].Float32s()[i], "rank order, float32 accumulation")
	}
	for _, o := range outs[1:] {
		require.Equal(t, outs[0].Data, o.Data)
	}
	var bf []kernels.Tensor
	for k := range ranks {
		b := kernels.MustTensor(graph.BFloat16, 4)
		for i, v := range []float32{1, 2, 3, 0.5} {
			b.Uint16s()[i] = tobf16(v * float32(k+1))
		}
		bf = append(bf, b)
	}
	outs = runRanks(t, "AllReduce", ranks, 0, bf, []int64{4})
	for i, v := range []float32{6, 12, 18, 3} {
		require.Equal(t, v, bf16(outs[1].Uint16s()[i]))
	}
}

// TestAllGather: the ranks' tensors concatenated along the axis, in rank order.
func TestAllGather(t *testing.T) {
	const ranks = 2
	in := []kernels.Tensor{f32([]int64{2, 2}, []float32{1, 2, 3, 4}), f32([]int64{2, 2}, []float32{5, 6, 7, 8})}
	outs := runRanks(t, "AllGather", ranks, -1, in, []int64{2, 4})
	for _, o := range outs {
		require.Equal(t, []float32{1, 2, 5, 6, 3, 4, 7, 8}, o.Float32s())
	}
	outs = runRanks(t, "AllGather", ranks, 0, in, []int64{4, 2})
	require.Equal(t, []float32{1, 2, 3, 4, 5, 6, 7, 8}, outs[1].Float32s())
}

// TestCollectiveRefuses: an unknown group and a node without one are errors, not hangs.
func TestCollectiveRefuses(t *testing.T) {
	x := f32([]int64{2}, []float32{1, 2})
	n := node("AllReduce", collectiveAttrs("no such group", 0, 2, 0), []kernels.Tensor{x}, value(x))
	n.Domain = kernels.DomainCarve
	inst, err := registry.Select(n, dev)
	require.NoError(t, err)
	y := kernels.MustTensor(graph.Float32, 2)
	var ne *collective.NameError
	require.ErrorAs(t, inst.Run([]kernels.Tensor{x}, []kernels.Tensor{y}, nil, 0), &ne)
	n.Attrs = collectiveAttrs("", 0, 2, 0)
	_, err = registry.Select(n, dev)
	require.ErrorContains(t, err, "want a group")
}
