package planner_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
)

func TestPolicyDecide(t *testing.T) {
	tests := []struct {
		name    string
		policy  planner.Policy
		r, c, w int64
		want    planner.Decision
		wantErr error
	}{
		{"fits strict", planner.Strict, 100, 200, 300, planner.Decision{Source: planner.FromPlan, Bytes: 100}, nil},
		{"fits exactly", planner.Strict, 200, 200, 300, planner.Decision{Source: planner.FromPlan, Bytes: 200}, nil},
		{"fits fallback", planner.Fallback, 0, 0, 0, planner.Decision{Source: planner.FromPlan, Bytes: 0}, nil},
		{"over slot strict", planner.Strict, 250, 200, 300, planner.Decision{}, planner.ErrWorkspaceOverCapacity},
		// The whole need is allocated, not the 50 bytes the slot lacks.
		{"over slot fallback", planner.Fallback, 250, 200, 300, planner.Decision{Source: planner.FromDynamic, Bytes: 250}, nil},
		{"over slot, at bound", planner.Fallback, 300, 0, 300, planner.Decision{Source: planner.FromDynamic, Bytes: 300}, nil},
		{"over bound strict", planner.Strict, 301, 200, 300, planner.Decision{}, planner.ErrWorkspaceOverBound},
		{"over bound fallback", planner.Fallback, 301, 200, 300, planner.Decision{}, planner.ErrWorkspaceOverBound},
		{"over bound within slot", planner.Fallback, 301, 300, 300, planner.Decision{}, planner.ErrWorkspaceOverBound},
		{"slot above bound", planner.Strict, 1, 400, 300, planner.Decision{}, planner.ErrInvalidSlot},
		{"negative", planner.Fallback, -1, 0, 0, planner.Decision{}, planner.ErrInvalidSlot},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.policy.Decide("conv1", tc.r, tc.c, tc.w)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				if !errors.Is(err, planner.ErrInvalidSlot) {
					var ce *planner.CapacityError
					require.True(t, errors.As(err, &ce))
					require.Equal(t, planner.CapacityError{Node: "conv1", R: tc.r, C: tc.c, W: tc.w, Policy: tc.policy}, *ce)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, d)
			require.Equal(t, tc.r, d.Bytes, "a decision always covers the whole need, from one source")
		})
	}
}

func TestCapacityErrorMessages(t *testing.T) {
	over := &planner.CapacityError{Node: "attn", R: 4096, C: 1024, W: 8192}
	require.EqualError(t, over, `planner: node "attn" needs 4096 bytes of workspace but its planned slot holds 1024 `+
		`(declared bound 8192): plan with an envelope (dims, routes) that covers this run, or use the fallback policy`)
	bad := &planner.CapacityError{Node: "attn", R: 9000, C: 1024, W: 8192}
	require.True(t, bad.OverBound())
	require.ErrorContains(t, bad, "the kernel's workspace bound is wrong")
}

// TestDecideNeverSplits: under fallback, every over-slot need is served whole and dynamically;
// the planned region is never topped up, and strict refuses instead.
func TestDecideNeverSplits(t *testing.T) {
	const c, w = 1000, 5000
	for r := int64(0); r <= w+250; r += 250 {
		d, err := planner.Fallback.Decide("gemm", r, c, w)
		switch {
		case r > w:
			require.ErrorIs(t, err, planner.ErrWorkspaceOverBound)
		case r <= c:
			require.NoError(t, err)
			require.Equal(t, planner.Decision{Source: planner.FromPlan, Bytes: r}, d)
		default:
			require.NoError(t, err)
			require.Equal(t, planner.Decision{Source: planner.FromDynamic, Bytes: r}, d)
			_, err = planner.Strict.Decide("gemm", r, c, w)
			require.ErrorIs(t, err, planner.ErrWorkspaceOverCapacity)
		}
	}
	require.Equal(t, "strict", planner.Strict.String())
	require.Equal(t, "fallback", planner.Fallback.String())
	require.Equal(t, "planned", planner.FromPlan.String())
	require.Equal(t, "dynamic", planner.FromDynamic.String())
}
