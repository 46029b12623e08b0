package svgplan

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/apps/estimator/internal/planview"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/bundled"
	"carve.dev/libs/planner"

	// The kernels the plans are made with.
	_ "carve.dev/libs/kernels/cpu"
)

func planBundled(t *testing.T, dims engine.Binding) *engine.Planned {
	t.Helper()
	m, err := bundled.Load()
	require.NoError(t, err)
	p, err := engine.Plan(context.Background(), m, dims, engine.Options{Workers: 2})
	require.NoError(t, err)
	return p
}

func TestWriteIsWellFormedAndDeterministic(t *testing.T) {
	p := planBundled(t, engine.Binding{"batch": 2, "seq": 16})
	var a, b bytes.Buffer
	require.NoError(t, Write(&a, p, Options{Title: `gpt2 <batch=2 & seq=16>`}))
	require.NoError(t, Write(&b, p, Options{Title: `gpt2 <batch=2 & seq=16>`}))
	require.Equal(t, a.String(), b.String(), "same plan, same picture")

	// Well-formed XML; count what is drawn.
	dec := xml.NewDecoder(bytes.NewReader(a.Bytes()))
	rects, titles, texts := 0, 0, []string{}
	var inText bool
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "rect":
				rects++
			case "title":
				titles++
			case "text":
				inText = true
			}
		case xml.EndElement:
			if el.Name.Local == "text" {
				inText = false
			}
		case xml.CharData:
			if inText {
				texts = append(texts, string(el))
			}
		}
	}
	sized := 0
	for _, buf := range p.Lifetimes.Problem.Buffers {
		if buf.Size > 0 {
			sized++
		}
	}
	require.GreaterOrEqual(t, rects, sized, "a rectangle per buffer")
	require.GreaterOrEqual(t, titles, sized, "a hover title per buffer")
	all := strings.Join(texts, "\n")
	require.Contains(t, all, `gpt2 <batch=2 & seq=16>`, "the title survives escaping")
	for _, want := range []string{"activation", "workspace", "output", "peak (arena size)", "lower bound", "live bytes", "arena offset", "step (nodes in execution order)"} {
		require.Contains(t, all, want)
	}
	require.Contains(t, a.String(), "workspace of ", "workspaces are named in their titles")
}

func TestTicks(t *testing.T) {
	for _, hi := range []int64{1, 7, 9, 1000, 1 << 20, 83886080, math.MaxInt64} {
		ts := byteTicks(hi)
		require.Equal(t, int64(0), ts[0])
		require.LessOrEqual(t, ts[len(ts)-1], hi)
		require.LessOrEqual(t, len(ts), 17, "hi %d", hi)
		require.GreaterOrEqual(t, len(ts), min(int(hi)+1, 5), "hi %d", hi)
		for i := 1; i < len(ts); i++ {
			step := ts[1] - ts[0]
			require.Equal(t, step, ts[i]-ts[i-1])
			require.Zero(t, step&(step-1), "power-of-two step")
		}
	}
	for _, n := range []int{1, 5, 12, 13, 115, 999, 4000, 123456} {
		ts := stepTicks(n)
		require.Equal(t, 0, ts[0])
		require.LessOrEqual(t, len(ts), 13, "steps %d", n)
		require.LessOrEqual(t, ts[len(ts)-1], n)
	}
	require.Equal(t, []int{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110}, stepTicks(115))
	require.Equal(t, []int{0, 20, 40, 60, 80, 100, 120, 140}, stepTicks(150))
}

func TestHover(t *testing.T) {
	node := &graph.Node{Index: 1, Name: "ln", OpType: "LayerNormalization"} // at step 3 of the plan's order
	require.Equal(t, "workspace of ln\nnode ln (LayerNormalization), step 3\nsize 1.00 KiB (1024 bytes)\noffset 256, end 1280\nlive at steps [3, 4)",
		hover(planview.Buffer{Kind: planner.Workspace, Node: node, NodeStep: 3, Size: 1024, Offset: 256, Start: 3, End: 4}))
	require.Equal(t, "activation y (views: y2, y3)\nnode ln (LayerNormalization), step 3\nsize 8 B (8 bytes)\noffset 0, end 8\nlive at steps [3, 9)",
		hover(planview.Buffer{Kind: planner.Activation, Node: node, NodeStep: 3, Size: 8, Start: 3, End: 9, Values: []string{"y", "y2", "y3"}}))
	node.Domain = "com.microsoft"
	require.Contains(t, hover(planview.Buffer{Kind: planner.Output, Node: node, Values: []string{"logits"}}), "output logits\nnode ln (com.microsoft.LayerNormalization)")
}
