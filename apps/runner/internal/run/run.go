// Package run loads a model for execution with a Level-2 reservation and runs it on one or
// more sessions: the runner's work, without its command line.
package run

import (
	"context"
	"errors"
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/bundled"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/shard"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/collective"
	"carve.dev/libs/planner"
)

// Config says what to load and how to run it.
type Config struct {
	// ModelPath is the .onnx file; "" means the bundled model.
	ModelPath string
	// Envelope holds the --dim ranges. Dims it leaves out are taken from the shapes of Inputs,
	// and for the bundled model from bundled.RunBinding.
	Envelope engine.Envelope
	// Inputs are the model's inputs by name; nil means deterministic random inputs at the
	// largest binding of the envelope (see RandomInputs), made from Seed.
	Inputs map[string]kernels.Tensor
	Seed   uint64
	// Device is "cpu" ("" means cpu), "sim" (the simulated discrete device) or "cuda[:N]" (a build
	// with the cuda tag).
	Device string
	// DeviceMemory is the cpu or sim device's memory in bytes; 0 means the host's available memory.
	DeviceMemory int64
	Policy       planner.Policy
	// Limit caps the allocator's bytes; 0 means none beyond the device.
	Limit int64
	// Workers is the CPU kernels' worker count; 0 means GOMAXPROCS.
	Workers int
	// NoFuse runs the graph as exported; by default the patterns carve.dev/libs/graph/rewrite
	// knows (attention, norms, SiLU, rotary embeddings) are fused first.
	NoFuse bool
	// NoInPlace gives every output bytes of its own (engine.Options.NoInPlace).
	NoInPlace bool
	// Sessions is how many sessions (streams, arenas) run concurrently; 0 means 1.
	Sessions int
	// Graphs replays each pattern's kernels as a captured graph after its first run.
	Graphs bool
	// Tight reserves the tight plan (engine.RuntimeOptions.Tight): kernels whose workspace is a
	// cap get what the device says they need instead.
	Tight bool
	// WorkspaceCap, when not nil, is kernels.Target.WorkspaceCap: the most workspace a kernel
	// whose workspace is a choice (a CUDA convolution's algorithm) may declare; 0 admits only
	// algorithms that need none.
	WorkspaceCap *int64
	// FullWorkspace plans every kernel whose workspace is a choice at its declared size
	// (engine.Options.FullWorkspace); by default it gets what the plan leaves free at its step.
	FullWorkspace bool
	// OutputsOnDevice leaves every output in device memory where the kernels wrote it
	// (engine.RuntimeOptions.DeviceOutputs): a run copies nothing back, as a framework's forward
	// pass returns tensors still on the GPU. Benchmarks use it to time the same work; on a
	// host-visible device (cpu) outputs alias the arena either way.
	OutputsOnDevice bool
	// Registry overrides the CPU kernels (benchmarks use it to time the executor alone).
	Registry *kernels.Registry
	// TP splits the model over TP devices by tensor parallelism (tp.go); 0 or 1 runs it whole.
	TP int
	// Observe, if not nil, sees the allocator's statistics when the runner is closed, with
	// stage "before-close" (sessions still open) and "after-close" (everything released), also
	// when Load fails. For tests and diagnostics.
	Observe func(stage string, st alloc.Stats)
}

// MaxSessions bounds the sessions a runner holds, over all its devices. On the cpu and sim
// devices a session's stream goroutine and a run waiting for it may each hold an OS thread
// (park.Reserve), and the Go runtime ends a process that holds more than 10000 threads
// (runtime/debug.SetMaxThreads) with "fatal error: thread exhaustion"; 4096 sessions leave room
// for the kernels' workers and the runtime's own.
const MaxSessions = 4096

// UsageError reports a problem in how the runner was asked to run (flags, input names), as
// opposed to a problem with the files or the model.
type UsageError struct{ Problem string }

func (e *UsageError) Error() string { return e.Problem }

// Runner is a model loaded on a device with its sessions' arenas reserved. Run and Bench may be
// called one at a time (they use every session); Runner is not safe for concurrent use.
type Runner struct {
	Model     *graph.Model    // the graph run: fused unless Config.NoFuse
	ModelName string          // the path, or bundled.Name
	Fusion    *rewrite.Report // what was fused; nil with Config.NoFuse
	// Replicas are the model loaded on each device of --device, each with its own reservation
	// and sessions. Backend, Alloc and Runtime are the first replica's; Sessions are every
	// replica's, in replica order, so that runs and benchmarks spread over all of them.
	Replicas []*Replica
	Backend  kernels.Backend
	Alloc    *alloc.Allocator
	Runtime  *engine.Runtime
	Sessions []*engine.Session
	// Envelope is the envelope the runtime was planned for, every dim filled in.
	Envelope engine.Envelope
	// Inputs are the inputs every run uses (Config.Inputs, or random ones); Binding is the
	// binding their shapes give.
	Inputs      map[string]kernels.Tensor
	Binding     engine.Binding
	Reservation Reservation
	Config      Config
	// Ranks are what each rank of a --tp split holds, in replica order; nil without a split.
	Ranks   []*shard.Rank
	tpGroup *collective.Group // the split's communicator, closed with the runner
}

// Replica is the model loaded on one device: its backend, allocator, runtime (weights resident,
// envelope planned and checked against the device) and sessions.
type Replica struct {
	Backend  kernels.Backend
	Alloc    *alloc.Allocator
	Runtime  *engine.Runtime
	Sessions []*engine.Session
	free     int64 // the device's free memory before anything was reserved
	tight    TightStats
}

// Reservation is what Load reserved: per-session arenas planned over the envelope.
type Reservation struct {
	Envelope        string `json:"envelope"`
	ArenaBytes      int64  `json:"arena_bytes"` // each session's arena: activations and workspaces
	Sessions        int    `json:"sessions"`
	TotalArenaBytes int64  `json:"total_arena_bytes"`
	WeightBytes     int64  `json:"weight_bytes"` // the model's weights, mapped from its file
	// DeviceWeightBytes is the device memory the weights take on a discrete device (sim, cuda): one
	// reservation beside the arenas. 0 on the CPU, which reads the mapped file.
	DeviceWeightBytes int64            `json:"device_weight_bytes"`
	WorstBinding      map[string]int64 `json:"worst_binding"`
	Candidates        int              `json:"candidates"`            // bindings planned to find the worst
	WorkspaceBound    int64            `json:"workspace_bound_bytes"` // the sum of the nodes' W over the envelope
	DrivingDim        string           `json:"driving_dim,omitempty"`
	AvailableBytes    int64            `json:"available_bytes"` // device free memory, or the limit if smaller, before reserving
	LimitBytes        int64            `json:"limit_bytes"`
	Fused             map[string]int   `json:"fused,omitempty"` // fusions of the planned graph by kind; none with --no-fuse
	// Devices are the replicas' devices; each reserves the weights and Sessions arenas of its own.
	Devices []string `json:"devices"`
	// TP is the ranks of a --tp split (the Devices, one rank each; the weights, arenas and
	// available bytes above are rank 0's); 0 without one.
	TP int `json:"tp,omitempty"`
	// Tight says ArenaBytes is the tight plan's (--tight); DefaultArenaBytes is the default
	// plan's, what the estimator predicts.
	Tight             bool  `json:"tight"`
	DefaultArenaBytes int64 `json:"default_arena_bytes"`
}

// Load loads the model, plans its envelope, checks that the sessions' arenas fit (failing
// with *engine.ReservationError before anything is allocated), validates the inputs (making
// random ones if none are given) and reserves one arena per session. On error everything
// acquired is released.
func Load(ctx context.Context, cfg Config) (_ *Runner, err error) {
	if cfg.Sessions <= 0 {
		cfg.Sessions = 1
	}
	r := &Runner{Config: cfg}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.Close())
		}
	}()
	if r.Model, r.ModelName, err = loadModel(cfg.ModelPath); err != nil {
		return nil, err
	}
	specs, err := ParseDevices(cfg.Device)
	if err != nil {
		return nil, err
	}
	if cfg.Sessions > MaxSessions/len(specs) {
		return nil, &UsageError{fmt.Sprintf("--concurrency %d on %d device(s): at most %d sessions in all (each holds a stream, and on the cpu and sim devices "+
			"up to two OS threads; Go ends a process that holds more than 10000)", cfg.Sessions, len(specs), MaxSessions)}
	}
	if r.Model, r.Fusion, err = fuse(r.Model, specs[0].Kind, cfg); err != nil {
		return nil, err
	}
	if r.Envelope, err = envelope(r.Model, cfg); err != nil {
		return nil, err
	}
	if cfg.TP > 1 {
		if specs, err = tpDevices(specs, cfg.TP); err != nil {
			return nil, err
		}
		if err := r.loadRanks(ctx, specs, cfg); err != nil {
			return nil, err
		}
	}
	for _, spec := range specs {
		if cfg.TP > 1 {
			break // loadRanks loaded the ranks as the replicas
		}
		rep := &Replica{}
		r.Replicas = append(r.Replicas, rep) // Close releases what it holds if the rest fails
		opts := runtimeOptions(r.Envelope, cfg)
		if cfg.OutputsOnDevice {
			for _, v := range r.Model.Outputs {
				opts.DeviceOutputs = append(opts.DeviceOutputs, v.Name)
			}
		}
		if err := rep.load(ctx, r.Model, opts, spec, cfg); err != nil {
			if len(specs) > 1 {
				err = fmt.Errorf("%s: %w", spec, err)
			}
			return nil, err
		}
	}
	first := r.Replicas[0]
	r.Backend, r.Alloc, r.Runtime = first.Backend, first.Alloc, first.Runtime

	r.Inputs = cfg.Inputs
	if r.Inputs == nil {
		b := engine.Binding{}
		for n, rg := range r.Envelope {
			b[n] = rg.Hi
		}
		if r.Inputs, err = RandomInputs(r.Model, b, cfg.Seed); err != nil {
			return nil, err
		}
	}
	if r.Binding, err = r.Runtime.Bind(r.Inputs); err != nil {
		return nil, err
	}

	ep := r.Runtime.Reserve
	avail := first.free
	if cfg.Limit > 0 && cfg.Limit < avail {
		avail = cfg.Limit
	}
	r.Reservation = Reservation{
		Envelope: r.Envelope.String(), ArenaBytes: ep.ArenaBytes, Sessions: cfg.Sessions,
		TotalArenaBytes: ep.ArenaBytes * int64(cfg.Sessions), // checked for overflow by NewRuntime
		WeightBytes:     ep.WeightBytes, DeviceWeightBytes: ep.DeviceWeightBytes, WorstBinding: ep.Worst.Binding.Dims, Candidates: len(ep.Candidates),
		WorkspaceBound: ep.WorkspaceBound(), DrivingDim: ep.DrivingDim, AvailableBytes: avail, LimitBytes: cfg.Limit,
		Tight: cfg.Tight, DefaultArenaBytes: ep.ArenaBytes,
	}
	if first.tight.Error == "" {
		r.Reservation.DefaultArenaBytes = first.tight.DefaultArenaBytes
	}
	for _, rep := range r.Replicas {
		r.Reservation.Devices = append(r.Reservation.Devices, rep.Backend.Name())
	}
	if len(r.Ranks) > 0 {
		r.Reservation.TP = len(r.Ranks)
	}
	if r.Fusion != nil {
		r.Reservation.Fused = map[string]int{}
		for _, f := range r.Fusion.Fused {
			r.Reservation.Fused[string(f.Kind)]++
		}
	}
	for _, rep := range r.Replicas {
		for range cfg.Sessions {
			s, err := rep.Runtime.NewSession()
			if err != nil {
				return nil, fmt.Errorf("%s: reserving a session's arena of %s: %w", rep.Backend.Name(), bytesize.Format(ep.ArenaBytes), err)
			}
			rep.Sessions = append(rep.Sessions, s)
			r.Sessions = append(r.Sessions, s)
		}
	}
	return r, nil
}

// fuse fuses m's patterns for the backend kind, unless cfg.NoFuse; the fused model shares m's
// weights, so closing it closes both. On error m is returned, for the caller to close.
func fuse(m *graph.Model, kind string, cfg Config) (*graph.Model, *rewrite.Report, error) {
	if cfg.NoFuse {
		return m, nil, nil
	}
	fo, err := engine.FuseOptions(engine.Options{Target: kernels.Target{Backend: kind}, Registry: cfg.Registry})
	if err != nil {
		return m, nil, err
	}
	fused, rep, err := rewrite.Fuse(m, fo)
	if err != nil {
		return m, nil, fmt.Errorf("%w (--no-fuse runs the graph as exported)", err)
	}
	return fused, rep, nil
}

// runtimeOptions are the runtime's options for env under cfg: what the estimator must plan with
// to agree with the runner to the byte.
func runtimeOptions(env engine.Envelope, cfg Config) engine.RuntimeOptions {
	return engine.RuntimeOptions{
		Options:  engine.Options{Registry: cfg.Registry, NoInPlace: cfg.NoInPlace, FullWorkspace: cfg.FullWorkspace},
		Envelope: env, Policy: cfg.Policy, Sessions: cfg.Sessions, Graphs: cfg.Graphs, Tight: cfg.Tight,
	}
}

// load opens spec's backend, makes its allocator and plans the model with opts on it, checking
// the weights and the sessions' arenas against the device before anything is uploaded.
func (rep *Replica) load(ctx context.Context, m *graph.Model, opts engine.RuntimeOptions, spec DeviceSpec, cfg Config) error {
	if err := rep.open(spec, cfg); err != nil {
		return err
	}
	return rep.plan(ctx, m, opts, cfg)
}

// open opens spec's backend, makes its allocator and learns the device's free memory, before
// anything is reserved.
func (rep *Replica) open(spec DeviceSpec, cfg Config) error {
	var err error
	if rep.Backend, err = openBackend(spec, cfg.Workers, cfg.DeviceMemory); err != nil {
		return err
	}
	if rep.Alloc, err = alloc.New(rep.Backend.Device(), alloc.Options{Limit: cfg.Limit}); err != nil {
		return err
	}
	rep.free, _, err = rep.Backend.Device().MemInfo()
	return err
}

// plan makes the runtime of m with opts on the open backend (engine.NewRuntime, which checks
// the weights and the sessions' arenas against the device before anything is uploaded).
func (rep *Replica) plan(ctx context.Context, m *graph.Model, opts engine.RuntimeOptions, cfg Config) error {
	opts.Options = rep.planOptions(opts.Options, cfg)
	var err error
	if rep.Runtime, err = engine.NewRuntime(ctx, m, rep.Backend, rep.Alloc, opts); err != nil {
		return err
	}
	rep.tight = rep.tightStats(ctx, cfg)
	return nil
}

// planOptions are opts as the runtime plans with them on the open backend: cfg's workspace cap
// on the backend's target, and the target and registry engine.NewRuntime fills in where opts
// leave them empty. A reservation planned without a device (generate.Reserve) agrees with the
// runtime's to the byte when planned with them.
func (rep *Replica) planOptions(opts engine.Options, cfg Config) engine.Options {
	switch {
	case cfg.WorkspaceCap != nil:
		opts.Target = rep.Backend.Target().WithWorkspaceCap(*cfg.WorkspaceCap)
	case opts.Target.Backend == "":
		opts.Target = rep.Backend.Target()
	}
	if opts.Registry == nil {
		opts.Registry = rep.Backend.Registry()
	}
	return opts
}

// available is the bytes a reservation on the replica may take: the device's free memory
// before anything was reserved, or limit when it is set and smaller.
func (rep *Replica) available(limit int64) int64 {
	if limit > 0 && limit < rep.free {
		return limit
	}
	return rep.free
}

// close releases the replica's sessions, runtime, allocator and device, in that order; observe
// sees the allocator's statistics before and after it is closed.
func (rep *Replica) close(observe func(stage string, st alloc.Stats)) error {
	var errs []error
	if observe != nil && rep.Alloc != nil {
		observe("before-close", rep.Alloc.Stats())
	}
	for _, s := range rep.Sessions {
		errs = append(errs, s.Close())
	}
	rep.Sessions = nil
	if rep.Runtime != nil {
		errs = append(errs, rep.Runtime.Close())
		rep.Runtime = nil
	}
	if rep.Alloc != nil {
		errs = append(errs, rep.Alloc.Close())
		if observe != nil {
			observe("after-close", rep.Alloc.Stats())
		}
		rep.Alloc = nil
	}
	if rep.Backend != nil {
		errs = append(errs, rep.Backend.Close())
		rep.Backend = nil
	}
	return errors.Join(errs...)
}

// Close releases the sessions, the allocator, the device and the model, in that order.
func (r *Runner) Close() error {
	var errs []error
	for _, rep := range r.Replicas {
		errs = append(errs, rep.close(r.Config.Observe))
	}
	r.Replicas, r.Sessions, r.Backend, r.Alloc, r.Runtime = nil, nil, nil, nil, nil
	if r.tpGroup != nil {
		errs = append(errs, r.tpGroup.Close())
		r.tpGroup = nil
	}
	if r.Model != nil {
		errs = append(errs, r.Model.Close())
		r.Model = nil
	}
	return errors.Join(errs...)
}

// ModelError is a model file that cannot be loaded; Err is graph.Load's error.
type ModelError struct {
	Path string
	Err  error
}

func (e *ModelError) Error() string { return fmt.Sprintf("model %s: %v", e.Path, e.Err) }
func (e *ModelError) Unwrap() error { return e.Err }

func loadModel(path string) (*graph.Model, string, error) {
	if path == "" {
		m, err := bundled.Load()
		return m, bundled.Name, err
	}
	m, err := graph.Load(path)
	if err != nil {
		return nil, path, &ModelError{Path: path, Err: err}
	}
	return m, path, nil
}

// envelope completes cfg.Envelope: dims it leaves out come from the inputs' shapes
// (engine.EnvelopeFromInputs, which also checks the inputs against the model), then, for the
// bundled model, from its default envelope. Dims still missing, and unknown dims, are left for
// the engine to report.
func envelope(m *graph.Model, cfg Config) (engine.Envelope, error) {
	env, err := engine.EnvelopeFromInputs(m, cfg.Envelope, cfg.Inputs)
	if err != nil {
		return nil, err
	}
	if cfg.ModelPath == "" {
		for n, v := range bundled.RunBinding() {
			if _, ok := env[n]; !ok {
				env[n] = engine.Range{Lo: v, Hi: v}
			}
		}
	}
	return env, nil
}

// Names returns the names of the model's inputs or outputs in declaration order.
func Names(vs []*graph.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}
