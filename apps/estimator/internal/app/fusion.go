package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"carve.dev/apps/estimator/internal/planview"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/planner"
)

// fusionReport is the "fusion" object of report's JSON: what was fused, and the arena of the
// graph as exported, for comparison. README.md documents it.
type fusionReport struct {
	Enabled bool `json:"enabled"` // false with --no-fuse
	// FromConfig: the graph was built fused from --config (package arch); there is no export.
	FromConfig    bool           `json:"from_config,omitempty"`
	NodesExported int            `json:"nodes_exported"`
	NodesPlanned  int            `json:"nodes_planned"`
	Counts        map[string]int `json:"counts"` // fusions by kind
	// ExportedArenaBytes is the arena of the graph as exported over the same dims (0 with
	// --no-fuse, when it is the report's own arena); ExportedError says why it could not be
	// planned, if so.
	ExportedArenaBytes int64        `json:"exported_arena_bytes"`
	ExportedPeakStep   *peakStep    `json:"exported_peak_step,omitempty"`
	ExportedError      string       `json:"exported_error,omitempty"`
	Fusions            []fusionItem `json:"fusions"`
	Unfused            []unfused    `json:"unfused"`
}

type fusionItem struct {
	Kind     string   `json:"kind"`
	Node     string   `json:"node"`
	Op       string   `json:"op"`
	Output   string   `json:"output"`
	Replaced []string `json:"replaced"`
	Detail   string   `json:"detail"`
}

type unfused struct {
	Kind   string `json:"kind"`
	Node   string `json:"node"`
	Op     string `json:"op"`
	Reason string `json:"reason"`
}

// fusionSection describes m's fusion and plans the graph as exported over env, when it differs
// from the planned one.
func fusionSection(ctx context.Context, m *model, env engine.Envelope, opts engine.Options, top int) *fusionReport {
	fr := &fusionReport{Enabled: m.fusion != nil || m.config != nil, FromConfig: m.config != nil, NodesExported: len(m.exported.Nodes), NodesPlanned: len(m.Nodes),
		Counts: map[string]int{}, Fusions: []fusionItem{}, Unfused: []unfused{}}
	if m.fusion == nil {
		return fr
	}
	for _, f := range m.fusion.Fused {
		fr.Counts[string(f.Kind)]++
		fr.Fusions = append(fr.Fusions, fusionItem{Kind: string(f.Kind), Node: f.Node, Op: f.Op, Output: f.Output, Replaced: f.Replaced, Detail: f.Detail})
	}
	for _, u := range m.fusion.Unfused {
		fr.Unfused = append(fr.Unfused, unfused{Kind: string(u.Kind), Node: u.Node, Op: u.Op, Reason: u.Reason})
	}
	if m.Model == m.exported {
		return fr
	}
	ep, err := engine.PlanEnvelope(ctx, m.exported, env, opts)
	if err != nil {
		fr.ExportedError = err.Error()
		return fr
	}
	fr.ExportedArenaBytes = ep.ArenaBytes
	fr.ExportedPeakStep = peakOf(ep, top)
	return fr
}

// peakOf describes the peak step of ep's worst binding, nil if it has none.
func peakOf(ep *engine.EnvelopePlan, top int) *peakStep {
	pk := planview.PeakStep(ep.Worst)
	if pk.Step < 0 {
		return nil
	}
	ps := &peakStep{
		Step: pk.Step, Node: planview.NodeLabel(pk.Node), Op: opName(pk.Node), LiveBytes: pk.LiveBytes,
		ActivationBytes: pk.ByKind[planner.Activation], WorkspaceBytes: pk.ByKind[planner.Workspace],
		OutputBytes: pk.ByKind[planner.Output], LiveBuffers: len(pk.Buffers), Buffers: []liveBuffer{},
	}
	for i, b := range pk.Buffers {
		if top > 0 && i >= top {
			break
		}
		ps.Buffers = append(ps.Buffers, liveBuffer{
			ID: b.ID, Kind: b.Kind.String(), Node: planview.NodeLabel(b.Node), Op: opName(b.Node), Values: b.Values,
			SizeBytes: b.Size, OffsetBytes: b.Offset, FirstStep: b.Start, EndStep: b.End,
		})
	}
	return ps
}

// fusionRows are the report table's lines on fusion, after the headline figures.
func fusionRows(tw *table, r *report) {
	f := r.Fusion
	if f == nil {
		return
	}
	if f.FromConfig {
		tw.row("fusion\tbuilt fused\tfrom --config: the canonical fused graph of the architecture, %d nodes, weights by shape only\n", f.NodesPlanned)
		return
	}
	if !f.Enabled {
		tw.row("fusion\toff\t--no-fuse: the graph as exported, %d nodes\n", f.NodesExported)
		return
	}
	var kinds []string
	for _, k := range rewrite.Kinds() {
		if n := f.Counts[string(k)]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	what := "nothing fused"
	if len(kinds) > 0 {
		what = strings.Join(kinds, ", ")
	}
	tw.row("fusion\t%s\t%d nodes as exported, %d planned; --explain-fusion says why, --no-fuse turns it off\n", what, f.NodesExported, f.NodesPlanned)
	switch {
	case f.ExportedError != "":
		tw.row("  as exported\tnot planned\t%s\n", f.ExportedError)
	case f.ExportedArenaBytes > 0:
		ratio := "the same"
		if r.ArenaBytes > 0 && f.ExportedArenaBytes != r.ArenaBytes {
			ratio = fmt.Sprintf("%.2fx the fused arena", float64(f.ExportedArenaBytes)/float64(r.ArenaBytes))
		}
		peak := ""
		if p := f.ExportedPeakStep; p != nil {
			peak = fmt.Sprintf(", peak at step %d, %s (%s)", p.Step, p.Node, p.Op)
		}
		tw.row("  as exported\t%s\tarena, %s%s\n", size(f.ExportedArenaBytes), ratio, peak)
	}
}

// writeFusionExplanation lists every fusion and every candidate left as exported.
func writeFusionExplanation(w io.Writer, f *fusionReport) error {
	if f.FromConfig {
		_, err := fmt.Fprintf(w, "\nthe graph was built fused from --config: no export, nothing fused or left as exported\n")
		return err
	}
	if !f.Enabled {
		_, err := fmt.Fprintf(w, "\nfusion is off (--no-fuse): nothing to explain\n")
		return err
	}
	fmt.Fprintf(w, "\nfusions (%d)\n", len(f.Fusions))
	tw := newTable(w)
	if len(f.Fusions) > 0 {
		tw.row("  KIND\tFUSED NODE\tOP\tREPLACES\tDETAIL\n")
	}
	for _, x := range f.Fusions {
		tw.row("  %s\t%s\t%s\t%d nodes\t%s\n", x.Kind, x.Node, x.Op, len(x.Replaced), x.Detail)
	}
	if err := tw.flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ncandidates left as exported (%d)\n", len(f.Unfused))
	tw = newTable(w)
	if len(f.Unfused) > 0 {
		tw.row("  KIND\tNODE\tOP\tWHY\n")
	}
	for _, u := range f.Unfused {
		tw.row("  %s\t%s\t%s\t%s\n", u.Kind, u.Node, u.Op, u.Reason)
	}
	return tw.flush()
}
