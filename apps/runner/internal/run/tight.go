package run

import (
	"context"

	"carve.dev/libs/engine"
)

// TightStats are the tight plan's figures (engine.TightPlan): the kernels whose workspace the
// device says is below what the default reservation holds for them, with W, C and R, and what
// reserving their needs saves. On devices whose kernels declare needs, not caps (cpu, sim), no
// kernel is measured and nothing is saved.
type TightStats struct {
	// Reserved says the tight plan is what was reserved (--tight); with nothing saved it is the
	// default plan.
	Reserved bool `json:"reserved"`
	// Measured counts the kernels whose need the device was asked for.
	Measured int `json:"measured_kernels"`
	// DefaultArenaBytes and ArenaBytes are one session's arena under the default plan (what the
	// estimator predicts) and under the tight plan.
	DefaultArenaBytes int64 `json:"default_arena_bytes"`
	ArenaBytes        int64 `json:"tight_arena_bytes"`
	// SavedBytes is what the tight plan saves per session (reserved sizes), TotalSavedBytes over
	// the sessions.
	SavedBytes      int64         `json:"saved_bytes"`
	TotalSavedBytes int64         `json:"total_saved_bytes"`
	Kernels         []TightKernel `json:"kernels"`
	// Error is why the tight plan could not be made (without --tight, which fails the load).
	Error string `json:"error,omitempty"`
}

// TightKernel is one kernel the tight plan lowers: W its declared bound over the envelope (all its
// workspace), C what the default plan holds for its measured part (Part: cuBLASLt's cap), R what
// that part needs on the device (the most over the envelope's candidates, at At).
type TightKernel struct {
	Node string         `json:"node"`
	Op   string         `json:"op"`
	Part string         `json:"part"`
	W    int64          `json:"w_bytes"`
	C    int64          `json:"c_bytes"`
	R    int64          `json:"r_bytes"`
	At   engine.Binding `json:"at"`
}

// tightStats makes the replica's tight plan (measured once, at load) into TightStats.
func (rep *Replica) tightStats(ctx context.Context, cfg Config) TightStats {
	tp, err := rep.Runtime.Tight(ctx)
	if err != nil {
		return TightStats{Error: err.Error()}
	}
	ts := TightStats{Reserved: cfg.Tight, Measured: tp.Measured,
		DefaultArenaBytes: tp.Default.ArenaBytes, ArenaBytes: tp.Plan.ArenaBytes,
		SavedBytes: tp.Saved(), TotalSavedBytes: tp.Saved() * int64(cfg.Sessions), Kernels: []TightKernel{}}
	for _, k := range tp.Kernels {
		op := k.Node.OpType
		if k.Node.Domain != "" {
			op = k.Node.Domain + "." + op
		}
		ts.Kernels = append(ts.Kernels, TightKernel{Node: k.Node.Name, Op: op, Part: k.Part, W: k.W, C: k.C, R: k.R, At: k.At})
	}
	return ts
}
