package app

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"carve.dev/apps/runner/internal/run"
	"carve.dev/libs/engine"
)

// profileReport is --profile's summary of one step: its kernels' device time by category, by op
// type and by node, against the step's measured time.
type profileReport struct {
	Steps    int     `json:"steps"`     // runs profiled
	KernelMs float64 `json:"kernel_ms"` // device time of one step's kernels, each timed alone
	// FloorMs is an empty kernel timed the same way: what each kernel's time holds of the
	// device starting it. NetMs is KernelMs less a floor per kernel.
	FloorMs    float64       `json:"floor_ms"`
	NetMs      float64       `json:"net_ms"`
	Kernels    float64       `json:"kernels"`     // kernels per step
	StepMs     float64       `json:"step_ms"`     // the timed generation's p50 step
	GapMs      float64       `json:"gap_ms"`      // StepMs - NetMs: launches, copies and the host
	Categories []profileLine `json:"categories"`  // the most time first
	Ops        []profileLine `json:"ops"`         // the most time first
	Top        []profileLine `json:"top_kernels"` // the ten nodes of most time
}

type profileLine struct {
	Name    string  `json:"name"`
	Ms      float64 `json:"ms_per_step"`
	NetMs   float64 `json:"net_ms_per_step"`
	Kernels float64 `json:"kernels_per_step"`
	Share   float64 `json:"share"` // of the step's NetMs
}

func newProfileReport(p *engine.Profile, stepMs float64) *profileReport {
	r := &profileReport{Steps: p.Runs, StepMs: stepMs}
	if p.Runs == 0 {
		return r
	}
	n := float64(p.Runs)
	total, launches := p.TotalMs(), 0
	for _, k := range p.Kernels {
		launches += k.Launches
	}
	net := p.NetMs(total, launches)
	r.KernelMs, r.FloorMs, r.NetMs, r.GapMs = total/n, p.Floor(), net/n, stepMs-net/n
	line := func(name string, launches int, ms float64) profileLine {
		l := profileLine{Name: name, Ms: ms / n, NetMs: p.NetMs(ms, launches) / n, Kernels: float64(launches) / n}
		if net > 0 {
			l.Share = p.NetMs(ms, launches) / net
		}
		return l
	}
	cats := map[string]int{}
	var catMs []float64
	var catLaunches []int
	var catNames []string
	for _, op := range p.ByOp() {
		r.Kernels += float64(op.Launches) / n
		r.Ops = append(r.Ops, line(op.Op, op.Launches, op.Ms))
		c := run.KernelCategory(op.Op)
		i, ok := cats[c]
		if !ok {
			i = len(catNames)
			cats[c] = i
			catNames, catMs, catLaunches = append(catNames, c), append(catMs, 0), append(catLaunches, 0)
		}
		catMs[i] += op.Ms
		catLaunches[i] += op.Launches
	}
	for i, c := range catNames {
		r.Categories = append(r.Categories, line(c, catLaunches[i], catMs[i]))
	}
	slices.SortStableFunc(r.Categories, func(a, b profileLine) int { return compareDesc(a.Ms, b.Ms) })
	ks := slices.Clone(p.Kernels)
	slices.SortStableFunc(ks, func(a, b engine.KernelTime) int { return compareDesc(a.Ms, b.Ms) })
	for _, k := range ks[:min(len(ks), 10)] {
		r.Top = append(r.Top, line(fmt.Sprintf("%s (%s, %s)", k.Node.Name, k.Node.OpType, k.Tactic), k.Launches, k.Ms))
	}
	return r
}

// compareDesc orders the larger first.
func compareDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// printProfile prints --profile's tables for what, one step or run.
func printProfile(w io.Writer, what string, r *profileReport) {
	fmt.Fprintf(w, "\nprofile: the kernels of %s, each timed alone on the device over %d eager runs (ms per run);\n", what, r.Steps)
	fmt.Fprintf(w, "net: less %.1f us per kernel, an empty kernel timed the same way (the device starting it)\n", 1000*r.FloorMs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	table := func(title string, lines []profileLine) {
		fmt.Fprintf(tw, "%s\tms\tnet ms\tkernels\tshare\t\n", title)
		for _, l := range lines {
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.0f\t%.1f%%\t\n", l.Name, l.Ms, l.NetMs, l.Kernels, 100*l.Share)
		}
		fmt.Fprintf(tw, "\t\t\t\t\t\n")
	}
	table("category", r.Categories)
	table("op type", r.Ops)
	table("top kernels", r.Top)
	fmt.Fprintf(tw, "kernels\t%.3f\t%.3f\t%.0f\t100.0%%\t\n", r.KernelMs, r.NetMs, r.Kernels)
	fmt.Fprintf(tw, "p50 (timed runs)\t\t%.3f\t\t\t\n", r.StepMs)
	fmt.Fprintf(tw, "gap (launches, host)\t\t%.3f\t\t\t\n", r.GapMs)
	tw.Flush()
}
