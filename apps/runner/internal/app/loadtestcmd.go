package app

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"carve.dev/apps/runner/internal/loadtest"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
)

// Bounds of loadtest's flags, with why.
const (
	maxLoadConcurrency = 4096      // each stream is a connection and a goroutine; a server's slots are fewer
	maxLoadRequests    = 1_000_000 // every request's latencies are kept
	maxLoadLevels      = 64
)

func loadtestCommand(env Env) *cli.Command {
	return &cli.Command{
		Name:  "loadtest",
		Usage: "load a completions server on this machine: throughput, TTFT and inter-token latency against concurrency",
		UsageText: "runner loadtest [--url http://127.0.0.1:8000] [--concurrency 1,8,32] [--requests N] [--duration D]\n" +
			"                [--prompt-len N] [--max-tokens N] [--api-key KEY | CARVE_API_KEY=KEY] [--format table|json]",
		Description: "Sends streaming /v1/completions requests (random token-id prompts of --prompt-len, --max-tokens new\n" +
			"tokens, greedy) to a server on the loopback (`runner serve`, or any OpenAI-compatible server that\n" +
			"takes token-id prompts), at each --concurrency level in turn: that many clients send requests back\n" +
			"to back until --requests have been sent or --duration has passed; requests in flight then finish.\n" +
			"A client refused with Retry-After (429, 503) waits that long, at most a second, before its next.\n" +
			"Reports, per level, generated tokens/s and requests/s (and the tokens/s against the first level's),\n" +
			"the time to first token and inter-token latency (p50, p99), and failed requests by HTTP status.\n" +
			"It refuses a server that is not on this machine. Exit codes: 0 every request succeeded, 1 some\n" +
			"failed (the report says which) or no server answered, 2 usage (a --url off the loopback included).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "url", Value: "http://127.0.0.1:8000", Usage: "the server's base `URL`; its host must be on the loopback (127.0.0.0/8, ::1, localhost)"},
			&cli.StringFlag{Name: "model", Usage: "the requests' model `NAME`", DefaultText: "the first of the server's /v1/models"},
			&cli.StringFlag{Name: "api-key", EnvVars: []string{"CARVE_API_KEY"}, Usage: "send `KEY` as Authorization: Bearer (the variable keeps it out of process listings)"},
			&cli.StringFlag{Name: "concurrency", Value: "1,8,32", Usage: "the levels, `N,...`: concurrent streams at each, run in that order"},
			&cli.IntFlag{Name: "requests", Value: 128, Usage: "send at most `N` requests per level (0: as many as --duration allows)"},
			&cli.DurationFlag{Name: "duration", Value: time.Minute, Usage: "send requests for at most `D` per level (0: until --requests)"},
			&cli.IntFlag{Name: "prompt-len", Value: 128, Usage: "prompt tokens `N` per request"},
			&cli.IntFlag{Name: "max-tokens", Value: 64, Usage: "new tokens `N` per request"},
			&cli.Int64Flag{Name: "vocab", Value: 256, Usage: "draw the prompts' token ids below `N` (any model's vocabulary holds the first 256)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "`SEED` of the random prompts"},
			&cli.DurationFlag{Name: "timeout", Value: loadtest.DefaultTimeout, Usage: "give up on a request, its stream included, after `D`"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "`FORMAT` of stdout: table (people) or json (machines)"},
		},
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return doLoadtest(c, env) },
	}
}

// requestsFailedError is a load test whose report shows failed requests.
type requestsFailedError struct {
	failed, sent int
	by           map[string]int
}

func (e *requestsFailedError) Error() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(e.by)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, e.by[k]))
	}
	return fmt.Sprintf("%d of %d requests failed (%s)", e.failed, e.sent, strings.Join(parts, ", "))
}

func doLoadtest(c *cli.Context, env Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	cfg := loadtest.Config{URL: c.String("url"), Model: c.String("model"), APIKey: c.String("api-key"),
		Requests: c.Int("requests"), Duration: c.Duration("duration"), PromptLen: c.Int("prompt-len"),
		MaxTokens: c.Int("max-tokens"), Vocab: c.Int64("vocab"), Seed: c.Uint64("seed"), Timeout: c.Duration("timeout")}
	for _, s := range strings.Split(c.String("concurrency"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return usagef("--concurrency %q: want positive counts of streams separated by commas, e.g. 1,8,32", c.String("concurrency"))
		}
		if err := atMost("concurrency", n, maxLoadConcurrency, "each stream holds a connection"); err != nil {
			return err
		}
		cfg.Concurrency = append(cfg.Concurrency, n)
	}
	switch {
	case len(cfg.Concurrency) > maxLoadLevels:
		return usagef("--concurrency: %d levels, want at most %d", len(cfg.Concurrency), maxLoadLevels)
	case cfg.Requests < 0:
		return usagef("--requests %d: want 0 (bound by --duration alone) or more", cfg.Requests)
	case cfg.Duration < 0:
		return usagef("--duration %s: want 0 (bound by --requests alone) or more", cfg.Duration)
	case cfg.Requests == 0 && cfg.Duration == 0:
		return usagef("--requests 0 and --duration 0: a load test must end; bound it by one or both")
	case cfg.PromptLen < 1:
		return usagef("--prompt-len %d: want at least 1 token", cfg.PromptLen)
	case cfg.MaxTokens < 1:
		return usagef("--max-tokens %d: want at least 1 token", cfg.MaxTokens)
	case cfg.Vocab < 1:
		return usagef("--vocab %d: want at least 1 token id", cfg.Vocab)
	case cfg.Timeout <= 0:
		return usagef("--timeout %s: want a positive duration, e.g. 5m", cfg.Timeout)
	}
	for _, b := range []struct {
		name string
		v    int
		most int64
		why  string
	}{
		{"requests", cfg.Requests, maxLoadRequests, "every request's latencies are kept"},
		{"prompt-len", cfg.PromptLen, maxDim, whyDim},
		{"max-tokens", cfg.MaxTokens, maxDim, whyDim},
	} {
		if err := atMost(b.name, b.v, b.most, b.why); err != nil {
			return err
		}
	}
	format := c.String("format")
	if format != "table" && format != "json" {
		return usagef("--format %q: want table or json", format)
	}
	if env.StderrIsTerminal {
		n := -1 // a spinner when only --duration bounds the levels
		if cfg.Requests > 0 {
			n = cfg.Requests * len(cfg.Concurrency)
		}
		bar := progressbar.NewOptions(n, progressbar.OptionSetWriter(env.Stderr),
			progressbar.OptionSetDescription("loadtest"), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionClearOnFinish())
		cfg.Progress = func(done, _ int) { bar.Set(done) }
		defer bar.Finish()
	}
	rep, err := loadtest.Run(c.Context, cfg)
	if err != nil {
		return loadtestProblem(err, cfg)
	}
	if format == "json" {
		err = writeJSON(env.Stdout, rep)
	} else {
		printLoadtest(env.Stdout, rep)
	}
	if err != nil {
		return err
	}
	failed := &requestsFailedError{by: map[string]int{}}
	for _, lv := range rep.Levels {
		failed.sent += lv.Sent
		for k, n := range lv.Errors {
			failed.failed += n
			failed.by[k] += n
		}
	}
	if failed.failed > 0 {
		return failed
	}
	return nil
}

// loadtestProblem words loadtest's errors for the command line.
func loadtestProblem(err error, cfg loadtest.Config) error {
	var (
		nle *loadtest.NotLoopbackError
		ue  *loadtest.URLError
		se  *loadtest.ServerError
	)
	switch {
	case errors.As(err, &nle):
		return usagef("--url %s: %s is not on this machine (runner loadtest loads only servers on the loopback: 127.0.0.1, ::1 or localhost)", cfg.URL, nle.Host)
	case errors.As(err, &ue):
		return usagef("--url %q: %s", ue.URL, ue.Reason)
	case errors.As(err, &se) && se.Context > 0:
		return usagef("--prompt-len %d and --max-tokens %d need %d positions: the server's context is %d (lower them, or serve with a larger --context)",
			cfg.PromptLen, cfg.MaxTokens, cfg.PromptLen+cfg.MaxTokens-1, se.Context)
	case errors.As(err, &se) && se.Status == 0:
		return fmt.Errorf("--url %s: no server answers there (%v): start one, e.g. runner serve --model M.onnx", cfg.URL, se.Err)
	case errors.As(err, &se) && se.Status == 401:
		return usagef("--url %s: the server wants an API key: give --api-key KEY (or CARVE_API_KEY)", cfg.URL)
	case errors.As(err, &se):
		return fmt.Errorf("--url %s: %v", cfg.URL, se.Err)
	}
	return err
}

func printLoadtest(w io.Writer, rep *loadtest.Report) {
	bound := fmt.Sprintf("at most %d requests", rep.Requests)
	switch {
	case rep.Requests == 0:
		bound = fmt.Sprintf("for %s", time.Duration(rep.Duration*float64(time.Second)))
	case rep.Duration > 0:
		bound += fmt.Sprintf(" or %s", time.Duration(rep.Duration*float64(time.Second)))
	}
	fmt.Fprintf(w, "server    %s, model %s\n", rep.URL, rep.Model)
	fmt.Fprintf(w, "requests  streamed, prompts of %d random token ids, %d new tokens, greedy; %s per level\n\n", rep.PromptLen, rep.MaxTokens, bound)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "STREAMS\tSENT\tOK\tTOKENS/S\tVS FIRST\tREQ/S\tTTFT P50\tTTFT P99\tITL P50\tITL P99\tERRORS\t")
	first := 0.0
	for i, lv := range rep.Levels {
		if i == 0 {
			first = lv.TokensPerSec
		}
		vs := "-"
		if first > 0 {
			vs = fmt.Sprintf("%.2fx", lv.TokensPerSec/first)
		}
		errs := "-"
		if len(lv.Errors) > 0 {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(lv.Errors)) {
				parts = append(parts, fmt.Sprintf("%s: %d", k, lv.Errors[k]))
			}
			errs = strings.Join(parts, ", ")
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.1f\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n", lv.Concurrency, lv.Sent, lv.OK, lv.TokensPerSec, vs, lv.RequestsPerSec,
			msCell(lv.TTFT.N, lv.TTFT.P50), msCell(lv.TTFT.N, lv.TTFT.P99), msCell(lv.ITL.N, lv.ITL.P50), msCell(lv.ITL.N, lv.ITL.P99), errs)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nTTFT: from sending a request to its first token; ITL: between a stream's tokens; in ms.")
}

func msCell(n int, v float64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}
