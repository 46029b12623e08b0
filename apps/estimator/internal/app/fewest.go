package app

import (
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/engine/generate"
	"carve.dev/libs/graph/arch"
)

// fitRanksResult is the JSON form of fit --config --tp ?: the fewest tensor-parallel ranks of
// the target that hold a load; README.md documents it.
type fitRanksResult struct {
	Model   modelInfo `json:"model"` // the whole model (one rank of one)
	Backend string    `json:"backend"`
	Workers int       `json:"workers"`
	Graph   *kvGraph  `json:"graph"`
	// Batch and Context are the load: sequences served together over all the replicas, and the
	// positions of each; Prompt is the longest prompt admitted.
	Batch    int64 `json:"batch"`
	Context  int64 `json:"context"`
	Prompt   int64 `json:"prompt"`
	Replicas int   `json:"replicas"` // --replicas; 1 without it
	// BatchPerReplica is ceil(batch / replicas): the sequences each replica holds, at which each
	// of its ranks is planned.
	BatchPerReplica int64 `json:"batch_per_replica"`
	// SearchMax bounds the search: the degrees tried are the powers of two up to it.
	SearchMax   int    `json:"search_max"`
	BudgetBytes int64  `json:"budget_bytes"`          // each GPU's
	BudgetFrom  string `json:"budget_from,omitempty"` // "target" when the budget is the target's memory
	Fits        bool   `json:"fits"`
	// Ranks is the fewest ranks of a replica that fit (its --tp); nil when no degree up to
	// search_max does.
	Ranks *int `json:"ranks"`
	GPUs  *int `json:"gpus"` // replicas x ranks; nil with ranks
	// Degrees are the degrees tried, in order; the search stops at the first that fits.
	Degrees []fitRanksDegree `json:"degrees"`
}

// fitRanksDegree is one degree tried.
type fitRanksDegree struct {
	Ranks int `json:"ranks"`
	// Skipped says why the config does not split over ranks (the field of arch.Config.Split's
	// error and its problem); nothing was planned.
	Skipped string   `json:"skipped,omitempty"`
	Split   *tpInfo  `json:"split,omitempty"` // one rank's share; absent for 1 rank and when skipped
	Rank    *kvProbe `json:"rank,omitempty"`  // one rank planned at batch_per_replica and context, as --tp ranks plans it
}

// fitRanks answers fit --config --tp ?: the smallest power of two up to most whose rank holds
// ask's load, the batch spread over ask.replicas.
func fitRanks(c *cli.Context, s Streams, ask kvAsk, most int) error {
	opts, err := options(c)
	if err != nil {
		return err
	}
	src, err := readConfigKV(c)
	if err != nil {
		return err
	}
	replicas := max(ask.replicas, 1)
	r := &fitRanksResult{Backend: opts.Target.Backend, Workers: opts.Target.Workers, Batch: ask.batch.value, Context: ask.context.value,
		Prompt: ask.prompt, Replicas: replicas, BatchPerReplica: ceilDiv(ask.batch.value, int64(replicas)), SearchMax: most,
		BudgetBytes: ask.budget, BudgetFrom: ask.budgetFrom}
	if r.Prompt == 0 {
		r.Prompt = r.Context - 1
	}
	for n := 1; n <= most && !r.Fits; n *= 2 {
		d := fitRanksDegree{Ranks: n}
		if err := src.split(n); err != nil {
			var ce *arch.ConfigError
			if !errors.As(err, &ce) {
				return err
			}
			d.Skipped = ce.Field + ": " + ce.Problem
			r.Degrees = append(r.Degrees, d)
			continue
		}
		p, info, built, err := planRank(c, src, ask, r.BatchPerReplica)
		if err != nil {
			return err
		}
		if n == 1 {
			r.Model, r.Graph = info, built
		} else {
			d.Split = info.Config.TP
		}
		d.Rank = p
		r.Degrees = append(r.Degrees, d)
		if p.Fits {
			gpus := replicas * n
			r.Fits, r.Ranks, r.GPUs = true, &n, &gpus
		}
	}
	if ask.form == "json" {
		err = writeJSON(s.Stdout, r)
	} else {
		err = writeFitRanks(s.Stdout, r)
	}
	if err != nil {
		return err
	}
	if !r.Fits {
		return &fitError{fmt.Sprintf("does not fit: no tensor-parallel degree up to %d ranks holds batch %d at context %d in a GPU's %s; "+
			"raise the bound with --tp ?:MAX, spread the batch with --replicas, or give a larger --budget",
			most, r.BatchPerReplica, r.Context, bytesize.Format(r.BudgetBytes))}
	}
	return nil
}

// planRank builds the decode graph of src's rank and plans it at batch sequences of ask's
// context, with the communicator's buffers of its split.
func planRank(c *cli.Context, src *configSource, ask kvAsk, batch int64) (*kvProbe, modelInfo, *kvGraph, error) {
	var info modelInfo
	m, built, err := buildConfigKV(c, src)
	if err != nil {
		return nil, info, nil, err
	}
	defer m.close()
	opts, err := options(c)
	if err != nil {
		return nil, info, nil, err
	}
	tied, cache, err := generate.Prepare(m.Model, generate.Names{})
	if err != nil {
		return nil, info, nil, err
	}
	k := &kvPlanner{ctx: c.Context, m: tied, cache: cache, opts: opts, prompt: ask.prompt, budget: ask.budget,
		comm: m.commReserve(), maxContext: built.RotaryPositions}
	p, err := k.plan(batch, ask.context.value)
	if err != nil {
		return nil, info, nil, err
	}
	if p.limit == "model" {
		return nil, info, nil, fmt.Errorf("batch %d at context %d cannot be planned: %s", batch, ask.context.value, p.Problem)
	}
	p.plan = nil
	return p, m.info(), built, nil
}

func writeFitRanks(w io.Writer, r *fitRanksResult) error {
	tw := newTable(w)
	tw.row("model\t%s\n", describeInfo(r.Model))
	tw.row("backend\t%s, %d workers\n", r.Backend, r.Workers)
	if g := r.Graph; g != nil {
		tw.row("graph\t%s\n", g.describe())
	}
	load := fmt.Sprintf("%d sequences of context %d, prompts up to %d", r.Batch, r.Context, r.Prompt)
	if r.Replicas > 1 {
		load += fmt.Sprintf(", over %d replicas: ceil(%d/%d) = %d on each", r.Replicas, r.Batch, r.Replicas, r.BatchPerReplica)
	}
	tw.row("load\t%s\n", load)
	from := ""
	if r.BudgetFrom == "target" {
		from = "\tthe target's memory (--budget sets another)"
	}
	tw.row("budget\t%s%s\n", size(r.BudgetBytes), from)
	if r.Ranks != nil {
		tw.row("fewest\ttp %d: %d x %d rank%s = %d GPU%s\tthe smallest power of two that fits\n", *r.Ranks, r.Replicas, *r.Ranks, plural(*r.Ranks), *r.GPUs, plural(*r.GPUs))
	} else {
		tw.row("fewest\tnone\tno power of two up to tp %d fits (--tp ?:MAX raises the bound)\n", r.SearchMax)
	}
	for _, d := range r.Degrees {
		head := fmt.Sprintf("  tp %d", d.Ranks)
		switch p := d.Rank; {
		case d.Skipped != "":
			tw.row("%s\tskipped: the config does not split: %s\n", head, d.Skipped)
		case p.Problem != "":
			tw.row("%s\tnot planned: %s\n", head, p.Problem)
		default:
			verdict := fmt.Sprintf("fits, %s to spare", bytesize.Format(*p.MarginBytes))
			if !p.Fits {
				verdict = fmt.Sprintf("does not fit, %s over", bytesize.Format(-*p.MarginBytes))
			}
			comm := ""
			if p.CommBytes > 0 {
				comm = " + all-reduce " + bytesize.Format(p.CommBytes)
			}
			tw.row("%s\ttotal %s = device weights %s + arena %s + KV state %s%s: %s\n", head, size(p.TotalBytes),
				bytesize.Format(p.DeviceWeightBytes), bytesize.Format(p.ArenaBytes), bytesize.Format(p.StateBytes), comm, verdict)
		}
	}
	return tw.flush()
}
