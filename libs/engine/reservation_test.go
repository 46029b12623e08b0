package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReservationErrorMessage pins the sizes ReservationError prints, including the overflow
// marker for a Needed of -1.
func TestReservationErrorMessage(t *testing.T) {
	env := Envelope{"batch": {Lo: 1, Hi: 8}, "seq": {Lo: 16, Hi: 16}}
	worst := Binding{"batch": 8, "seq": 16}
	for _, tc := range []struct {
		name string
		err  ReservationError
		want string
	}{
		{"suggests a value", ReservationError{Needed: 3 << 20, Available: 1 << 20, Worst: worst, Envelope: env, Dim: "batch", Fits: 2, Sessions: 1},
			"reservation does not fit: the envelope batch=1:8 seq=16 needs 3.00 MiB of arena at batch=8 seq=16, but only 1.00 MiB is available (2.00 MiB short); lower batch (it drives the arena): batch<=2 fits"},
		{"under the limit, two sessions", ReservationError{Needed: 1536, Available: 1000, Limit: 1000, Worst: worst, Envelope: env, Dim: "batch", Fits: -1, Sessions: 2},
			"needs 1.50 KiB of arena (2 sessions) at batch=8 seq=16, but only 1000 B is available under the limit (536 B short); lower batch (it drives the arena), or other dims: even batch=1 does not fit"},
		{"overflow", ReservationError{Needed: -1, Available: 80 << 30, Worst: worst, Envelope: env, Fits: -1, Sessions: 4},
			"needs overflow of arena (4 sessions) at batch=8 seq=16, but only 80.00 GiB is available; lower the dims or raise the limit"},
		{"weights on the device", ReservationError{Needed: 5 << 20, Weights: 4 << 20, Arena: 1 << 20, Available: 4 << 20, Worst: worst, Envelope: env, Fits: -1, Sessions: 1},
			"needs 5.00 MiB (weights 4.00 MiB + arena 1.00 MiB) at batch=8 seq=16, but only 4.00 MiB is available (1.00 MiB short); lower the dims or raise the limit"},
		{"weights and sessions", ReservationError{Needed: 6 << 20, Weights: 4 << 20, Arena: 1 << 20, Available: 4 << 20, Worst: worst, Envelope: env, Fits: -1, Sessions: 2},
			"(weights 4.00 MiB + 2 sessions x arena 1.00 MiB)"},
	} {
		require.Contains(t, tc.err.Error(), tc.want, tc.name)
	}
}
