package generate

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
)

// TestBatchReservation: what BatchReservation plans without a device is what a runtime made
// with BatchRuntimeOptions counts and what its allocator reserves for the weights and the one
// session, to the byte, on the CPU and on the simulated discrete device (weights copied).
func TestBatchReservation(t *testing.T) {
	for _, device := range []string{"cpu", "sim"} {
		t.Run(device, func(t *testing.T) {
			loaded, err := graph.Load(fixture(t, "qwen2_gqa").WriteTemp(t))
			require.NoError(t, err)
			defer loaded.Close()
			m, c, err := Prepare(loaded, Names{})
			require.NoError(t, err)
			be, err := batchBackends[device]()
			require.NoError(t, err)
			defer be.Close()
			al, err := alloc.New(be.Device(), alloc.Options{})
			require.NoError(t, err)
			defer al.Close()
			bc := BatchConfig{Rows: 3, Context: 100, Chunk: 16}
			opts := engine.Options{Target: be.Target(), Registry: be.Registry()}

			r, err := c.BatchReservation(context.Background(), m, bc, opts)
			require.NoError(t, err)
			want, ok := r.Bytes(1)
			require.True(t, ok)
			require.Equal(t, device == "sim", r.DeviceWeightBytes > 0)

			ro, err := c.BatchRuntimeOptions(m, bc, engine.RuntimeOptions{Options: opts})
			require.NoError(t, err)
			rt, err := engine.NewRuntime(context.Background(), m, be, al, ro)
			require.NoError(t, err)
			defer rt.Close()
			s, err := rt.NewSession()
			require.NoError(t, err)
			defer s.Close()
			require.Equal(t, rt.Reserve.DeviceWeightBytes, r.DeviceWeightBytes)
			require.Equal(t, alloc.ReservedSize(max(rt.Reserve.ArenaBytes, 1)), r.ArenaBytes)
			require.Equal(t, rt.StateBytes(), r.StateBytes)
			require.Equal(t, want, al.Stats().ReservedBytes, "what the allocator reserved")
		})
	}
}

// TestMostRows: the rows found are the last whose reservation fits: at the boundary, one byte
// less, too little for one row, and a maximum below what fits.
func TestMostRows(t *testing.T) {
	loaded, err := graph.Load(fixture(t, "qwen2_gqa").WriteTemp(t))
	require.NoError(t, err)
	defer loaded.Close()
	m, c, err := Prepare(loaded, Names{})
	require.NoError(t, err)
	ctx := context.Background()
	opts := engine.Options{Workers: 2}
	bc := BatchConfig{Context: 256}
	bytes := func(rows int64) int64 {
		b := bc
		b.Rows = rows
		r, err := c.BatchReservation(ctx, m, b, opts)
		require.NoError(t, err)
		n, ok := r.Bytes(1)
		require.True(t, ok)
		return n
	}
	at5 := bytes(5)
	require.Greater(t, bytes(6), at5)

	fit, err := c.MostRows(ctx, m, bc, opts, at5, 64)
	require.NoError(t, err)
	require.EqualValues(t, 5, fit.Rows)
	n, _ := fit.At.Bytes(1)
	require.Equal(t, at5, n)
	n, _ = fit.Next.Bytes(1)
	require.Equal(t, bytes(6), n)

	fit, err = c.MostRows(ctx, m, bc, opts, at5-1, 64)
	require.NoError(t, err)
	require.EqualValues(t, 4, fit.Rows)

	fit, err = c.MostRows(ctx, m, bc, opts, bytes(1)-1, 64)
	require.NoError(t, err)
	require.Zero(t, fit.Rows)
	require.Nil(t, fit.At)
	n, _ = fit.Next.Bytes(1)
	require.Equal(t, bytes(1), n)

	fit, err = c.MostRows(ctx, m, bc, opts, at5, 3)
	require.NoError(t, err)
	require.EqualValues(t, 3, fit.Rows)
	require.Nil(t, fit.Next, "the maximum: more might fit")

	_, err = c.MostRows(ctx, m, bc, opts, at5, 0)
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
}
