package alloc

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStatsJSONNames(t *testing.T) {
	b, err := json.Marshal(Stats{})
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, want := range []string{
		// onnxruntime
		"num_allocs", "num_reserves", "num_arena_extensions", "num_arena_shrinkages", "bytes_in_use",
		"total_allocated_bytes", "max_bytes_in_use", "max_alloc_size", "bytes_limit",
		"bytes_requested_in_use", "reserved_bytes",
		// PyTorch
		"allocations", "segments", "active", "active_bytes", "allocated_bytes", "segment_bytes",
		// device calls
		"device_malloc_calls", "device_free_calls",
	} {
		require.Contains(t, keys, want)
	}
	var stat map[string]int64
	require.NoError(t, json.Unmarshal(m["active_bytes"], &stat))
	require.Equal(t, map[string]int64{"current": 0, "peak": 0, "allocated": 0, "freed": 0}, stat)
	for _, k := range keys {
		for _, c := range k {
			require.True(t, c == '_' || c >= 'a' && c <= 'z', "key %q is not snake_case", k)
		}
	}
}

func TestStatsCountAndPeaks(t *testing.T) {
	const KiB, MiB = 1 << 10, 1 << 20
	d := newCPU(t, 64*MiB)
	al := newAllocator(t, d, Options{Limit: 48 * MiB})
	s, o := newStream(t, d), newStream(t, d)

	a := mustAlloc(t, al, s, 1000)  // 1 KiB block
	b := mustAlloc(t, al, s, 3*MiB) // 3 MiB block in a 20 MiB segment
	st := al.Stats()
	require.Equal(t, int64(2), st.NumAllocs)
	require.Equal(t, int64(2), st.NumArenaExtensions)
	require.Equal(t, Stat{2, 2, 2, 0}, st.Allocations)
	require.Equal(t, Stat{2, 2, 2, 0}, st.Segments)
	require.Equal(t, Stat{1*KiB + 3*MiB, 1*KiB + 3*MiB, 1*KiB + 3*MiB, 0}, st.AllocatedBytes)
	require.Equal(t, Stat{22 * MiB, 22 * MiB, 22 * MiB, 0}, st.SegmentBytes)
	require.Equal(t, int64(1000+3*MiB), st.BytesRequestedInUse)
	require.Equal(t, int64(1*KiB+3*MiB), st.BytesInUse)
	require.Equal(t, int64(22*MiB), st.TotalAllocatedBytes)
	require.Equal(t, int64(3*MiB), st.MaxAllocSize)
	require.Equal(t, int64(48*MiB), st.BytesLimit)
	require.Equal(t, int64(22*MiB-1*KiB-3*MiB), st.CachedBytes)
	require.Equal(t, int64(2), st.DeviceMallocCalls)

	// b is used on o, whose work is gated: after Free it stays active, not allocated.
	g := newGate()
	launch(t, d, o, g.fn())
	require.NoError(t, al.RecordStream(b, o))
	require.NoError(t, al.Free(b))
	st = al.Stats()
	require.Equal(t, Stat{1, 2, 2, 1}, st.Allocations)
	require.Equal(t, Stat{2, 2, 2, 0}, st.Active, "a held block is still active")
	require.Equal(t, int64(3*MiB), st.HeldBytes)
	require.Equal(t, int64(1), st.EventRecordCalls)
	g.open()
	require.NoError(t, d.SynchronizeStream(o))

	al.ResetPeaks()
	st = al.Stats()
	require.Equal(t, int64(1), st.Allocations.Peak, "ResetPeaks sets peaks to current values")
	require.Equal(t, int64(1*KiB), st.AllocatedBytes.Peak)
	require.Equal(t, int64(1*KiB), st.MaxBytesInUse)
	require.Equal(t, int64(2), st.Allocations.Allocated, "ResetPeaks keeps cumulative counts")

	c := mustAlloc(t, al, s, 2*MiB) // processes o's event first: the 3 MiB block is free again
	st = al.Stats()
	require.Equal(t, Stat{2, 2, 3, 1}, st.Active)
	require.Equal(t, Stat{1*KiB + 2*MiB, 1*KiB + 2*MiB, 1*KiB + 5*MiB, 3 * MiB}, st.AllocatedBytes)
	require.Zero(t, st.HeldBytes)
	require.NoError(t, al.Free(a))
	require.NoError(t, al.Free(c))
	require.NoError(t, al.EmptyCache())
	st = al.Stats()
	require.Equal(t, Stat{0, 2, 2, 2}, st.Segments)
	require.Equal(t, int64(2), st.NumArenaShrinkages)
	require.Equal(t, int64(2), st.DeviceFreeCalls)
	require.Zero(t, st.TotalAllocatedBytes)
	require.Zero(t, st.BytesRequestedInUse)
	require.Equal(t, int64(1*KiB+2*MiB), st.MaxBytesInUse)
}
