package run

import (
	"context"
	"fmt"
	"sync/atomic"

	"carve.dev/libs/graph/shard"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/collective"
)

// MaxTP bounds --tp: each rank holds a device and a stream, and a split wider than the heads of
// any model carve runs splits nothing.
const MaxTP = 64

var tpGroups atomic.Int64

// tpDevices are the devices of a --tp split: the --device list when it names one per rank, or
// tp simulated devices when it names one sim device. The collectives of the CPU and simulated
// backends run in process; CUDA's need NCCL, which is not built yet.
func tpDevices(specs []DeviceSpec, tp int) ([]DeviceSpec, error) {
	switch {
	case tp > MaxTP:
		return nil, &UsageError{fmt.Sprintf("--tp %d: want at most %d ranks", tp, MaxTP)}
	case specs[0].Kind == kernels.BackendCUDA:
		return nil, &UsageError{fmt.Sprintf("--tp %d on %s: the GPUs' collectives need NCCL, which this runner is not built with yet; "+
			"--device sim --tp %d runs the split on simulated devices", tp, specs[0], tp)}
	case specs[0].Kind != kernels.BackendSim:
		return nil, &UsageError{fmt.Sprintf("--tp %d on %s: each rank needs a device of its own; use --device sim --tp %d", tp, specs[0], tp)}
	case len(specs) == tp:
		return specs, nil
	case len(specs) == 1:
		out := make([]DeviceSpec, tp)
		for i := range out {
			out[i] = DeviceSpec{Kind: specs[0].Kind, Ordinal: specs[0].Ordinal + i}
		}
		return out, nil
	}
	return nil, &UsageError{fmt.Sprintf("--tp %d over %d devices: name one device per rank, or one sim device", tp, len(specs))}
}

// loadRanks loads r.Model split over the devices by tensor parallelism: rank i's graph
// (package shard) on the i'th device, as the i'th replica. Each replica gets one session; a run
// runs them together (Run runs every session concurrently on the same inputs), their
// collectives meeting in one communicator, and each rank's outputs are the whole outputs.
func (r *Runner) loadRanks(ctx context.Context, specs []DeviceSpec, cfg Config) error {
	if cfg.Sessions != 1 {
		return &UsageError{fmt.Sprintf("--tp %d with --concurrency %d: a split runs one session per rank, in lockstep", cfg.TP, cfg.Sessions)}
	}
	g, err := collective.New(fmt.Sprintf("runner.tp.%d", tpGroups.Add(1)), len(specs))
	if err != nil {
		return err
	}
	r.tpGroup = g
	for i, spec := range specs {
		m, info, err := shard.Split(r.Model, i, len(specs), shard.Options{Group: g.Name()})
		if err != nil {
			return fmt.Errorf("--tp %d: %w", len(specs), err)
		}
		rep := &Replica{}
		r.Replicas = append(r.Replicas, rep)
		r.Ranks = append(r.Ranks, info)
		if err := rep.load(ctx, m, runtimeOptions(r.Envelope, cfg), spec, cfg); err != nil {
			return fmt.Errorf("rank %d on %s: %w", i, spec, err)
		}
	}
	return nil
}

// abortRanks releases the other ranks of a split from their collectives when one rank's run
// failed (they would wait for it for ever); it does nothing without a split.
func (r *Runner) abortRanks(err error) {
	if r.tpGroup != nil {
		r.tpGroup.Abort(err)
	}
}
