package rewrite_test

import (
	"fmt"
	"sort"
	"testing"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

func TestZZCount(t *testing.T) {
	m := load(t, "qwen2_gqa")
	count := func(m *graph.Model) string {
		c := map[string]int{}
		for _, n := range m.Nodes {
			c[n.Domain+"."+n.OpType]++
		}
		var ks []string
		for k := range c {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		s := ""
		for _, k := range ks {
			s += fmt.Sprintf("%s=%d ", k, c[k])
		}
		return s
	}
	t.Log("before:", len(m.Nodes), count(m))
	f, _, _ := rewrite.Fuse(m, rewrite.Options{Skip: []rewrite.Kind{rewrite.SwiGLU}})
	t.Log("main:  ", len(f.Nodes), count(f))
	f, _, _ = rewrite.Fuse(m, rewrite.Options{})
	t.Log("now:   ", len(f.Nodes), count(f))
}
