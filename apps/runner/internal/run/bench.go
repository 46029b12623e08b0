package run

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"carve.dev/libs/alloc/park"
)

// BenchConfig says how to benchmark.
type BenchConfig struct {
	Warmup int // untimed runs per session first (at least 1: the first run compiles the pattern)
	Runs   int // timed runs in all, spread over the sessions
	// Duration, if positive, times runs until it has passed instead of counting Runs (a soak
	// test); the latencies then go into fixed-size histograms (percentiles within 1%), so the
	// Go heap stays flat however long it runs. Every session times at least one run, however
	// short the duration (BenchResult.DurationShort says when that took longer).
	Duration time.Duration
	// Progress, if not nil, is called with the timed runs done so far, about ten times a second
	// from a goroutine of its own and once at the end.
	Progress func(done int)
	// Sample, if not nil, is called every SampleEvery (default 5 s) during the timed runs, from
	// a goroutine of its own, with the time since they started and the runs done so far: a soak
	// test reads the memory figures then (Runner.Stats, Runner.DeviceMemory).
	Sample      func(elapsed time.Duration, done int)
	SampleEvery time.Duration
}

// BenchResult is a benchmark's figures. Durations are in milliseconds in JSON.
type BenchResult struct {
	Runs        int     `json:"runs"`
	Sessions    int     `json:"sessions"`
	WallSeconds float64 `json:"wall_seconds"`
	RunsPerSec  float64 `json:"runs_per_second"`
	Latency     Latency `json:"latency_ms"`
	// GoAllocsPerRun is the Go heap allocations (runtime.MemStats.Mallocs) during the timed
	// runs, divided by the runs. With Progress set, the progress reports' own are included.
	GoAllocsPerRun float64 `json:"go_allocs_per_run"`
	// DeviceMallocsPerRun and AllocatorAllocsPerRun are the device's malloc calls and the
	// allocator's allocations during the timed runs, per run.
	DeviceMallocsPerRun   float64 `json:"device_mallocs_per_run"`
	AllocatorAllocsPerRun float64 `json:"allocator_allocs_per_run"`
	// DurationShort says that BenchConfig.Duration passed before a session's first timed run
	// finished: the sessions timed one run each where that was all the time they had.
	DurationShort bool  `json:"duration_shorter_than_a_run,omitempty"`
	Stats         Stats `json:"stats"`
}

// Latency are percentiles of the runs' latencies, in milliseconds.
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Bench warms every session up, then runs cfg.Runs timed runs, the sessions concurrently,
// each session taking the next run as soon as it finished its last.
func (r *Runner) Bench(ctx context.Context, cfg BenchConfig) (*BenchResult, error) {
	if cfg.Runs < 1 && cfg.Duration <= 0 {
		return nil, &UsageError{fmt.Sprintf("--runs %d: time at least one run", cfg.Runs)}
	}
	if cfg.Warmup < 1 {
		return nil, &UsageError{fmt.Sprintf("--warmup %d: warm up at least once (the first run of a pattern compiles it)", cfg.Warmup)}
	}
	if _, err := r.Run(ctx, cfg.Warmup); err != nil {
		return nil, err
	}

	// With a count of runs, run i's latency goes to lat[i], room for all of them made up front
	// (once, not per session), so that the timed runs allocate nothing for it; with a duration,
	// each session keeps a histogram.
	var lat []time.Duration
	hists := make([]*latencyHist, len(r.Sessions))
	if cfg.Duration <= 0 {
		lat = make([]time.Duration, cfg.Runs)
	} else {
		for i := range hists {
			hists[i] = new(latencyHist)
		}
	}
	var next, done atomic.Int64
	var short atomic.Bool // the duration passed before a session's first run ended
	var start time.Time   // set before the gate opens
	errs := make([]error, len(r.Sessions))
	stop := make(chan struct{})
	var ticker sync.WaitGroup
	every := func(d time.Duration, fn func()) {
		ticker.Go(func() {
			t := time.NewTicker(d)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					fn()
				}
			}
		})
	}
	if cfg.Progress != nil {
		every(100*time.Millisecond, func() { cfg.Progress(int(done.Load())) })
	}

	// The session goroutines start first and wait at a gate, so that the Go heap allocations
	// counted are the runs' alone, not the harness's (starting goroutines allocates).
	// The harness waits for them on a park.Event, not the WaitGroup: a goroutine blocking on a
	// WaitGroup may allocate (a sudog), and the collection below empties the runtime's spares.
	var ms0, ms1 runtime.MemStats
	var wg, ready sync.WaitGroup
	var running atomic.Int64
	var finished park.Event
	gate := make(chan struct{})
	running.Store(int64(len(r.Sessions)))
	for s, sess := range r.Sessions {
		ready.Add(1)
		wg.Go(func() {
			defer func() {
				if running.Add(-1) == 0 {
					finished.Notify()
				}
			}()
			park.PrepareSleep() // waiting for a run may sleep (park.Event.Await): not in the timed runs
			ready.Done()
			<-gate
			for timed := 0; ; timed++ {
				i := next.Add(1) - 1
				if cfg.Duration <= 0 && i >= int64(cfg.Runs) {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[s] = err
					return
				}
				t0 := time.Now()
				if cfg.Duration > 0 && t0.Sub(start) >= cfg.Duration {
					if timed == 1 { // it passed before the session's first run ended
						short.Store(true)
					}
					if timed > 0 {
						return
					}
				}
				if _, err := sess.Run(ctx, r.Inputs); err != nil {
					errs[s] = fmt.Errorf("session %d: %w", s, err)
					return
				}
				if h := hists[s]; h != nil {
					h.add(time.Since(t0))
				} else {
					lat[i] = time.Since(t0)
				}
				done.Add(1)
			}
		})
	}
	ready.Wait()
	park.Reserve(1) // this goroutine's Await below
	defer park.Release(1)
	park.PrepareSleep() // for the Await below
	// A collection the warm-up's allocations started would finish inside the timed runs, and
	// its own allocations would count as theirs: finish it first.
	runtime.GC()
	before := r.Counters()
	runtime.ReadMemStats(&ms0)
	start = time.Now()
	if cfg.Sample != nil {
		sampleEvery := cfg.SampleEvery
		if sampleEvery <= 0 {
			sampleEvery = 5 * time.Second
		}
		every(sampleEvery, func() { cfg.Sample(time.Since(start), int(done.Load())) })
	}
	close(gate)
	finished.Await(func() bool { return running.Load() == 0 })
	wall := time.Since(start)
	runtime.ReadMemStats(&ms1)
	wg.Wait()
	after := r.Counters()
	close(stop)
	ticker.Wait()
	if cfg.Progress != nil {
		cfg.Progress(int(done.Load()))
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}

	var hist latencyHist
	for _, h := range hists {
		if h != nil {
			hist.merge(h)
		}
	}
	runs := len(lat) // every run counted was timed: an error or cancellation returned above
	latency := percentiles(lat)
	if cfg.Duration > 0 {
		runs, latency = int(hist.n), hist.latency()
	}
	n := float64(max(runs, 1))
	d := after.Sub(before)
	return &BenchResult{
		Runs: runs, Sessions: len(r.Sessions), WallSeconds: wall.Seconds(), RunsPerSec: float64(runs) / wall.Seconds(),
		Latency:               latency,
		GoAllocsPerRun:        float64(ms1.Mallocs-ms0.Mallocs) / n,
		DeviceMallocsPerRun:   float64(d.DeviceMallocs) / n,
		AllocatorAllocsPerRun: float64(d.Allocs) / n,
		DurationShort:         short.Load(),
		Stats:                 r.Stats(),
	}, nil
}

// percentiles sorts lat and reads the nearest-rank percentiles.
func percentiles(lat []time.Duration) Latency {
	if len(lat) == 0 {
		return Latency{}
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	rank := func(p float64) time.Duration {
		// Nearest rank: the smallest value with at least p of the samples at or below it.
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Latency{Min: ms(s[0]), Mean: ms(sum) / float64(len(s)), P50: ms(rank(0.50)), P90: ms(rank(0.90)),
		P99: ms(rank(0.99)), Max: ms(s[len(s)-1])}
}
