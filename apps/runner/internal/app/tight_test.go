package app

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/apps/runner/internal/run"
	"carve.dev/libs/engine"
)

// The tight plan's figures in --stats table: W, C and R per kernel and the bytes saved, worded
// for a default reservation and for --tight; nothing on devices that measured no kernel.
func TestPrintTight(t *testing.T) {
	k := run.TightKernel{Node: "/h.0/mlp/MatMul", Op: "MatMul", W: 32 << 20, C: 32 << 20, R: 1 << 20, At: engine.Binding{"batch": 3, "seq": 16}}
	for _, tc := range []struct {
		name string
		ts   run.TightStats
		want []string
	}{
		{"cpu", run.TightStats{}, nil},
		{"would save", run.TightStats{Measured: 2, Kernels: []run.TightKernel{k}, DefaultArenaBytes: 33 << 20, ArenaBytes: 2 << 20,
			SavedBytes: 31 << 20, TotalSavedBytes: 62 << 20},
			[]string{"(1 of 2 measured)", "NODE", "W", "/h.0/mlp/MatMul", "32.00 MiB", "1.00 MiB", "batch=3 seq=16",
				"a tight reservation would save 31.00 MiB per session (arena 2.00 MiB instead of 33.00 MiB), 62.00 MiB in all: --tight reserves it"}},
		{"reserved", run.TightStats{Reserved: true, Measured: 1, Kernels: []run.TightKernel{k}, DefaultArenaBytes: 33 << 20, ArenaBytes: 2 << 20,
			SavedBytes: 31 << 20, TotalSavedBytes: 31 << 20},
			[]string{"reserving the tight plan (--tight): 31.00 MiB saved per session"}},
		{"nothing below the cap", run.TightStats{Measured: 3}, []string{"whole cap of all 3 measured kernel workspaces; nothing to save"}},
		{"no smaller", run.TightStats{Measured: 1, Kernels: []run.TightKernel{k}, DefaultArenaBytes: 2 << 20, ArenaBytes: 2 << 20},
			[]string{"a tight reservation would save nothing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			printTight(&b, tc.ts)
			if tc.want == nil {
				require.Empty(t, b.String())
			}
			for _, w := range tc.want {
				require.Contains(t, b.String(), w)
			}
		})
	}
}
