package generate

import (
	"context"
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
)

// Reservation is what a runtime made with a cache's runtime options (RuntimeOptions,
// BatchRuntimeOptions) reserves, planned without a device: the bytes engine.NewRuntime checks
// against the device's free memory, and that the weights' upload and each session then reserve.
type Reservation struct {
	// Plan is the envelope planned with the state's values held outside the arena, as
	// engine.NewRuntime plans it (before a tight plan, which holds at most its arena).
	Plan *engine.EnvelopePlan
	// DeviceWeightBytes is the weights' device copy on a discrete target, one for every session;
	// 0 on a host-visible one, which reads them mapped from the file.
	DeviceWeightBytes int64
	ArenaBytes        int64 // each session's arena as reserved: alloc.ReservedSize(max(Plan.ArenaBytes, 1))
	StateBytes        int64 // each session's state buffers as reserved (engine.StateReservation)
}

// Bytes is DeviceWeightBytes + sessions x (ArenaBytes + StateBytes), what engine.NewRuntime
// checks for that many sessions; ok is false where it overflows int64.
func (r *Reservation) Bytes(sessions int64) (n int64, ok bool) {
	per, ok := graph.CheckedAdd(r.ArenaBytes, r.StateBytes)
	if !ok {
		return 0, false
	}
	all, ok := graph.CheckedMul(per, sessions)
	if !ok {
		return 0, false
	}
	return graph.CheckedAdd(all, r.DeviceWeightBytes)
}

// Reserve plans what a runtime made with opts on m reserves. opts are a cache's completed
// runtime options; their Target and Registry must be those engine.NewRuntime plans with (the
// backend's, where opts leave them empty): then the figures are the runtime's to the byte.
func Reserve(ctx context.Context, m *graph.Model, opts engine.RuntimeOptions) (*Reservation, error) {
	o := opts.Options
	if len(opts.State) > 0 {
		o.External = engine.HeldValues(opts.State) // as engine.NewRuntime holds them
	}
	ep, err := engine.PlanEnvelope(ctx, m, opts.Envelope, o)
	if err != nil {
		return nil, err
	}
	state, err := engine.StateReservation(m, opts.State)
	if err != nil {
		return nil, err
	}
	return &Reservation{Plan: ep, DeviceWeightBytes: ep.DeviceWeightBytes, ArenaBytes: alloc.ReservedSize(max(ep.ArenaBytes, 1)), StateBytes: state}, nil
}

// BatchReservation is what a runtime made for a Batch with bc reserves (Reserve of
// BatchRuntimeOptions): its one session's arena, and its state of bc.Rows slot rows, the prefill
// row and the prefill row's move buffers.
func (c *Cache) BatchReservation(ctx context.Context, m *graph.Model, bc BatchConfig, opts engine.Options) (*Reservation, error) {
	ro, err := c.BatchRuntimeOptions(m, bc, engine.RuntimeOptions{Options: opts, Sessions: 1})
	if err != nil {
		return nil, err
	}
	return Reserve(ctx, m, ro)
}

// RowFit is what MostRows found. Its reservations leave out their Plan: a search keeps its
// probes' figures, not their plans.
type RowFit struct {
	// Rows is the most slot rows whose reservation fits; 0 when not even one does.
	Rows int64
	// At is the reservation at Rows; nil when Rows is 0.
	At *Reservation
	// Next is the reservation at Rows+1, which does not fit (at 1 when Rows is 0); nil when Rows
	// is the search's maximum, where more might fit.
	Next *Reservation
}

// MostRows finds the most slot rows, from 1 to most, for which a Batch with bc (its Rows
// replaced) reserves at most avail bytes (BatchReservation; Bytes(1)), by doubling then
// bisection (engine.Largest): a reservation never shrinks as rows are added, the state growing
// by rows and the arena planned over every batch up to them. Planning errors are returned as
// they are (a model that cannot be planned at some batch is not one that does not fit).
func (c *Cache) MostRows(ctx context.Context, m *graph.Model, bc BatchConfig, opts engine.Options, avail, most int64) (RowFit, error) {
	if most < 1 || most >= engine.MaxDimValue {
		return RowFit{}, &ConfigError{Problem: fmt.Sprintf("at most %d slots: want 1 to %d (with the prefill row, the largest dim carve admits)", most, engine.MaxDimValue-1)}
	}
	plans := map[int64]*Reservation{}
	probe := func(rows int64) (*Reservation, bool, error) {
		r, ok := plans[rows]
		if !ok {
			b := bc
			b.Rows = rows
			var err error
			if r, err = c.BatchReservation(ctx, m, b, opts); err != nil {
				return nil, false, err
			}
			r.Plan = nil // keep the figures of the probes, not their plans
			plans[rows] = r
		}
		n, ok := r.Bytes(1)
		return r, ok && n <= avail, nil
	}
	rows, found, err := engine.Largest(ctx, 1, most, func(rows int64) (bool, error) {
		_, fits, err := probe(rows)
		return fits, err
	}, nil)
	if err != nil {
		return RowFit{}, err
	}
	if !found {
		return RowFit{Next: plans[1]}, nil
	}
	fit := RowFit{Rows: rows, At: plans[rows]}
	if rows < most {
		if fit.Next, _, err = probe(rows + 1); err != nil {
			return RowFit{}, err
		}
	}
	return fit, nil
}
