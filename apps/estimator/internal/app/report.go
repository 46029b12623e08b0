package app

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"carve.dev/apps/estimator/internal/planview"
	"carve.dev/apps/estimator/internal/svgplan"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/kernels"
)

func reportCommand(s Streams) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "weights, planned arena and workspaces of a model over ranges of its dims, against a budget",
		UsageText: "estimator report [--model M.onnx] --dim batch=1:32 --dim seq=1:8192 [--budget 141GiB]\n" +
			"   [--target cpu|h200|sm_XY:SMS:SHARED] [--workers N] [--top N] [--format table|json] [--svg plan.svg]\n" +
			"   [--no-fuse] [--explain-fusion] [--workspace-cap BYTES] [--cap-sweep 0,8MiB,64MiB,none]",
		Description: "Plans the model at every binding of the ranges that can be the worst (the corners, and both\n" +
			"sides of every point where a kernel switches tactic) and reports the largest arena: exactly what\n" +
			"the runner reserves for the same model, dims, backend and workers. Exits 3 if --budget is given\n" +
			"and weights plus arena exceed it. The graph is fused first (attention, norms, SiLU, rotary embeddings\n" +
			"written out op by op become fused ops), as the runner fuses it; the report gives the arena of the\n" +
			"graph as exported too, and --no-fuse plans that one.",
		Flags: append(modelFlags(),
			&cli.StringFlag{Name: "budget", Usage: "device memory `SIZE` to check against, e.g. 141GiB, 80GB, 1.5TiB or bytes"},
			&cli.IntFlag{Name: "top", Value: 10, Usage: "list the `N` largest workspaces and live buffers (0: all)"},
			&cli.StringFlag{Name: "svg", Usage: "also draw the worst binding's plan to `FILE` (SVG)"},
			&cli.BoolFlag{Name: "explain-fusion", Usage: "list every fusion and every candidate left as exported, with the reason"},
			&cli.StringFlag{Name: "cap-sweep", Usage: "also plan under each workspace cap of `LIST` (sizes or none, comma-separated, e.g. 0,8MiB,64MiB,none) and list the arena under each and, on a CUDA target, the convolutions' time from what was recorded on its device"},
		),
		Action: func(c *cli.Context) error { return runReport(c, s) },
	}
}

// report is the JSON form of a report; README.md documents it.
type report struct {
	Model                modelInfo            `json:"model"`
	Envelope             map[string]rangeInfo `json:"envelope"`
	DefaultDims          []string             `json:"default_dims"`
	Backend              string               `json:"backend"`
	Target               string               `json:"target"` // the form --target reads back (kernels.Target.String)
	Workers              int                  `json:"workers"`
	WeightsBytes         int64                `json:"weights_bytes"`
	DeviceWeightsBytes   int64                `json:"device_weights_bytes"` // the weights in a discrete device's memory; 0 on the CPU
	ArenaBytes           int64                `json:"arena_bytes"`
	ArenaLowerBoundBytes int64                `json:"arena_lower_bound_bytes"`
	WorkspaceBoundBytes  int64                `json:"workspace_bound_bytes"`
	InPlace              bool                 `json:"in_place"`         // false with --no-inplace
	InPlaceOutputs       int                  `json:"in_place_outputs"` // at the worst binding: outputs written over an input's bytes
	InPlaceBytes         int64                `json:"in_place_bytes"`   // their sizes
	// WithinPlan counts, at the worst binding, the kernels whose workspace is a choice that are
	// planned within the bytes the plan leaves free at their step; 0 with --full-workspace.
	WithinPlan          int              `json:"workspace_within_plan"`
	TotalBytes          int64            `json:"total_bytes"`
	CommBytes           int64            `json:"comm_bytes,omitempty"` // --tp: the communicator's buffers, in the total
	Budget              *budgetVerdict   `json:"budget"`
	WorstBinding        map[string]int64 `json:"worst_binding"`
	DrivingDim          string           `json:"driving_dim"`
	DrivingSavingsBytes int64            `json:"driving_savings_bytes"`
	Candidates          []candidate      `json:"candidates"`
	PeakStep            *peakStep        `json:"peak_step"`
	WorkspaceNodes      int              `json:"workspace_nodes"`
	Workspaces          []workspace      `json:"workspaces"`
	Fusion              *fusionReport    `json:"fusion"`
	ConvTime            *convTime        `json:"conv_time,omitempty"` // a CUDA target's convolutions at the worst binding
	CapSweep            []capPoint       `json:"cap_sweep,omitempty"`

	// target is Target parsed, for the table; not in the JSON.
	target kernels.Target
}

type budgetVerdict struct {
	BudgetBytes int64 `json:"budget_bytes"`
	Fits        bool  `json:"fits"`
	MarginBytes int64 `json:"margin_bytes"` // budget - total; negative when it does not fit
}

type candidate struct {
	Binding         map[string]int64 `json:"binding"`
	Why             string           `json:"why"`
	ArenaBytes      int64            `json:"arena_bytes"`
	LowerBoundBytes int64            `json:"lower_bound_bytes"`
	Worst           bool             `json:"worst"`
}

type peakStep struct {
	Step            int          `json:"step"`
	Node            string       `json:"node"`
	Op              string       `json:"op"`
	LiveBytes       int64        `json:"live_bytes"`
	ActivationBytes int64        `json:"activation_bytes"`
	WorkspaceBytes  int64        `json:"workspace_bytes"`
	OutputBytes     int64        `json:"output_bytes"`
	LiveBuffers     int          `json:"live_buffers"`
	Buffers         []liveBuffer `json:"buffers"`
}

type liveBuffer struct {
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Node        string   `json:"node"`
	Op          string   `json:"op"`
	Values      []string `json:"values"`
	SizeBytes   int64    `json:"size_bytes"`
	OffsetBytes int64    `json:"offset_bytes"`
	FirstStep   int      `json:"first_step"`
	EndStep     int      `json:"end_step"`
}

type workspace struct {
	Node       string `json:"node"`
	Step       int    `json:"step"`
	Op         string `json:"op"`
	Tactic     string `json:"tactic"`
	BoundBytes int64  `json:"bound_bytes"`
	WorstBytes int64  `json:"worst_bytes"` // R at the worst binding
}

func runReport(c *cli.Context, s Streams) error {
	if err := noArgs(c); err != nil {
		return err
	}
	form, err := format(c)
	if err != nil {
		return err
	}
	top := c.Int("top")
	if top < 0 {
		return usagef("--top %d: want 0 (all) or more", top)
	}
	limit, haveBudget, err := budget(c)
	if err != nil {
		return err
	}
	if path := c.String("svg"); path != "" {
		if err := checkOutput(path); err != nil {
			return err
		}
	}
	var sweep []capPoint
	if c.IsSet("cap-sweep") {
		if sweep, err = parseCapSweep(c.String("cap-sweep")); err != nil {
			return err
		}
	}
	opts, err := options(c)
	if err != nil {
		return err
	}
	m, err := loadModel(c)
	if err != nil {
		return err
	}
	defer m.close()
	env, defaulted, err := envelope(c, m)
	if err != nil {
		return err
	}
	ep, err := engine.PlanEnvelope(c.Context, m.Model, env, opts)
	if err != nil {
		return err
	}
	r := buildReport(m, env, defaulted, opts, ep, top)
	r.CommBytes = m.commReserve()
	r.TotalBytes += r.CommBytes
	r.Fusion = fusionSection(c.Context, m, env, opts, top)
	r.ConvTime = recordedConvTime(ep.Worst)
	if sweep != nil {
		if r.CapSweep, err = capSweep(c.Context, m, env, opts, sweep); err != nil {
			return err
		}
	}
	if haveBudget {
		r.Budget = &budgetVerdict{BudgetBytes: limit, Fits: r.TotalBytes <= limit, MarginBytes: limit - r.TotalBytes}
	}
	if path := c.String("svg"); path != "" {
		if err := writeSVG(path, m, env, ep); err != nil {
			return err
		}
	}
	if form == "json" {
		err = writeJSON(s.Stdout, r)
	} else {
		err = writeReportTable(s.Stdout, r)
		if err == nil && r.CapSweep != nil {
			err = writeCapSweep(s.Stdout, r.CapSweep)
		}
		if err == nil && c.Bool("explain-fusion") {
			err = writeFusionExplanation(s.Stdout, r.Fusion)
		}
	}
	if err != nil {
		return err
	}
	if r.Budget != nil && !r.Budget.Fits {
		return &fitError{fmt.Sprintf("does not fit: %s (weights %s + arena %s at %s) exceeds the budget %s by %s",
			bytesize.Format(r.TotalBytes), bytesize.Format(r.WeightsBytes), bytesize.Format(r.ArenaBytes),
			engine.Binding(r.WorstBinding), bytesize.Format(limit), bytesize.Format(-r.Budget.MarginBytes))}
	}
	return nil
}

// buildReport reads everything from the engine's plan: the arena is ep.ArenaBytes, which is
// what the runner reserves. Nothing here computes a size.
func buildReport(m *model, env engine.Envelope, defaulted []string, opts engine.Options, ep *engine.EnvelopePlan, top int) *report {
	r := &report{
		Model:               m.info(),
		Envelope:            envelopeInfo(env),
		DefaultDims:         append([]string{}, defaulted...),
		Backend:             opts.Target.Backend,
		Target:              opts.Target.String(),
		target:              opts.Target,
		Workers:             opts.Target.Workers,
		WeightsBytes:        ep.WeightBytes,
		DeviceWeightsBytes:  ep.DeviceWeightBytes,
		ArenaBytes:          ep.ArenaBytes,
		WorkspaceBoundBytes: ep.WorkspaceBound(),
		InPlace:             !opts.NoInPlace,
		InPlaceOutputs:      ep.Worst.Lifetimes.InPlace,
		InPlaceBytes:        ep.Worst.InPlaceBytes(),
		WithinPlan:          ep.Worst.WithinPlan,
		TotalBytes:          ep.TotalBytes(),
		WorstBinding:        ep.Worst.Binding.Dims,
		DrivingDim:          ep.DrivingDim,
		DrivingSavingsBytes: ep.DrivingSavings,
		WorkspaceNodes:      len(ep.Bounds),
		Candidates:          []candidate{},
		Workspaces:          []workspace{},
	}
	worst := engine.Binding(ep.Worst.Binding.Dims).String()
	for _, cd := range ep.Candidates {
		// No plan of the envelope needs less than any candidate's lower bound.
		r.ArenaLowerBoundBytes = max(r.ArenaLowerBoundBytes, cd.LowerBound)
		r.Candidates = append(r.Candidates, candidate{
			Binding: cd.Binding, Why: cd.Why, ArenaBytes: cd.ArenaBytes, LowerBoundBytes: cd.LowerBound,
			Worst: cd.Binding.String() == worst,
		})
	}
	for i, b := range ep.Bounds {
		if top > 0 && i >= top {
			break
		}
		r.Workspaces = append(r.Workspaces, workspace{
			Node: planview.NodeLabel(b.Node), Step: ep.Worst.Lifetimes.Step(b.Node), Op: opName(b.Node), Tactic: b.Bound.Tactic, BoundBytes: b.Bound.Bytes,
			WorstBytes: ep.Worst.Steps[b.Node.Index].Workspace,
		})
	}
	r.PeakStep = peakOf(ep, top)
	return r
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// size is a human size with the exact bytes, for the headline figures.
// describeTarget words a CUDA target for the table, with sizes as people read them
// ("139.80 GiB", not the exact "146591680KiB" that --target and the JSON's target keep).
func describeTarget(t kernels.Target) string {
	s := fmt.Sprintf("%s, %d SMs, %s shared memory per block", t.Arch, t.SMs, bytesize.Format(t.SharedMemPerBlock))
	if t.Memory > 0 {
		s += ", " + bytesize.Format(t.Memory) + " memory"
	}
	return s
}

func size(n int64) string { return fmt.Sprintf("%s (%d bytes)", bytesize.Format(n), n) }

func writeReportTable(w io.Writer, r *report) error {
	tw := newTable(w)
	env := make(engine.Envelope, len(r.Envelope))
	for n, x := range r.Envelope {
		env[n] = engine.Range{Lo: x.Lo, Hi: x.Hi}
	}
	dims := env.String()
	if dims == "" {
		dims = "none"
	}
	if len(r.DefaultDims) > 0 {
		dims += fmt.Sprintf(" (%s: the bundled model's defaults; set with --dim)", strings.Join(r.DefaultDims, ", "))
	}
	tw.row("model\t%s\n", describeInfo(r.Model))
	tw.row("dims\t%s\n", dims)
	if r.Backend == kernels.BackendCUDA {
		tw.row("target\t%s\n", describeTarget(r.target))
	} else {
		tw.row("backend\t%s, %d workers\n", r.Backend, r.Workers)
	}
	tw.row("\t\n")
	tw.row("weights\t%s\n", size(r.WeightsBytes))
	if r.DeviceWeightsBytes > 0 {
		tw.row("  on the device\t%s\tthe weights kernels read, resident once (inputs and host values are in the arena)\n", size(r.DeviceWeightsBytes))
	}
	tw.row("arena\t%s\tactivations + workspaces at %s: what the runner reserves\n", size(r.ArenaBytes), engine.Binding(r.WorstBinding))
	tw.row("  lower bound\t%s\t%s\n", size(r.ArenaLowerBoundBytes), overLowerBound(r.ArenaBytes, r.ArenaLowerBoundBytes))
	switch {
	case !r.InPlace:
		tw.row("  in place\toff\t--no-inplace: every output in bytes of its own\n")
	case r.InPlaceOutputs > 0:
		tw.row("  in place\t%d outputs, %s\twritten over an input's bytes at the worst binding (--no-inplace: none)\n", r.InPlaceOutputs, bytesize.Format(r.InPlaceBytes))
	}
	if r.WithinPlan > 0 {
		tw.row("  within plan\t%d workspaces\tchoices (an algorithm's, a library's cap) given the bytes free at their step, never raising the arena (--full-workspace: each at its bound)\n", r.WithinPlan)
	}
	if t := r.Model.Config; t != nil && t.TP != nil {
		commRow(tw, t.TP)
		tw.row("total\t%s\tweights + arena + all-reduce buffers, per rank\n", size(r.TotalBytes))
	} else {
		tw.row("total\t%s\tweights + arena\n", size(r.TotalBytes))
	}
	if b := r.Budget; b != nil {
		verdict := fmt.Sprintf("FITS, %s to spare", bytesize.Format(b.MarginBytes))
		if !b.Fits {
			verdict = fmt.Sprintf("DOES NOT FIT, %s over", bytesize.Format(-b.MarginBytes))
		}
		tw.row("budget\t%s\t%s\n", size(b.BudgetBytes), verdict)
	}
	fusionRows(tw, r)
	if r.ConvTime != nil {
		v, note := describeConvTime(r.ConvTime)
		tw.row("conv time\t%s\t%s\n", v, note)
	}
	tw.row("\t\n")
	tw.row("worst binding\t%s\n", engine.Binding(r.WorstBinding))
	switch {
	case r.DrivingDim != "":
		tw.row("driving dim\t%s\t%s=%d instead of %d makes the arena %s smaller\n", r.DrivingDim, r.DrivingDim,
			r.Envelope[r.DrivingDim].Lo, r.WorstBinding[r.DrivingDim], bytesize.Format(r.DrivingSavingsBytes))
	case len(r.Candidates) == 1:
		tw.row("driving dim\tnone\tone binding\n")
	default:
		tw.row("driving dim\tnone\tno dim's minimum shrinks the arena\n")
	}
	if err := tw.flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\ncandidates planned (%d)\n", len(r.Candidates))
	tw = newTable(w)
	tw.row("  BINDING\tWHY\tARENA\tLOWER BOUND\t\n")
	for _, cd := range r.Candidates {
		mark := ""
		if cd.Worst {
			mark = "<- worst"
		}
		tw.row("  %s\t%s\t%s\t%s\t%s\n", engine.Binding(cd.Binding), cd.Why, bytesize.Format(cd.ArenaBytes), bytesize.Format(cd.LowerBoundBytes), mark)
	}
	if err := tw.flush(); err != nil {
		return err
	}

	if p := r.PeakStep; p != nil {
		parts := []string{"activations " + bytesize.Format(p.ActivationBytes)}
		if p.WorkspaceBytes > 0 {
			parts = append(parts, "workspaces "+bytesize.Format(p.WorkspaceBytes))
		}
		if p.OutputBytes > 0 {
			parts = append(parts, "outputs "+bytesize.Format(p.OutputBytes))
		}
		fmt.Fprintf(w, "\npeak step %d of the worst binding: node %s (%s), %s live = %s\n",
			p.Step, p.Node, p.Op, bytesize.Format(p.LiveBytes), strings.Join(parts, " + "))
		fmt.Fprintf(w, "largest live buffers (%s)\n", shown(len(p.Buffers), p.LiveBuffers))
		tw = newTable(w)
		tw.row("  BUFFER\tKIND\tSIZE\tSTEPS\tDEFINED BY\n")
		for _, b := range p.Buffers {
			by := "a graph input" // no node defines it
			if b.Node != "" {
				by = fmt.Sprintf("%s (%s)", b.Node, b.Op)
			}
			tw.row("  %s\t%s\t%s\t[%d, %d)\t%s\n", b.ID, b.Kind, bytesize.Format(b.SizeBytes), b.FirstStep, b.EndStep, by)
		}
		if err := tw.flush(); err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "\nworkspaces: W over the dims, R at the worst binding (%s)\n", shown(len(r.Workspaces), r.WorkspaceNodes))
	if len(r.Workspaces) == 0 {
		fmt.Fprintf(w, "  no kernel of this model asks for workspace\n")
		return nil
	}
	tw = newTable(w)
	tw.row("  NODE\tOP\tTACTIC\tW\tR AT WORST\n")
	for _, ws := range r.Workspaces {
		tw.row("  %s\t%s\t%s\t%s\t%s\n", ws.Node, ws.Op, ws.Tactic, bytesize.Format(ws.BoundBytes), bytesize.Format(ws.WorstBytes))
	}
	tw.row("  total (sum of W, %d node%s)\t\t\t%s\t\n", r.WorkspaceNodes, plural(r.WorkspaceNodes), bytesize.Format(r.WorkspaceBoundBytes))
	return tw.flush()
}

func describeInfo(m modelInfo) string {
	dims := "no dims"
	if len(m.Dims) > 0 {
		dims = "dims " + strings.Join(m.Dims, ", ")
	}
	if c := m.Config; c != nil {
		tp := ""
		if t := c.TP; t != nil {
			tp = fmt.Sprintf("; one rank of %d (tensor parallel): %d heads, %d kv heads (%s), intermediate %d, vocab %d",
				t.Ranks, t.Heads, t.KVHeads, replicas(t.KVReplicas), t.Intermediate, t.Vocab)
		}
		return fmt.Sprintf("%s (%s, built from the config: %d layers, hidden %d, %d heads, %d kv heads x %d, vocab %d, %s%s; %d nodes, %s)",
			m.Name, c.ModelType, c.Layers, c.Hidden, c.Heads, c.KVHeads, c.HeadDim, c.Vocab, c.DType, tp, m.Nodes, dims)
	}
	return fmt.Sprintf("%s (%d nodes, %s)", m.Name, m.Nodes, dims)
}

// replicas says how many ranks hold each KV head.
func replicas(n int64) string {
	if n == 1 {
		return "each on one rank"
	}
	return fmt.Sprintf("each replicated on %d ranks", n)
}

// commRow is the table's line for the communicator's buffers under --tp.
func commRow(tw *table, t *tpInfo) {
	tw.row("  all-reduce\t%s\tthe tensor-parallel communicator's buffers per rank, a declared constant (NCCL's, not planned); %d all-reduces a forward, in place\n",
		size(t.CommBytes), t.AllReduces)
}

func shown(n, of int) string {
	if n == of {
		return fmt.Sprintf("all %d", of)
	}
	return fmt.Sprintf("top %d of %d; see --top", n, of)
}

func overLowerBound(peak, lb int64) string {
	switch {
	case lb <= 0:
		return ""
	case peak == lb:
		return "the plan meets it: optimal"
	}
	return fmt.Sprintf("the plan is %.2f%% above it", 100*float64(peak-lb)/float64(lb))
}

// writeSVG draws the worst binding's plan into path (writeOutput): atomically, through a
// temporary file in the same directory, synced and renamed over path, so a failed write leaves
// no partial file; through path itself if it is a character device or a FIFO.
func writeSVG(path string, m *model, env engine.Envelope, ep *engine.EnvelopePlan) error {
	title := fmt.Sprintf("%s at %s, the worst binding of %s", m.name, engine.Binding(ep.Worst.Binding.Dims), env)
	return writeOutput(path, func(w io.Writer) error { return svgplan.Write(w, ep.Worst, svgplan.Options{Title: title}) })
}
