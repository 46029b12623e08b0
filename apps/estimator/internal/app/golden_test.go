package app

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// TestGolden pins the estimator's outputs for the fixtures, as tables and as JSON. Workers are
// pinned, so the plans do not depend on the machine. Run with -update to accept new output
// (and read the diff before committing it).
func TestGolden(t *testing.T) {
	models := map[string]string{}
	for _, name := range []string{"qwen2_q4", "llama", "contrib_attention"} {
		models[name] = fixture(t, name)
	}
	out := filepath.Join(t.TempDir(), "plan.csv")
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"report_bundled", []string{"report", "--workers", "2"}, ExitOK},
		{"report_bundled_budget", []string{"report", "--workers", "2", "--dim", "seq=1:256", "--budget", "80GB"}, ExitOK},
		{"report_qwen2_q4_over_budget", []string{"report", "--model", models["qwen2_q4"], "--workers", "2", "--dim", "batch=1:8", "--dim", "seq=1:64", "--budget", "1000KiB", "--top", "4"}, ExitDoesNotFit},
		{"report_llama_binding", []string{"report", "--model", models["llama"], "--workers", "2", "--dim", "batch=2", "--dim", "seq=16", "--top", "3"}, ExitOK},
		{"report_llama_explain_fusion", []string{"report", "--model", models["llama"], "--workers", "2", "--dim", "batch=2", "--dim", "seq=16", "--top", "3", "--explain-fusion"}, ExitOK},
		{"report_llama_no_fuse", []string{"report", "--model", models["llama"], "--workers", "2", "--dim", "batch=2", "--dim", "seq=16", "--top", "3", "--no-fuse", "--explain-fusion"}, ExitOK},
		{"report_attention_switch", []string{"report", "--model", models["contrib_attention"], "--workers", "2", "--dim", "batch=1:4", "--dim", "seq=256:1024"}, ExitOK},
		{"fit_bundled", []string{"fit", "--workers", "2", "--budget", "16MiB", "--dim", "batch=?", "--dim", "seq=64"}, ExitOK},
		{"fit_bundled_search_max", []string{"fit", "--workers", "2", "--budget", "1GiB", "--dim", "batch=?:8", "--dim", "seq=1:32"}, ExitOK},
		{"fit_qwen2_q4_none", []string{"fit", "--model", models["qwen2_q4"], "--workers", "2", "--budget", "100KiB", "--dim", "batch=?", "--dim", "seq=64"}, ExitDoesNotFit},
		{"ops", []string{"ops"}, ExitOK},
		{"solve", []string{"solve", "testdata/small.csv"}, ExitOK},
		{"solve_greedy", []string{"solve", "testdata/small.csv", "--algorithm", "greedy-by-size", "-o", out}, ExitOK},
	} {
		for _, form := range []string{"table", "json"} {
			args := append(append([]string{}, tc.args...), "--format", form)
			if tc.name == "solve" && form == "json" {
				args = append(args, "-o", out)
			}
			t.Run(tc.name+"_"+form, func(t *testing.T) {
				stdout, stderr, code := run(t, args...)
				require.Equal(t, tc.code, code, "stderr: %s", stderr)
				got := normalize(stdout, models, out)
				switch {
				case strings.HasPrefix(tc.name, "solve") && form == "table":
					got += "--- stderr\n" + normalize(stderr, models, out)
				case code == ExitOK:
					require.Empty(t, stderr, "diagnostics only")
				}
				ext := ".txt"
				if form == "json" {
					ext = ".json"
				}
				path := filepath.Join("testdata", "golden", tc.name+ext)
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
					require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
					return
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "no golden file: run go test -run TestGolden -update")
				require.Equal(t, string(want), got, "output changed; if intended, run go test -run TestGolden -update")
			})
		}
	}
}

var (
	jsonSeconds = regexp.MustCompile(`"seconds": [0-9.e-]+`)
	lineTime    = regexp.MustCompile(`, [0-9.]+(ns|µs|ms|s|m[0-9.]+s)\n`)
)

// normalize replaces what differs between runs: temporary paths and solve's wall time.
func normalize(s string, models map[string]string, out string) string {
	for name, p := range models {
		s = strings.ReplaceAll(s, p, "TMP/"+name+".onnx")
	}
	s = strings.ReplaceAll(s, out, "TMP/plan.csv")
	s = jsonSeconds.ReplaceAllString(s, `"seconds": 0`)
	return lineTime.ReplaceAllString(s, ", TIME\n")
}
