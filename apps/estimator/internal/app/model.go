package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/arch"
	"carve.dev/libs/graph/bundled"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/kernels"

	// The backends the estimator plans for: they register their kernels.
	_ "carve.dev/libs/kernels/cpu"
	_ "carve.dev/libs/kernels/cuda"
	_ "carve.dev/libs/kernels/sim"
)

// Flags shared by report and fit.
func modelFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "the ONNX model `FILE` (default: the bundled tiny GPT-2)"},
		&cli.StringFlag{Name: "config", Usage: "plan from a transformers config.json `FILE` instead of --model: the canonical fused graph of its architecture, weights by shape only (no export, no weights)"},
		&cli.BoolFlag{Name: "ignore-window", Usage: "with --config: plan a sliding-window model as plain causal attention, the window left out (the same computation while seq is at most the window)"},
		&cli.BoolFlag{Name: "last-logits", Usage: "with --config: compute the logits of the last position only ([batch, 1, vocab]), as a prompt step of generation does"},
		&cli.StringFlag{Name: "tp", Value: "1", DefaultText: "1", Usage: "with --config: plan one rank of a Megatron tensor-parallel split over `N` ranks (heads, MLP columns and vocabulary per rank, KV heads max(1, kv/N)), with the communicator's all-reduce buffers; fit --config also takes ? (the fewest ranks, a power of two up to 64, that fit the load --dim batch=B --dim seq=N) or ?:MAX"},
		&cli.StringFlag{Name: "dtype", Usage: "with --config: the weights' and activations' `TYPE`, fp32, bf16 or fp16 (default: the config's torch_dtype, else fp32); for kv and fit --tp, also int4[:ACT]: 4-bit weights as onnxruntime GenAI's int4 models have them (MatMulNBits, symmetric, blocks of --int4-block), activations ACT (default fp32 on the CPU, fp16 on a GPU, as GenAI's builder writes them)"},
		&cli.Int64Flag{Name: "int4-block", Value: 32, Usage: "with --dtype int4: the quantization block `SIZE` along K, 16 to 256, a power of two"},
		&cli.StringSliceFlag{Name: "dim", Aliases: []string{"d"}, Usage: "a dim's value or range: `NAME=V`, NAME=LO:HI, NAME=? (fit: the dim to search), NAME=?:MAX; repeat for each dim"},
		targetFlag(),
		workspaceCapFlag(),
		fullWorkspaceFlag(),
		&cli.IntFlag{Name: "workers", Usage: "CPU worker `N` the runner will use (per-worker workspaces scale with it); 0: all CPUs"},
		&cli.StringFlag{Name: "format", Value: "table", Usage: "output `FORMAT`: table (for people) or json (for programs)"},
		&cli.BoolFlag{Name: "no-fuse", Usage: "plan the graph as exported, without fusing attention, norms, SiLU and rotary embeddings into fused ops"},
		noInPlaceFlag(),
	}
}

// fullWorkspaceFlag is --full-workspace, read by options.
func fullWorkspaceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "full-workspace", Usage: "plan every kernel whose workspace is a choice (a CUDA convolution's algorithm, a cuBLASLt product's) at its whole bound, " +
		"up to --workspace-cap, the arena growing for it; by default it gets what the plan leaves free at its step, so that it never raises the arena; the runner's --full-workspace reserves the same"}
}

// noInPlaceFlag is --no-inplace, read by options.
func noInPlaceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-inplace", Usage: "plan every output in bytes of its own; by default an output takes an input's bytes where its kernel allows it " +
		"and nothing reads the input later (a residual sum over its input, an activation over the convolution's output); the runner's --no-inplace reserves the same"}
}

// model is a loaded model and how reports name it.
type model struct {
	*graph.Model                 // the graph planned: fused, unless --no-fuse
	exported     *graph.Model    // the graph as loaded
	fusion       *rewrite.Report // nil with --no-fuse
	name         string          // the path given, or bundled.Name
	bundled      bool
	config       *arch.Config // the config the graph was built from (--config); nil for an ONNX model
	tp           *arch.TP     // the tensor-parallel split the graph is one rank of (--tp above 1); nil for none
}

// commBytes is what the tensor-parallel group's communicator takes on each rank for its
// all-reduce buffers: a declared constant, not planned (NCCL allocates them outside carve's
// arena). NCCL keeps, per channel and per peer, a buffer of NCCL_BUFFSIZE (4 MiB) for its Simple
// protocol and buffers for LL (256 KiB) and LL128 (about 4.6 MiB): about 9 MiB, for a ring's two
// peers, over up to 32 channels on NVLink: 32 x 2 x 9 MiB.
const commBytes = 32 * 2 * 9 << 20

// commReserve is the communicator bytes a rank reserves: commBytes under --tp, else 0.
func (m *model) commReserve() int64 {
	if m.tp == nil {
		return 0
	}
	return commBytes
}

func (m *model) close() {
	if !m.bundled {
		_ = m.exported.Close() // the fused graph shares its weights: this closes both
	}
}

// loadModel loads --model, or the bundled model without it, and fuses it unless --no-fuse.
func loadModel(c *cli.Context) (*model, error) {
	if c.IsSet("config") {
		return loadConfig(c)
	}
	for _, f := range []string{"dtype", "int4-block", "last-logits", "ignore-window", "tp"} {
		if c.IsSet(f) {
			return nil, usagef("--%s applies to --config only: an ONNX model's graph is its own", f)
		}
	}
	path := c.String("model")
	m := &model{name: path}
	if path == "" {
		g, err := bundled.Load()
		if err != nil {
			return nil, err
		}
		m.exported, m.name, m.bundled = g, bundled.Name, true
	} else {
		g, err := graph.Load(path)
		if err != nil {
			return nil, &modelError{path: path, err: err}
		}
		m.exported = g
	}
	m.Model = m.exported
	if !c.Bool("no-fuse") {
		opts, err := options(c)
		if err != nil {
			m.close()
			return nil, err
		}
		fo, err := engine.FuseOptions(opts)
		if err != nil {
			m.close()
			return nil, err
		}
		f, rep, err := rewrite.Fuse(m.exported, fo)
		if err != nil {
			m.close()
			return nil, fmt.Errorf("%w (--no-fuse plans the graph as exported)", err)
		}
		m.Model, m.fusion = f, rep
	}
	return m, nil
}

// loadConfig builds the graph of --config: the canonical fused graph of its architecture for
// the target's kernels (arch), its weights by shape only.
func loadConfig(c *cli.Context) (*model, error) {
	n, err := configRanks(c)
	if err != nil {
		return nil, err
	}
	src, err := readConfig(c)
	if err != nil {
		return nil, err
	}
	if err := src.split(n); err != nil {
		return nil, err
	}
	if src.int4 != 0 {
		return nil, usagef("--dtype int4 plans the decode graph of onnxruntime GenAI's int4 models: use kv (or fit --tp with --context), not the prefill graph")
	}
	g, err := src.rank.Build(arch.Options{DType: src.dtype, Skip: src.skip, IgnoreWindow: c.Bool("ignore-window"), LastLogits: c.Bool("last-logits")})
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", src.path, err)
	}
	return &model{Model: g, exported: g, name: src.path, config: src.cfg, tp: src.tp}, nil
}

// configSource is a parsed --config and how to build it.
type configSource struct {
	path  string
	cfg   *arch.Config
	rank  *arch.Config   // the config of one rank under --tp; cfg without it
	tp    *arch.TP       // nil without --tp
	dtype graph.DType    // --dtype; 0: the config's (with int4, the activations')
	int4  int64          // --dtype int4: the block size; 0 without
	skip  []rewrite.Kind // the fusions the target lacks
}

// readConfig reads and parses --config, with --dtype and the target's fusions; split makes it
// one rank of --tp.
func readConfig(c *cli.Context) (*configSource, error) {
	path := c.String("config")
	switch {
	case c.IsSet("model"):
		return nil, usagef("--model and --config: give one (an ONNX model, or a config.json to build its graph from)")
	case c.Bool("no-fuse"):
		return nil, usagef("--no-fuse and --config: a graph built from a config is the fused graph; there is no export to plan")
	case path == "":
		return nil, usagef("--config: give the path of a transformers config.json")
	}
	opts, err := options(c)
	if err != nil {
		return nil, err
	}
	dt, int4, err := configDType(c, opts.Target)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--config %s: no such file (give the path of a transformers config.json)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	cfg, err := arch.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	fo, err := engine.FuseOptions(opts)
	if err != nil {
		return nil, err
	}
	return &configSource{path: path, cfg: cfg, rank: cfg, dtype: dt, int4: int4, skip: fo.Skip}, nil
}

// configDType reads --dtype and --int4-block: the graph's float type (0: the config's) and, for
// int4[:ACT], the block size, with ACT (default: fp32 on the CPU, fp16 on a GPU) as the type.
func configDType(c *cli.Context, t kernels.Target) (graph.DType, int64, error) {
	s := c.String("dtype")
	if c.IsSet("int4-block") && !strings.HasPrefix(s, "int4") {
		return 0, 0, usagef("--int4-block applies to --dtype int4 only")
	}
	if !c.IsSet("dtype") {
		return 0, 0, nil
	}
	act, ok := strings.CutPrefix(s, "int4")
	if !ok {
		dt, ok := arch.ParseDType(s)
		if !ok {
			return 0, 0, usagef("--dtype %q: want fp32, bf16, fp16 or int4[:fp32|bf16|fp16]", s)
		}
		return dt, 0, nil
	}
	block := c.Int64("int4-block")
	if !slices.Contains(arch.Int4Blocks, block) {
		return 0, 0, usagef("--int4-block %d: want one of %v", block, arch.Int4Blocks)
	}
	dt := graph.Float16
	if t.Backend == kernels.BackendCPU {
		dt = graph.Float32
	}
	if act != "" {
		if dt, ok = arch.ParseDType(strings.TrimPrefix(act, ":")); !ok || act[0] != ':' {
			return 0, 0, usagef("--dtype %q: int4's activations are int4:fp32, int4:bf16 or int4:fp16", s)
		}
	}
	return dt, block, nil
}

// split makes src one rank of a tensor-parallel split over n ranks; 1 is the whole model.
func (src *configSource) split(n int) error {
	src.rank, src.tp = src.cfg, nil
	if n == 1 {
		return nil
	}
	rank, tp, err := src.cfg.Split(n)
	if err != nil {
		return fmt.Errorf("--config %s: --tp %d: %w", src.path, n, err)
	}
	src.rank, src.tp = rank, tp
	return nil
}

// maxRanks bounds --tp, given or searched: a tensor-parallel group larger than this is no
// machine's.
const maxRanks = 1024

// tpFlag is --tp: a number of ranks, or with search "?" (the fewest that fit) up to most ranks.
type tpFlag struct {
	ranks  int
	search bool
	most   int
}

// defaultMostRanks is the bound of --tp ? without :MAX.
const defaultMostRanks = 64

// parseTP reads --tp.
func parseTP(c *cli.Context) (tpFlag, error) {
	s := strings.TrimSpace(c.String("tp"))
	if rest, ok := strings.CutPrefix(s, "?"); ok {
		f := tpFlag{search: true, most: defaultMostRanks}
		if rest == "" {
			return f, nil
		}
		m, err := strconv.Atoi(strings.TrimPrefix(rest, ":"))
		if !strings.HasPrefix(rest, ":") || err != nil || m < 1 || m > maxRanks {
			return f, usagef("--tp %s: want ? or ?:MAX with MAX from 1 to %d ranks (the degrees tried are the powers of two up to MAX)", s, maxRanks)
		}
		f.most = m
		return f, nil
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return tpFlag{}, usagef("--tp %q: want a number of ranks N (or, on fit --config, ? for the fewest that fit)", s)
	case n < 1:
		return tpFlag{}, usagef("--tp %d: want 1 or more ranks", n)
	case n > maxRanks:
		return tpFlag{}, usagef("--tp %d: want at most %d ranks", n, maxRanks)
	}
	return tpFlag{ranks: n}, nil
}

// configRanks reads --tp as a number of ranks, for the commands that plan one split.
func configRanks(c *cli.Context) (int, error) {
	f, err := parseTP(c)
	if err != nil {
		return 0, err
	}
	if f.search {
		return 0, usagef("--tp %s: the fewest ranks are searched by fit --config only (with --dim batch=B and --dim seq=N, the load); give a number of ranks", c.String("tp"))
	}
	return f.ranks, nil
}

// targetFlag is --target, shared by report, fit and ops (--backend is its old name).
func targetFlag() cli.Flag {
	return &cli.StringFlag{Name: "target", Aliases: []string{"backend"}, Value: kernels.BackendCPU,
		Usage: "the machine to plan for: `TARGET` cpu, cpu:WORKERS, sim, h200, h100, a100 or sm_XY:SMS:SHARED[:MEMORY] (e.g. sm_90:132:227KiB); it needs no such machine"}
}

// maxWorkers bounds --workers, as the runner's --workers is bounded.
const maxWorkers = 4096

// target reads --target and --workers. --workers sets the CPU workers of a cpu or sim target
// that does not name them.
func target(c *cli.Context) (kernels.Target, error) {
	w := c.Int("workers")
	if w < 0 {
		return kernels.Target{}, usagef("--workers %d: want 0 (all CPUs) or more", w)
	}
	if w > maxWorkers {
		return kernels.Target{}, usagef("--workers %d: want at most %d (the CPU kernels plan a workspace for each worker; the runner admits as many)", w, maxWorkers)
	}
	spec := c.String("target")
	t, err := kernels.ParseTarget(spec)
	var te *kernels.TargetError
	if errors.As(err, &te) {
		return t, usagef("--target %s: %s", spec, te.Problem)
	}
	if err != nil {
		return t, err
	}
	if (t.Backend == kernels.BackendCPU || t.Backend == kernels.BackendSim) && !strings.Contains(spec, ":") {
		backend := t.Backend
		t = kernels.CPU(w)
		t.Backend = backend
	}
	if c.IsSet("workspace-cap") {
		n, err := bytesize.Parse(c.String("workspace-cap"))
		if err != nil {
			return t, usagef("--workspace-cap: %v", err)
		}
		t = t.WithWorkspaceCap(n)
	}
	return t, nil
}

// workspaceCapFlag is --workspace-cap, read by target.
func workspaceCapFlag() cli.Flag {
	return &cli.StringFlag{Name: "workspace-cap", Usage: "plan with the most workspace one kernel whose workspace is a choice may declare, `BYTES` (e.g. 0, 8MiB: a CUDA convolution then declares at most that for its cuDNN algorithms, 0 none); " +
		"default: no cap beyond each kernel's own bound; the runner's --workspace-cap reserves the same"}
}

// options reads --target and --workers into the engine's options, resolving the worker count
// so that reports say what they planned for.
func options(c *cli.Context) (engine.Options, error) {
	t, err := target(c)
	if err != nil {
		return engine.Options{}, err
	}
	reg, err := kernels.RegistryFor(t.Backend)
	if err != nil {
		return engine.Options{}, err
	}
	return engine.Options{Registry: reg, Target: t, Workers: t.Workers, NoInPlace: c.Bool("no-inplace"), FullWorkspace: c.Bool("full-workspace")}, nil
}

// envelope reads the --dim flags. For the bundled model, dims left out take the bundled
// defaults; defaulted lists those, sorted.
func envelope(c *cli.Context, m *model) (env engine.Envelope, defaulted []string, err error) {
	env, err = engine.ParseEnvelope(c.StringSlice("dim"))
	if err != nil {
		return nil, nil, err
	}
	if m.bundled {
		for name, r := range bundled.EstimateRanges() {
			if _, ok := env[name]; !ok {
				env[name] = engine.Range{Lo: r.Lo, Hi: r.Hi}
				defaulted = append(defaulted, name)
			}
		}
		slices.Sort(defaulted)
	}
	return env, defaulted, nil
}

// budget reads --budget; ok is false when it is not given.
func budget(c *cli.Context) (n int64, ok bool, err error) {
	s := c.String("budget")
	if s == "" {
		return 0, false, nil
	}
	n, err = bytesize.Parse(s)
	if err != nil {
		return 0, false, fmt.Errorf("--budget: %w", err)
	}
	return n, true, nil
}

// modelInfo is the "model" object of the JSON outputs.
type modelInfo struct {
	Name    string   `json:"name"`
	Bundled bool     `json:"bundled"`
	Nodes   int      `json:"nodes"`
	Dims    []string `json:"dims"`
	// Config is the architecture a --config graph was built for; absent for an ONNX model.
	Config *configInfo `json:"config,omitempty"`
}

// configInfo says what graph a config.json gave.
type configInfo struct {
	ModelType string `json:"model_type"`
	Layers    int    `json:"layers"`
	Hidden    int64  `json:"hidden_size"`
	Heads     int64  `json:"heads"`
	KVHeads   int64  `json:"kv_heads"`
	HeadDim   int64  `json:"head_dim"`
	Vocab     int64  `json:"vocab"`
	DType     string `json:"dtype"`
	// TP is the tensor-parallel split the graph is one rank of (--tp); absent without it.
	TP *tpInfo `json:"tp,omitempty"`
}

// tpInfo is one rank of a tensor-parallel split, in JSON.
type tpInfo struct {
	Ranks        int   `json:"ranks"`
	Heads        int64 `json:"heads_per_rank"`
	KVHeads      int64 `json:"kv_heads_per_rank"`
	KVReplicas   int64 `json:"kv_replicas"` // ranks holding each KV head
	Intermediate int64 `json:"intermediate_per_rank"`
	Vocab        int64 `json:"vocab_per_rank"`
	AllReduces   int   `json:"all_reduces"` // per forward pass, in place
	CommBytes    int64 `json:"comm_bytes"`  // the communicator's buffers per rank, a declared constant
}

func (m *model) info() modelInfo {
	mi := modelInfo{Name: m.name, Bundled: m.bundled, Nodes: len(m.Nodes), Dims: append([]string{}, m.DimNames...)}
	if c := m.config; c != nil {
		mi.Config = &configInfo{ModelType: c.ModelType, Layers: c.Layers, Hidden: c.Hidden, Heads: c.Heads, KVHeads: c.KVHeads,
			HeadDim: c.HeadDim, Vocab: c.Vocab, DType: m.Value(arch.Logits).DType.String()}
		if t := m.tp; t != nil {
			mi.Config.TP = &tpInfo{Ranks: t.Ranks, Heads: t.Heads, KVHeads: t.KVHeads, KVReplicas: t.KVReplicas, Intermediate: t.Intermediate,
				Vocab: t.Vocab, AllReduces: t.AllReduces, CommBytes: commBytes}
		}
	}
	return mi
}

// rangeInfo is one dim of an envelope in JSON.
type rangeInfo struct {
	Lo int64 `json:"lo"`
	Hi int64 `json:"hi"`
}

func envelopeInfo(env engine.Envelope) map[string]rangeInfo {
	out := make(map[string]rangeInfo, len(env))
	for n, r := range env {
		out[n] = rangeInfo{r.Lo, r.Hi}
	}
	return out
}

// opName is n's op label; "" for no node (a buffer of a graph input, defined by none).
func opName(n *graph.Node) string {
	if n == nil {
		return ""
	}
	return opLabel(n.Domain, n.OpType)
}
