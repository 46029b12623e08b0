// Package svgplan draws a planned binding as an SVG picture: every buffer a rectangle over
// the steps it is live (x) and the arena addresses it occupies (y), in the manner of
// PyTorch's memory visualizer, with the peak and the lower bound marked.
//
// The SVG is written by hand: it is a few element kinds, and text and attributes go through
// encoding/xml's escaping. The output is deterministic for a given plan.
package svgplan

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"

	"carve.dev/apps/estimator/internal/planview"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/planner"
)

// Geometry of the picture, in SVG user units (pixels).
const (
	width      = 1280
	height     = 760
	left       = 96 // room for the address labels
	right      = 24
	top        = 112 // title, legend and the peak step's label
	bottom     = 56  // step labels and the axis title
	plotWidth  = width - left - right
	plotHeight = height - top - bottom
	// minHeight and minWidth keep buffers far smaller than the arena, or far shorter-lived
	// than the run, visible as slivers.
	minHeight = 0.6
	minWidth  = 1.0
)

// palette gives each buffer kind a few shades, cycled by buffer index so that neighbours
// are told apart. Activations are blues, workspaces oranges, outputs purples, inputs greys.
var palette = map[planner.Kind][]string{
	planner.Activation: {"#4e79a7", "#6b9bd1", "#3b6391", "#86b4e0"},
	planner.Workspace:  {"#f28e2b", "#e15759", "#ffae52", "#d4672a"},
	planner.Output:     {"#8c5fb8", "#b07aa1", "#7246a0"},
	planner.Input:      {"#9d9d9d", "#bab0ac"},
}

var kindOrder = []planner.Kind{planner.Activation, planner.Workspace, planner.Output, planner.Input}

// Options label the picture.
type Options struct {
	Title string // the first line of the heading, e.g. the model and binding
}

// Write draws p's arena plan to w. It only reads p, so it may run concurrently with other
// readers of the same plan.
func Write(w io.Writer, p *engine.Planned, opts Options) error {
	bw := bufio.NewWriter(w)
	s := &svg{w: bw}
	s.draw(p, opts)
	if s.err != nil {
		return s.err
	}
	return bw.Flush()
}

type svg struct {
	w   *bufio.Writer
	err error
}

func (s *svg) printf(format string, args ...any) {
	if s.err == nil {
		_, s.err = fmt.Fprintf(s.w, format, args...)
	}
}

// esc escapes s for text content and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // writing to a strings.Builder cannot fail
	return b.String()
}

func (s *svg) draw(p *engine.Planned, opts Options) {
	bufs := planview.Buffers(p)
	live := planview.LiveBytes(p)
	peak := planview.PeakStep(p)
	steps := max(len(p.Steps), 1)
	yMax := max(p.Plan.Peak, p.Plan.LowerBound, 1)
	x := func(step int) float64 { return left + float64(step)*plotWidth/float64(steps) }
	y := func(off int64) float64 { return top + plotHeight - float64(off)/float64(yMax)*plotHeight }

	s.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	s.printf(`<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	title := opts.Title
	if title == "" {
		title = "arena plan"
	}
	s.printf(`<text x="%d" y="22" font-size="16" font-weight="bold">%s</text>`+"\n", left, esc(title))
	s.printf(`<text x="%d" y="42" fill="#333333">%s</text>`+"\n", left, esc(fmt.Sprintf(
		"arena %s (%d bytes), lower bound %s, %d steps, %d buffers, planned by %s",
		bytesize.Format(p.Plan.Peak), p.Plan.Peak, bytesize.Format(p.Plan.LowerBound), len(p.Steps), len(bufs), p.Plan.Algorithm)))
	s.legend(bufs)

	// Plot frame and grid.
	s.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#999999"/>`+"\n", left, top, plotWidth, plotHeight)
	for _, t := range byteTicks(yMax) {
		yy := y(t)
		s.printf(`<line x1="%d" y1="%.2f" x2="%d" y2="%.2f" stroke="#e4e4e4"/>`+"\n", left, yy, left+plotWidth, yy)
		s.printf(`<text x="%d" y="%.2f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", left-6, yy, esc(bytesize.Format(t)))
	}
	for _, t := range stepTicks(steps) {
		xx := x(t)
		s.printf(`<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#999999"/>`+"\n", xx, top+plotHeight, xx, top+plotHeight+4)
		s.printf(`<text x="%.2f" y="%d" text-anchor="middle">%d</text>`+"\n", xx, top+plotHeight+17, t)
	}
	s.printf(`<text x="%d" y="%d" text-anchor="middle">step (nodes in execution order)</text>`+"\n", left+plotWidth/2, height-12)
	s.printf(`<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">arena offset</text>`+"\n", top+plotHeight/2, top+plotHeight/2)

	// Buffers: one rectangle each, with a hover title.
	s.printf("<g stroke=\"#ffffff\" stroke-width=\"0.4\">\n")
	for _, b := range bufs {
		if b.Size == 0 {
			continue
		}
		y0, y1 := y(b.Offset+b.Size), y(b.Offset)
		h := math.Max(y1-y0, minHeight)
		shades := palette[b.Kind]
		if len(shades) == 0 {
			shades = palette[planner.Input]
		}
		wd := math.Max(x(b.End)-x(b.Start), minWidth)
		stroke := "" // the group's white outline separates neighbours, but would hide slivers
		if wd < 3 || h < 3 {
			stroke = ` stroke="none"`
		}
		s.printf(`<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"%s><title>%s</title></rect>`+"\n",
			x(b.Start), y1-h, wd, h, shades[b.Index%len(shades)], stroke, esc(hover(b)))
	}
	s.printf("</g>\n")

	// The peak step, over the buffers, translucent, labelled above the plot.
	if peak.Step >= 0 {
		x0, x1 := x(peak.Step), x(peak.Step+1)
		s.printf(`<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="#ffd54f" fill-opacity="0.15" stroke="#c79100" stroke-dasharray="3 2"><title>%s</title></rect>`+"\n",
			x0, top, x1-x0, plotHeight, esc(fmt.Sprintf("peak step %d: node %s (%s), %s live",
				peak.Step, planview.NodeLabel(peak.Node), opName(peak.Node.OpType, peak.Node.Domain), bytesize.Format(peak.LiveBytes))))
		anchor := "middle"
		switch {
		case x0 < left+120:
			anchor = "start"
		case x1 > left+plotWidth-120:
			anchor = "end"
		}
		s.printf(`<text x="%.2f" y="%d" text-anchor="%s" fill="#8a6500">%s</text>`+"\n", (x0+x1)/2, top-24, anchor,
			esc(fmt.Sprintf("peak step %d: %s (%s)", peak.Step, planview.NodeLabel(peak.Node), opName(peak.Node.OpType, peak.Node.Domain))))
	}

	// Live bytes per step: where it sits below the peak line, the arena is fragmented.
	var pts strings.Builder
	for st, n := range live {
		fmt.Fprintf(&pts, "%.2f,%.2f %.2f,%.2f ", x(st), y(n), x(st+1), y(n))
	}
	s.printf(`<polyline points="%s" fill="none" stroke="#222222" stroke-width="0.9" stroke-opacity="0.75"><title>bytes live at each step</title></polyline>`+"\n",
		strings.TrimSpace(pts.String()))

	// Peak and lower bound.
	s.hline(y(p.Plan.LowerBound), "#2ca02c", "6 3", fmt.Sprintf("lower bound %s", bytesize.Format(p.Plan.LowerBound)), 14)
	s.hline(y(p.Plan.Peak), "#d62728", "", fmt.Sprintf("peak %s", bytesize.Format(p.Plan.Peak)), -4)
	s.printf("</svg>\n")
}

// hline draws a labelled horizontal line across the plot; dy places the label off the line.
func (s *svg) hline(yy float64, color, dash, label string, dy float64) {
	d := ""
	if dash != "" {
		d = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	s.printf(`<line x1="%d" y1="%.2f" x2="%d" y2="%.2f" stroke="%s" stroke-width="1.5"%s><title>%s</title></line>`+"\n",
		left, yy, left+plotWidth, yy, color, d, esc(label))
	s.printf(`<text x="%d" y="%.2f" text-anchor="end" fill="%s" font-weight="bold" stroke="#ffffff" stroke-width="3" paint-order="stroke">%s</text>`+"\n",
		left+plotWidth-4, yy+dy, color, esc(label))
}

// legend draws a key for the buffer kinds present and for the lines.
func (s *svg) legend(bufs []planview.Buffer) {
	present := map[planner.Kind]bool{}
	for _, b := range bufs {
		if b.Size > 0 {
			present[b.Kind] = true
		}
	}
	xx, yy := float64(left), 64.0
	for _, k := range kindOrder {
		if !present[k] {
			continue
		}
		s.printf(`<rect x="%.0f" y="%.0f" width="14" height="14" fill="%s"/>`+"\n", xx, yy-11, palette[k][0])
		s.printf(`<text x="%.0f" y="%.0f">%s</text>`+"\n", xx+19, yy, esc(k.String()))
		xx += 30 + 7*float64(len(k.String())) + 16
	}
	for _, l := range []struct{ color, dash, name string }{
		{"#d62728", "", "peak (arena size)"},
		{"#2ca02c", "6 3", "lower bound"},
		{"#222222", "", "live bytes"},
	} {
		d := ""
		if l.dash != "" {
			d = fmt.Sprintf(` stroke-dasharray="%s"`, l.dash)
		}
		s.printf(`<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/>`+"\n", xx, yy-4, xx+22, yy-4, l.color, d)
		s.printf(`<text x="%.0f" y="%.0f">%s</text>`+"\n", xx+27, yy, esc(l.name))
		xx += 36 + 7*float64(len(l.name)) + 16
	}
	s.printf(`<rect x="%.0f" y="%.0f" width="14" height="14" fill="#ffd54f" fill-opacity="0.15" stroke="#c79100" stroke-dasharray="3 2"/>`+"\n", xx, yy-11)
	s.printf(`<text x="%.0f" y="%.0f">peak step</text>`+"\n", xx+19, yy)
}

// hover is a buffer's tooltip: what it holds, its node, size, address and lifetime.
func hover(b planview.Buffer) string {
	var sb strings.Builder
	if b.Kind == planner.Workspace {
		fmt.Fprintf(&sb, "workspace of %s\n", planview.NodeLabel(b.Node))
	} else {
		fmt.Fprintf(&sb, "%s %s", b.Kind, b.Values[0])
		if n := len(b.Values) - 1; n > 0 {
			fmt.Fprintf(&sb, " (views: %s)", strings.Join(b.Values[1:], ", "))
		}
		sb.WriteByte('\n')
	}
	if b.Node != nil {
		fmt.Fprintf(&sb, "node %s (%s), step %d\n", planview.NodeLabel(b.Node), opName(b.Node.OpType, b.Node.Domain), b.NodeStep)
	}
	fmt.Fprintf(&sb, "size %s (%d bytes)\noffset %d, end %d\nlive at steps [%d, %d)",
		bytesize.Format(b.Size), b.Size, b.Offset, b.Offset+b.Size, b.Start, b.End)
	return sb.String()
}

func opName(op, domain string) string {
	if domain == "" {
		return op
	}
	return domain + "." + op
}

// byteTicks returns about eight round addresses from 0 to at most hi, a power of two bytes
// apart, so that every label is a round binary size (256.00 MiB, 512.00 MiB, ...).
func byteTicks(hi int64) []int64 {
	step := int64(1)
	for hi/step > 8 {
		step *= 2 // hi/step > 8 keeps step far below MaxInt64
	}
	out := []int64{0}
	for t := int64(0); t <= hi-step; { // t+step <= hi: no overflow
		t += step
		out = append(out, t)
	}
	return out
}

// stepTicks returns step numbers 0, d, 2d, ... up to steps, with d the first of 1, 2, 5, 10,
// 20, 50, ... that gives at most a dozen.
func stepTicks(steps int) []int {
	d := 1
	for i := 0; steps/d > 12; i++ {
		d = []int{1, 2, 5}[(i+1)%3] * pow10((i+1)/3)
	}
	var out []int
	for t := 0; t <= steps; t += d {
		out = append(out, t)
	}
	return out
}

func pow10(k int) int {
	p := 1
	for range k {
		p *= 10
	}
	return p
}
