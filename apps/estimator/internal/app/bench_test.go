package app

import (
	"io"
	"testing"

	"carve.dev/libs/graph/testmodels"
)

// BenchmarkReportQwen2_1p5B is the whole report command, model loading included, on the
// 28-layer Qwen2-1.5B-shaped graph over batch=1:64, seq=1:32768 (target: under a second).
func BenchmarkReportQwen2_1p5B(b *testing.B) {
	path := testmodels.MustGet("qwen2_1p5b_graph").WriteTemp(b)
	args := []string{"estimator", "report", "--model", path, "--workers", "8", "--dim", "batch=1:64", "--dim", "seq=1:32768", "--budget", "141GiB"}
	for b.Loop() {
		if code := Run(args, io.Discard, io.Discard); code != ExitDoesNotFit {
			b.Fatalf("exit code %d", code)
		}
	}
}

// BenchmarkReportBundled is the first command of the README: estimator report.
func BenchmarkReportBundled(b *testing.B) {
	for b.Loop() {
		if code := Run([]string{"estimator", "report", "--workers", "2"}, io.Discard, io.Discard); code != ExitOK {
			b.Fatalf("exit code %d", code)
		}
	}
}
