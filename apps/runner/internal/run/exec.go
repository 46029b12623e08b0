package run

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
	"carve.dev/libs/planner"
)

// Result is what Run returns: the outputs of the last run (copies, in the model's output
// order), the latencies, and the allocation counters of the steady state.
type Result struct {
	Outputs []kernels.Tensor
	Names   []string // output names, in the same order
	// Latencies[s][i] is the i'th run of session s.
	Latencies [][]time.Duration
	// Steady are the counters' increase over the runs after each session's first run: a run
	// of a pattern that was already run allocates nothing, so they are all zero.
	Steady Counters
}

// Counters are allocation counters: the device's malloc and free calls and the allocator's
// allocations (its dynamic allocations, which arenas are not).
type Counters struct {
	DeviceMallocs int64 `json:"device_malloc_calls"`
	DeviceFrees   int64 `json:"device_free_calls"`
	Allocs        int64 `json:"allocator_allocs"`
	Frees         int64 `json:"allocator_frees"`
}

// Counters reads the runner's allocation counters now, summed over the replicas.
func (r *Runner) Counters() Counters {
	var c Counters
	for _, rep := range r.Replicas {
		calls := deviceCalls(rep.Backend.Device())
		st := rep.Alloc.Stats()
		c.DeviceMallocs += calls.Malloc
		c.DeviceFrees += calls.Free
		c.Allocs += st.Allocations.Allocated
		c.Frees += st.Allocations.Freed
	}
	return c
}

// Sub returns c - o.
func (c Counters) Sub(o Counters) Counters {
	return Counters{c.DeviceMallocs - o.DeviceMallocs, c.DeviceFrees - o.DeviceFrees, c.Allocs - o.Allocs, c.Frees - o.Frees}
}

// NondeterminismError reports sessions whose outputs differ for the same inputs.
type NondeterminismError struct {
	Output  string
	Session int // differs from session 0
}

func (e *NondeterminismError) Error() string {
	return fmt.Sprintf("output %q of session %d differs from session 0's for the same inputs: the run is not deterministic (a kernel bug; report it)", e.Output, e.Session)
}

// Run runs the inputs repeat times on every session, the sessions concurrently: first one run
// on each session (which compiles the pattern), then the other repeat-1. The outputs of every
// session must be bit-identical; a difference is a *NondeterminismError.
func (r *Runner) Run(ctx context.Context, repeat int) (*Result, error) {
	if repeat < 1 {
		return nil, &UsageError{fmt.Sprintf("--repeat %d: run at least once", repeat)}
	}
	k := len(r.Sessions)
	res := &Result{Names: Names(r.Model.Outputs), Latencies: make([][]time.Duration, k)}
	outs := make([][]kernels.Tensor, k)
	phase := func(runs int) error {
		var wg sync.WaitGroup
		errs := make([]error, k)
		for s, sess := range r.Sessions {
			wg.Go(func() {
				for range runs {
					if err := ctx.Err(); err != nil {
						errs[s] = err
						return
					}
					start := time.Now()
					o, err := sess.Run(ctx, r.Inputs)
					res.Latencies[s] = append(res.Latencies[s], time.Since(start))
					if err != nil {
						errs[s] = fmt.Errorf("session %d: %w", s, err)
						r.abortRanks(errs[s])
						return
					}
					outs[s] = o
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := phase(1); err != nil {
		return nil, err
	}
	before := r.Counters()
	if err := phase(repeat - 1); err != nil {
		return nil, err
	}
	res.Steady = r.Counters().Sub(before)

	// The outputs alias the sessions' arenas, which no run is using now.
	for i, name := range res.Names {
		for s := 1; s < k; s++ {
			if !bytes.Equal(outs[s][i].Data, outs[0][i].Data) {
				return nil, &NondeterminismError{Output: name, Session: s}
			}
		}
		res.Outputs = append(res.Outputs, clone(outs[0][i]))
	}
	return res, nil
}

func clone(t kernels.Tensor) kernels.Tensor {
	return kernels.Tensor{DType: t.DType, Shape: append([]int64(nil), t.Shape...), Data: bytes.Clone(t.Data)}
}

// Stats are the statistics --stats prints: the first replica's, and with several replicas each
// one's under Replicas, named by device.
type Stats struct {
	Allocator alloc.Stats `json:"allocator"`
	Engine    EngineStats `json:"engine"`
	Device    DeviceCalls `json:"device"`
	Tight     TightStats  `json:"tight"` // the tight plan: W, C, R of the kernels it lowers, and the bytes saved
	Replicas  []Stats     `json:"replicas,omitempty"`
	Name      string      `json:"name,omitempty"` // the replica's device, in Replicas
}

// EngineStats are engine.Stats with a stable JSON form.
type EngineStats struct {
	Patterns              CacheStats `json:"patterns"` // plans by input-shape pattern
	Programs              CacheStats `json:"programs"` // patterns bound to the sessions' arenas
	DynamicWorkspaces     int64      `json:"dynamic_workspaces"`
	DynamicWorkspaceBytes int64      `json:"dynamic_workspace_bytes"`
	Uploads               int64      `json:"uploads"` // host-to-device copies (discrete devices: weights once, inputs every run)
	UploadBytes           int64      `json:"upload_bytes"`
	Downloads             int64      `json:"downloads"` // device-to-host copies (outputs)
	DownloadBytes         int64      `json:"download_bytes"`
	ResidentWeightBytes   int64      `json:"resident_weight_bytes"` // device memory holding the weights
	GraphCaptures         int64      `json:"graph_captures"`        // patterns captured into graphs (--graph)
	GraphReplays          int64      `json:"graph_replays"`
}

// CacheStats are planner.CacheStats with a stable JSON form.
type CacheStats struct {
	Hits      int64 `json:"hits"`
	Misses    int64 `json:"misses"`
	Computes  int64 `json:"computes"`
	Shared    int64 `json:"shared"`
	Evictions int64 `json:"evictions"`
	Len       int   `json:"len"`
}

func cacheStats(c planner.CacheStats) CacheStats {
	return CacheStats{Hits: c.Hits, Misses: c.Misses, Computes: c.Computes, Shared: c.Shared, Evictions: c.Evictions, Len: c.Len}
}

// DeviceCalls are the device's call counters that concern memory and streams.
type DeviceCalls struct {
	Malloc            int64 `json:"malloc"`
	Free              int64 `json:"free"`
	MemInfo           int64 `json:"mem_info"`
	NewStream         int64 `json:"new_stream"`
	DestroyStream     int64 `json:"destroy_stream"`
	SynchronizeStream int64 `json:"synchronize_stream"`
	RecordEvent       int64 `json:"record_event"`
	Launch            int64 `json:"launch"`
}

// Stats snapshots the allocator's, the engine's and the device's counters.
func (r *Runner) Stats() Stats {
	st := r.Replicas[0].stats()
	if len(r.Replicas) > 1 {
		for _, rep := range r.Replicas {
			rs := rep.stats()
			rs.Name = rep.Backend.Name()
			st.Replicas = append(st.Replicas, rs)
		}
	}
	return st
}

// stats snapshots one replica's counters.
func (rep *Replica) stats() Stats {
	es := rep.Runtime.Stats()
	var st Stats
	st.Allocator = rep.Alloc.Stats()
	st.Tight = rep.tight
	st.Engine = EngineStats{Patterns: cacheStats(es.Patterns), Programs: cacheStats(es.Programs),
		DynamicWorkspaces: es.DynamicWorkspace, DynamicWorkspaceBytes: es.DynamicBytes,
		Uploads: es.Copies.Uploads, UploadBytes: es.Copies.UploadBytes, Downloads: es.Copies.Downloads,
		DownloadBytes: es.Copies.DownloadBytes, ResidentWeightBytes: es.ResidentWeights,
		GraphCaptures: es.GraphCaptures, GraphReplays: es.GraphReplays}
	c := deviceCalls(rep.Backend.Device())
	st.Device = DeviceCalls{Malloc: c.Malloc, Free: c.Free, MemInfo: c.MemInfo, NewStream: c.NewStream,
		DestroyStream: c.DestroyStream, SynchronizeStream: c.SynchronizeStream, RecordEvent: c.RecordEvent, Launch: c.Launch}
	return st
}
