package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/kernels"
)

// convTime is the time of a plan's convolutions on the target's device, from the times recorded
// on such a device and kept with the backend (kernels.RecordedTimer): for each convolution, the
// fastest recorded way within the workspace it declares.
type convTime struct {
	Ms           float64 `json:"ms"`           // summed over the recorded convolutions
	Recorded     int     `json:"recorded"`     // convolutions with a recorded time
	Convolutions int     `json:"convolutions"` // Conv, FusedConv and ConvTranspose nodes
	Device       string  `json:"device,omitempty"`
}

// recordedConvTime is p's convTime, nil without convolutions or off a CUDA target.
func recordedConvTime(p *engine.Planned) *convTime {
	if p.Options.Target.Backend != kernels.BackendCUDA {
		return nil
	}
	var ct convTime
	for _, st := range p.Steps {
		if st.Node == nil || st.Instance == nil {
			continue
		}
		switch st.Node.OpType {
		case "Conv", "FusedConv", "ConvTranspose":
		default:
			continue
		}
		ct.Convolutions++
		if rt, ok := st.Instance.(kernels.RecordedTimer); ok {
			if t, ok := rt.RecordedTime(st.Instance.Recipe()); ok {
				ct.Ms += t.Ms
				ct.Recorded++
				ct.Device = t.Device
			}
		}
	}
	if ct.Convolutions == 0 {
		return nil
	}
	return &ct
}

// describeConvTime words ct for the table.
func describeConvTime(ct *convTime) (value, note string) {
	if ct.Recorded == 0 {
		return "not recorded", fmt.Sprintf("no time recorded for these %d convolutions on a device of this target", ct.Convolutions)
	}
	note = fmt.Sprintf("the fastest way recorded on an %s within each convolution's workspace, %d of %d convolutions", ct.Device, ct.Recorded, ct.Convolutions)
	if ct.Recorded < ct.Convolutions {
		note += " (the others have no recorded time)"
	}
	return fmt.Sprintf("%.2f ms", ct.Ms), note
}

// capPoint is the plan under one workspace cap of --cap-sweep.
type capPoint struct {
	Cap        string    `json:"cap"`       // as given: a size or "none"
	CapBytes   *int64    `json:"cap_bytes"` // nil for none
	ArenaBytes int64     `json:"arena_bytes"`
	ConvTime   *convTime `json:"conv_time"`
	// The same cap with --full-workspace (every workspace that is a choice at its bound, the
	// arena growing for it); absent when the report itself plans full workspaces.
	FullArenaBytes *int64    `json:"full_arena_bytes,omitempty"`
	FullConvTime   *convTime `json:"full_conv_time,omitempty"`
}

// parseCapSweep reads --cap-sweep: sizes and "none", comma-separated.
func parseCapSweep(list string) ([]capPoint, error) {
	var ps []capPoint
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		p := capPoint{Cap: f}
		if f != "none" {
			n, err := bytesize.Parse(f)
			if err != nil {
				return nil, usagef("--cap-sweep: %v (want sizes or none, e.g. 0,8MiB,64MiB,none)", err)
			}
			p.CapBytes = &n
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// capSweep plans m over env under each cap of points.
func capSweep(ctx context.Context, m *model, env engine.Envelope, opts engine.Options, points []capPoint) ([]capPoint, error) {
	for i, p := range points {
		o := opts
		o.Target.WorkspaceCap = nil
		if p.CapBytes != nil {
			o.Target = o.Target.WithWorkspaceCap(*p.CapBytes)
		}
		ep, err := engine.PlanEnvelope(ctx, m.Model, env, o)
		if err != nil {
			return nil, fmt.Errorf("--cap-sweep %s: %w", p.Cap, err)
		}
		points[i].ArenaBytes = ep.ArenaBytes
		points[i].ConvTime = recordedConvTime(ep.Worst)
		if o.FullWorkspace {
			continue
		}
		o.FullWorkspace = true
		if ep, err = engine.PlanEnvelope(ctx, m.Model, env, o); err != nil {
			return nil, fmt.Errorf("--cap-sweep %s with --full-workspace: %w", p.Cap, err)
		}
		points[i].FullArenaBytes = &ep.ArenaBytes
		points[i].FullConvTime = recordedConvTime(ep.Worst)
	}
	return points, nil
}

// writeCapSweep is --cap-sweep's table.
func writeCapSweep(w io.Writer, points []capPoint) error {
	device := ""
	for _, p := range points {
		if p.ConvTime != nil && p.ConvTime.Device != "" {
			device = p.ConvTime.Device
		}
	}
	head := "\nworkspace caps (--cap-sweep): the arena under each"
	if device != "" {
		head += fmt.Sprintf(", and the convolutions' time from what was recorded on an %s (per convolution the fastest way within its workspace)", device)
	}
	full := len(points) > 0 && points[0].FullArenaBytes != nil
	if full {
		head += "; FULL: the same with --full-workspace, each such workspace at its bound"
	}
	fmt.Fprintln(w, head)
	tw := newTable(w)
	if full {
		tw.row("  CAP\tARENA\tCONV TIME\tFULL ARENA\tFULL CONV TIME\tRECORDED\t\n")
	} else {
		tw.row("  CAP\tARENA\tCONV TIME\tRECORDED\t\n")
	}
	for _, p := range points {
		t, rec := convTimeCell(p.ConvTime), "-"
		if ct := p.ConvTime; ct != nil {
			rec = fmt.Sprintf("%d of %d", ct.Recorded, ct.Convolutions)
		}
		if full {
			tw.row("  %s\t%s\t%s\t%s\t%s\t%s\t\n", p.Cap, bytesize.Format(p.ArenaBytes), t, bytesize.Format(*p.FullArenaBytes),
				convTimeCell(p.FullConvTime), rec)
		} else {
			tw.row("  %s\t%s\t%s\t%s\t\n", p.Cap, bytesize.Format(p.ArenaBytes), t, rec)
		}
	}
	return tw.flush()
}

// convTimeCell is a convTime in a table: its milliseconds, or - with nothing recorded.
func convTimeCell(ct *convTime) string {
	if ct == nil || ct.Recorded == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f ms", ct.Ms)
}
