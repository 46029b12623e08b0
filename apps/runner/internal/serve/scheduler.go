package serve

import (
	"context"
	"errors"
	"sync"
	"time"

	"carve.dev/libs/engine/generate"
)

// scheduler runs continuous batching: one goroutine owns the generate.Batch, joins the
// sequences that took a slot between steps, steps (a token of every decoding sequence and a
// chunk of a joining prompt), and hands each token to its sequence's goroutine through a
// channel that never blocks it.
//
// Invariants:
//   - a job is sent only after its sequence took a slot (Server.acquire), so there are never
//     more jobs in the batch than slots and Join never finds it full;
//   - a job's batch slot is freed (Batch.Leave, or the batch at its last token) before its
//     tokens channel is closed, so the server slot its sequence then releases is a free one;
//   - a canceled sequence (its client gone, or the drain's deadline) leaves at the first step
//     boundary after, and a failed step ends every sequence in the batch with its error.
type scheduler struct {
	b    *generate.Batch
	m    *metrics
	hook func() // Server.stepHook, read at start
	jobs chan *job
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex // guards closed, so that no job is sent after close has begun
	closed bool

	rows []*job // by batch slot
}

// job is one sequence in the batch.
type job struct {
	ctx     context.Context
	q       *sequence
	stops   map[int64]bool
	arrived time.Time
	last    time.Time
	tokens  chan int64 // capacity q.max: the scheduler never waits on it
	slot    int
	err     error  // set before tokens is closed
	finish  string // "length" or "stop", set before tokens is closed
}

func newScheduler(b *generate.Batch, m *metrics, hook func()) *scheduler {
	rows := int(b.Config().Rows)
	sc := &scheduler{b: b, m: m, hook: hook, jobs: make(chan *job, rows), stop: make(chan struct{}),
		done: make(chan struct{}), rows: make([]*job, rows)}
	go sc.run()
	return sc
}

// submit sends j to the batch, or returns errNoBatch once close has begun. It never waits:
// there are never more jobs than rows, the channel's capacity.
func (sc *scheduler) submit(j *job) error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.closed {
		return errNoBatch
	}
	sc.jobs <- j
	return nil
}

// close stops the scheduler and waits for it; sequences still in the batch, or sent and not
// yet joined, end with context.Canceled.
func (sc *scheduler) close() {
	sc.mu.Lock()
	sc.closed = true
	sc.mu.Unlock()
	close(sc.stop)
	<-sc.done
	for {
		select {
		case j := <-sc.jobs:
			j.err = context.Canceled
			close(j.tokens)
		default:
			return
		}
	}
}

func (sc *scheduler) run() {
	defer close(sc.done)
	ctx := context.Background() // a step is never cut short: one sequence's cancel is its own
	for {
		if sc.b.Busy() == 0 {
			select {
			case j := <-sc.jobs:
				sc.join(j)
			case <-sc.stop:
				return
			}
		}
		for more := true; more; {
			select {
			case j := <-sc.jobs:
				sc.join(j)
			case <-sc.stop:
				sc.endAll(context.Canceled)
				return
			default:
				more = false
			}
		}
		for _, j := range sc.rows {
			if j != nil && j.ctx.Err() != nil {
				sc.end(j, j.ctx.Err())
			}
		}
		if sc.b.Busy() == 0 {
			continue
		}
		toks, err := sc.b.Step(ctx)
		sc.m.steps.Inc()
		if err != nil {
			sc.endAll(err)
			continue
		}
		for _, t := range toks {
			sc.token(sc.rows[t.Slot], t)
		}
		sc.gauges()
	}
}

// join starts j on a free slot.
func (sc *scheduler) join(j *job) {
	slot, err := sc.b.Join(j.q.prompt, j.q.max, j.q.pick)
	if err != nil {
		j.err = err
		close(j.tokens)
		return
	}
	j.slot = slot
	sc.rows[slot] = j
	sc.gauges()
}

// token hands t on to j, ending j at a stop token or its last.
func (sc *scheduler) token(j *job, t generate.Token) {
	if sc.hook != nil {
		sc.hook()
	}
	now := time.Now()
	if t.Index == 0 {
		sc.m.ttft.Observe(now.Sub(j.arrived).Seconds())
	} else {
		sc.m.itl.Observe(now.Sub(j.last).Seconds())
	}
	j.last = now
	sc.m.genTokens.Inc()
	switch {
	case j.stops[t.ID]:
		j.finish = "stop"
	default:
		j.tokens <- t.ID
		if !t.Last {
			return
		}
		j.finish = "length"
	}
	sc.end(j, nil)
}

// end frees j's slot (if the batch has not) and closes its tokens.
func (sc *scheduler) end(j *job, err error) {
	sc.b.Leave(j.slot)
	sc.rows[j.slot] = nil
	j.err = err
	close(j.tokens)
	sc.gauges()
}

func (sc *scheduler) endAll(err error) {
	for _, j := range sc.rows {
		if j != nil {
			sc.end(j, err)
		}
	}
}

// gauges sets the slot and cache use from the batch.
func (sc *scheduler) gauges() {
	sc.m.busy.Set(float64(sc.b.Busy()))
	cfg := sc.b.Config()
	sc.m.kvUsage.Set(float64(sc.b.Positions()) / float64(cfg.Rows*cfg.Context))
}

// errNoBatch is the error of a sequence sent to a server whose batch has stopped.
var errNoBatch = errors.New("serve: the batch has stopped")

// runBatched waits for a slot and generates q in the batch, handing each token to emit
// (if not nil).
func (s *Server) runBatched(ctx context.Context, arrived time.Time, q *sequence, stops map[int64]bool, emit func(int64)) {
	slot, err := s.acquire(ctx)
	if err != nil {
		s.m.waiting.Dec()
		q.err = err
		return
	}
	defer s.release(slot)
	j := &job{ctx: ctx, q: q, stops: stops, arrived: arrived, tokens: make(chan int64, q.max)}
	if err := s.sched.submit(j); err != nil {
		q.err = err
		return
	}
	q.tokens = make([]int64, 0, q.max)
	for tok := range j.tokens {
		q.tokens = append(q.tokens, tok)
		if emit != nil {
			emit(tok)
		}
	}
	if j.err != nil {
		q.err = j.err
		return
	}
	q.finish = j.finish
	s.m.success.WithLabelValues(q.finish).Inc()
}
