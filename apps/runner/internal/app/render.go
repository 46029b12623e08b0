package app

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"

	"carve.dev/apps/runner/internal/run"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/kernels"
	"github.com/x448/float16"
)

// tensorInfo describes an input or output in reports.
type tensorInfo struct {
	Name     string   `json:"name"`
	DType    string   `json:"dtype"`
	Shape    []int64  `json:"shape"`
	Source   string   `json:"source,omitempty"` // inputs: the file or "random (seed N)"; outputs: the file written
	Min      *float64 `json:"min,omitempty"`    // over the elements, for numeric dtypes with elements
	Max      *float64 `json:"max,omitempty"`
	Mean     *float64 `json:"mean,omitempty"`
	NaNs     int64    `json:"nans,omitempty"`
	Checksum string   `json:"checksum"` // FNV-1a 64 of the bytes, hex: equal bytes, equal checksums
}

func describe(name string, t kernels.Tensor, source string) tensorInfo {
	ti := tensorInfo{Name: name, DType: t.DType.String(), Shape: t.Shape, Source: source}
	if ti.Shape == nil {
		ti.Shape = []int64{}
	}
	h := fnv.New64a()
	h.Write(t.Data)
	ti.Checksum = fmt.Sprintf("%016x", h.Sum64())
	at := elementReader(t)
	if at == nil || t.Len() == 0 {
		return ti
	}
	lo, hi, sum, n := math.Inf(1), math.Inf(-1), 0.0, 0
	for i := range t.Len() {
		x := at(i)
		if math.IsNaN(x) {
			ti.NaNs++
			continue
		}
		lo, hi, sum, n = min(lo, x), max(hi, x), sum+x, n+1
	}
	if n > 0 {
		mean := sum / float64(n)
		ti.Min, ti.Max, ti.Mean = &lo, &hi, &mean
	}
	return ti
}

// elementReader returns a function reading element i of t as a float64, or nil for dtypes
// without numbers.
func elementReader(t kernels.Tensor) func(i int) float64 {
	switch t.DType {
	case graph.Float32:
		s := t.Float32s()
		return func(i int) float64 { return float64(s[i]) }
	case graph.Float64:
		s := t.Float64s()
		return func(i int) float64 { return s[i] }
	case graph.Float16:
		s := t.Uint16s()
		return func(i int) float64 { return float64(float16.Frombits(s[i]).Float32()) }
	case graph.BFloat16:
		s := t.Uint16s()
		return func(i int) float64 { return float64(math.Float32frombits(uint32(s[i]) << 16)) }
	case graph.Int64:
		s := t.Int64s()
		return func(i int) float64 { return float64(s[i]) }
	case graph.Int32:
		s := t.Int32s()
		return func(i int) float64 { return float64(s[i]) }
	case graph.Int16:
		s := kernels.ViewAs[int16](t.Data)
		return func(i int) float64 { return float64(s[i]) }
	case graph.Int8:
		return func(i int) float64 { return float64(int8(t.Data[i])) }
	case graph.Uint8, graph.Bool:
		return func(i int) float64 { return float64(t.Data[i]) }
	case graph.Uint16:
		s := t.Uint16s()
		return func(i int) float64 { return float64(s[i]) }
	case graph.Uint32:
		s := kernels.ViewAs[uint32](t.Data)
		return func(i int) float64 { return float64(s[i]) }
	case graph.Uint64:
		s := kernels.ViewAs[uint64](t.Data)
		return func(i int) float64 { return float64(s[i]) }
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func workers(cfg run.Config) int {
	if cfg.Workers > 0 {
		return cfg.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// tpLine says what each rank of a --tp split holds: rank 0's share (every rank's is the same
// size), and the collectives of a run.
func tpLine(r *run.Runner) string {
	k := r.Ranks[0]
	return fmt.Sprintf("tensor parallel over %d ranks, a device each: %d of %d query heads, %d KV head(s) (on %d rank(s) each), %d vocabulary rows per rank; "+
		"%d all-reduces and %d all-gather per run; the weights below are one rank's", k.Ranks, k.Heads.Q, k.Heads.Q*int64(k.Ranks), k.Heads.KV,
		k.Heads.KVReplicas, k.Vocab, k.AllReduces, k.AllGathers)
}

// printLoad prints the model and what was reserved, before any run.
func printLoad(w io.Writer, r *run.Runner, files map[string]string) {
	rs := r.Reservation
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "model\t%s\n", r.ModelName)
	fmt.Fprintf(tw, "fusion\t%s\n", fusionLine(r))
	fmt.Fprintf(tw, "device\t%s, %d workers, policy %s\n", strings.Join(rs.Devices, " + "), workers(r.Config), policyName(r))
	if len(r.Ranks) > 0 {
		fmt.Fprintf(tw, "split\t%s\n", tpLine(r))
	}
	fmt.Fprintf(tw, "envelope\t%s\n", rs.Envelope)
	perDevice := ""
	if len(rs.Devices) > 1 {
		perDevice = fmt.Sprintf(" on each of %d devices", len(rs.Devices))
	}
	fmt.Fprintf(tw, "reserved\t%s arena per session x %d = %s%s, before any run (worst binding %s of %d planned)\n",
		bytesize.Format(rs.ArenaBytes), rs.Sessions, bytesize.Format(rs.TotalArenaBytes), perDevice,
		engine.Binding(rs.WorstBinding), rs.Candidates)
	if rs.DeviceWeightBytes > 0 {
		fmt.Fprintf(tw, "\tworkspace bound W %s (sum over nodes); weights %s, resident once per device (%s reserved), outside the arenas\n",
			bytesize.Format(rs.WorkspaceBound), bytesize.Format(rs.WeightBytes), bytesize.Format(rs.DeviceWeightBytes))
	} else {
		fmt.Fprintf(tw, "\tworkspace bound W %s (sum over nodes); weights %s, mapped from the model, outside the arenas\n",
			bytesize.Format(rs.WorkspaceBound), bytesize.Format(rs.WeightBytes))
	}
	if ts := r.Stats().Tight; rs.Tight && len(ts.Kernels) > 0 {
		fmt.Fprintf(tw, "\treserving the tight plan (--tight): %s arena per session instead of the default %s; %d kernel workspaces at their measured need (--stats: W, C, R)\n",
			bytesize.Format(rs.ArenaBytes), bytesize.Format(rs.DefaultArenaBytes), len(ts.Kernels))
	} else if rs.Tight {
		fmt.Fprintf(tw, "\t--tight: no kernel workspace here is below its declared size; the default plan is reserved\n")
	}
	avail := "device free memory"
	if rs.LimitBytes > 0 && rs.LimitBytes == rs.AvailableBytes {
		avail = "--limit"
	}
	fmt.Fprintf(tw, "\tavailable %s (%s)\n", bytesize.Format(rs.AvailableBytes), avail)
	src := fmt.Sprintf("random inputs, seed %d", r.Config.Seed)
	if len(files) > 0 {
		src = "inputs from files"
	}
	fmt.Fprintf(tw, "binding\t%s (%s)\n", r.Binding, src)
	tw.Flush()
}

// fusionLine says what was fused, by kind.
func fusionLine(r *run.Runner) string {
	if r.Fusion == nil {
		return "off (--no-fuse): the graph as exported"
	}
	var kinds []string
	for _, k := range rewrite.Kinds() {
		if n := r.Reservation.Fused[string(k)]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(kinds) == 0 {
		return "nothing to fuse"
	}
	return fmt.Sprintf("%s (%d nodes as exported, %d run)", strings.Join(kinds, ", "), r.Fusion.NodesBefore, r.Fusion.NodesAfter)
}

func policyName(r *run.Runner) string {
	return strings.ToLower(r.Config.Policy.String())
}

// printRun prints the outputs and the runs.
func printRun(w io.Writer, rep *runReport) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OUTPUT\tDTYPE\tSHAPE\tMIN\tMAX\tMEAN\tFILE")
	for _, o := range rep.Outputs {
		file := o.Source
		if file == "" {
			file = "-"
		}
		lo, hi, mean := num(o.Min), num(o.Max), num(o.Mean)
		if o.NaNs > 0 && o.Min == nil {
			lo, hi, mean = "NaN", "NaN", "NaN" // every element: no number to show
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%s\t%s\n", o.Name, o.DType, o.Shape, lo, hi, mean, file)
	}
	tw.Flush()
	for _, o := range rep.Outputs {
		if o.NaNs == 0 {
			continue
		}
		n := int64(1)
		for _, d := range o.Shape {
			n *= d
		}
		if o.NaNs == n {
			fmt.Fprintf(w, "%s: all %d elements are NaN\n", o.Name, n)
		} else {
			fmt.Fprintf(w, "%s: %d of %d elements are NaN; MIN, MAX and MEAN are of the other %d\n", o.Name, o.NaNs, n, n-o.NaNs)
		}
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	rs := rep.Runs
	line := fmt.Sprintf("%d session(s) x %d run(s): first run %.3f ms (binds the pattern's plan)", rs.Sessions, rs.Repeat, rs.FirstMs)
	if rs.Repeat > 1 {
		line += fmt.Sprintf(", later runs mean %.3f ms, max %.3f ms", rs.MeanMs, rs.MaxMs)
	}
	fmt.Fprintf(tw, "runs\t%s\n", line)
	if rs.Repeat > 1 {
		s := rep.Steady
		fmt.Fprintf(tw, "steady\t%d device mallocs, %d device frees, %d allocator allocations after the first run\n",
			s.DeviceMallocs, s.DeviceFrees, s.Allocs)
	}
	tw.Flush()
}

func num(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.4g", *p)
}

// printStats prints the statistics as a table.
func printStats(w io.Writer, st run.Stats) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	a := st.Allocator
	e := st.Engine
	d := st.Device
	rows := [][2]string{
		{"allocator reserves (arenas)", fmt.Sprint(a.NumReserves)},
		{"allocator reserved bytes", bytesize.Format(a.ReservedBytes)},
		{"allocator bytes in use (peak)", fmt.Sprintf("%s (%s)", bytesize.Format(a.BytesInUse), bytesize.Format(a.MaxBytesInUse))},
		{"allocator allocations (current/peak/total)", fmt.Sprintf("%d/%d/%d", a.Allocations.Current, a.Allocations.Peak, a.Allocations.Allocated)},
		{"allocator segments (current/peak)", fmt.Sprintf("%d/%d", a.Segments.Current, a.Segments.Peak)},
		{"allocator device mallocs/frees", fmt.Sprintf("%d/%d", a.DeviceMallocCalls, a.DeviceFreeCalls)},
		{"engine patterns (hits/misses/cached)", fmt.Sprintf("%d/%d/%d", e.Patterns.Hits, e.Patterns.Misses, e.Patterns.Len)},
		{"engine programs (hits/misses/evicted/cached)", fmt.Sprintf("%d/%d/%d/%d", e.Programs.Hits, e.Programs.Misses, e.Programs.Evictions, e.Programs.Len)},
		{"engine graphs captured/replayed", fmt.Sprintf("%d/%d", e.GraphCaptures, e.GraphReplays)},
		{"engine dynamic workspaces (bytes)", fmt.Sprintf("%d (%s)", e.DynamicWorkspaces, bytesize.Format(e.DynamicWorkspaceBytes))},
		{"device weights resident", bytesize.Format(e.ResidentWeightBytes)},
		{"device uploads (bytes)", fmt.Sprintf("%d (%s)", e.Uploads, bytesize.Format(e.UploadBytes))},
		{"device downloads (bytes)", fmt.Sprintf("%d (%s)", e.Downloads, bytesize.Format(e.DownloadBytes))},
		{"device malloc/free calls", fmt.Sprintf("%d/%d", d.Malloc, d.Free)},
		{"device streams created/destroyed", fmt.Sprintf("%d/%d", d.NewStream, d.DestroyStream)},
		{"device launches", fmt.Sprint(d.Launch)},
	}
	fmt.Fprintln(tw, "STATISTIC\tVALUE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	tw.Flush()
	printTight(w, st.Tight)
}

// tightRows is how many kernels the table shows; --stats json lists them all.
const tightRows = 12

// printTight prints the kernels the tight plan lowers, with W, C and R, and what it saves; nothing
// where no kernel's workspace is a cap (cpu, sim).
func printTight(w io.Writer, ts run.TightStats) {
	switch {
	case ts.Error != "":
		fmt.Fprintf(w, "\ntight plan: not made: %s\n", ts.Error)
		return
	case ts.Measured == 0:
		return
	case len(ts.Kernels) == 0:
		fmt.Fprintf(w, "\ntight plan: the device needs the whole cap of all %d measured kernel workspaces; nothing to save\n", ts.Measured)
		return
	}
	fmt.Fprintf(w, "\nworkspaces below their cap (%d of %d measured): W declared over the envelope (all parts), C held by the default plan for PART, R needed of it on this device\n",
		len(ts.Kernels), ts.Measured)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tOP\tPART\tW\tC\tR\tR AT")
	for i, k := range ts.Kernels {
		if i == tightRows {
			fmt.Fprintf(tw, "... %d more (--stats json lists all)\n", len(ts.Kernels)-tightRows)
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Node, k.Op, k.Part, bytesize.Format(k.W), bytesize.Format(k.C), bytesize.Format(k.R), k.At)
	}
	tw.Flush()
	switch {
	case ts.SavedBytes == 0:
		fmt.Fprintf(w, "a tight reservation would save nothing: its arena (%s) is no smaller than the default plan's (%s)\n",
			bytesize.Format(ts.ArenaBytes), bytesize.Format(ts.DefaultArenaBytes))
	case ts.Reserved:
		fmt.Fprintf(w, "reserving the tight plan (--tight): %s saved per session (arena %s instead of %s), %s in all\n",
			bytesize.Format(ts.SavedBytes), bytesize.Format(ts.ArenaBytes), bytesize.Format(ts.DefaultArenaBytes), bytesize.Format(ts.TotalSavedBytes))
	default:
		fmt.Fprintf(w, "a tight reservation would save %s per session (arena %s instead of %s), %s in all: --tight reserves it\n",
			bytesize.Format(ts.SavedBytes), bytesize.Format(ts.ArenaBytes), bytesize.Format(ts.DefaultArenaBytes), bytesize.Format(ts.TotalSavedBytes))
	}
}
