// Package serve is `runner serve`'s HTTP server: the Open Inference Protocol v2 (KServe,
// Triton) for any model, and OpenAI-compatible /v1/completions for KV-cache decoders, over
// sessions reserved at load. Package app wires it to the command line.
//
// Every session (a sequence slot, for a decoder) is reserved before the server is ready; a
// request waits for one in a bounded queue and is refused with 429 beyond it, so that nothing
// admitted ever waits for memory.
//
// A decoder in the shared-buffer (GenAI GroupQueryAttention) form is served by continuous
// batching: its slots are rows of one session's KV state (run.Generation.Batch), a sequence
// that takes a slot joins the running batch between decode steps, its prompt fed in chunks
// between them, and leaves it at once when it ends or its client goes (scheduler.go). A decoder in the concat form, whose rows share one length, has a session per
// slot, each generating one sequence alone.
package serve

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"carve.dev/apps/runner/internal/run"
	"carve.dev/libs/engine"
)

// Options configure a Server.
type Options struct {
	// APIKey, if set, is required as "Authorization: Bearer KEY" on every route but the health
	// probes.
	APIKey string
	// MaxBodyBytes bounds a request's body (0: DefaultMaxBodyBytes); beyond it the request is a
	// 413.
	MaxBodyBytes int64
	// Queue is how many requests (sequences, for a decoder) may wait for a session beyond those
	// running; beyond it a request is refused with 429 and Retry-After.
	Queue int
	// ShutdownTimeout bounds the drain after the context of Run ends: work still in flight after
	// it is canceled.
	ShutdownTimeout time.Duration
	// Log receives one line per lifecycle event (nil: none).
	Log io.Writer
	// OnReady, if set, is called with the listener's address once the server is ready.
	OnReady func(addr string)
}

// DefaultMaxBodyBytes is the request body limit when Options.MaxBodyBytes is 0.
const DefaultMaxBodyBytes = 16 << 20

// Server serves one model. Make it with New, give it a model with AttachRunner or
// AttachGeneration (in Run's setup), and run it with Run.
type Server struct {
	opts Options
	mux  *http.ServeMux
	m    *metrics

	ready, draining atomic.Bool

	mu   sync.Mutex // guards the backend while it is attached
	name string
	// One of these is set once the model is loaded.
	runner *run.Runner
	gen    *run.Generation

	sessions chan int   // free session (slot) indices
	sched    *scheduler // the continuous batch, when gen.Batch is set
	adm      admission
	nextID   atomic.Int64

	// stepHook, if set, runs before each generated token is handed on (tests).
	stepHook func()
}

// New returns a server with no model: it answers the health probes (not ready) until Run's
// setup attaches one.
func New(opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), m: newMetrics()}
	s.routes()
	return s
}

// AttachRunner serves r (loaded with its sessions reserved) under name through the v2
// protocol; each session serves one request at a time.
func (s *Server) AttachRunner(name string, r *run.Runner) {
	s.attach(name, len(r.Sessions), r.Reservation.DeviceWeightBytes+r.Reservation.TotalArenaBytes)
	s.runner = r
}

// AttachGeneration serves g under name through /v1/completions: the rows of its batch (run
// by a scheduler until Run returns) when it has one, else its generators, one per slot.
func (s *Server) AttachGeneration(name string, g *run.Generation) {
	slots := len(g.Gens)
	if g.Batch != nil {
		slots = int(g.Batch.Config().Rows)
	}
	s.attach(name, slots, g.Memory.ReservedBytes)
	s.gen = g
	if g.Batch != nil {
		s.sched = newScheduler(g.Batch, s.m, s.stepHook)
		bc := g.Batch.Config()
		s.logf("%s: continuous batching: %d slots are rows of one session's KV state, joining the running batch between steps; prompts fed %d tokens a step between them",
			name, bc.Rows, bc.Chunk)
	} else {
		s.logf("%s: a session per slot, each generating alone: in the %s form the rows of a batch share one length, so sequences cannot join a running batch",
			name, g.Cache.Form)
	}
}

// slots is the sequences that run at once: the batch's rows, or the sessions.
func (s *Server) slots() int { return s.adm.slots }

func (s *Server) attach(name string, slots int, reserved int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.name = name
	s.sessions = make(chan int, slots)
	for i := range slots {
		s.sessions <- i
	}
	s.adm = admission{capacity: slots + s.opts.Queue, slots: slots}
	s.m.slots.Set(float64(slots))
	s.m.reserved.Set(float64(reserved))
}

// Warmup runs once on every session, concurrently, before the server is ready: the runner's
// inputs at the envelope's largest binding, or for a decoder a generation through every prompt
// bucket and then to the end of the context, so that a request meets plans and programs that
// are already made.
func (s *Server) Warmup(ctx context.Context) error {
	var wg sync.WaitGroup
	var errs []error
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	switch {
	case s.runner != nil:
		for i, sess := range s.runner.Sessions {
			wg.Go(func() {
				if _, err := sess.Run(ctx, s.runner.Inputs); err != nil {
					fail(fmt.Errorf("warm-up on session %d: %w", i, err))
				}
			})
		}
	case s.gen != nil && s.gen.Batch != nil:
		// The scheduler has no job before the server is ready: the batch is this goroutine's.
		if err := s.gen.Batch.Warm(ctx); err != nil {
			fail(fmt.Errorf("warm-up of the batch: %w", err))
		}
	case s.gen != nil:
		ctxLen := s.gen.Generate.Context
		for i := range s.gen.Gens {
			wg.Go(func() {
				if err := s.warmGenerator(ctx, i, ctxLen); err != nil {
					fail(fmt.Errorf("warm-up on slot %d: %w", i, err))
				}
			})
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// warmGenerator meets every prompt bucket up to the context, then every decode bucket.
func (s *Server) warmGenerator(ctx context.Context, slot int, ctxLen int64) error {
	g := s.gen.Gens[slot]
	prompt := make([]int64, ctxLen)
	for b := int64(16); ; b *= 2 {
		p := min(b, ctxLen-1)
		if _, _, err := g.Generate(ctx, prompt[:p], p, 1, greedy, nil); err != nil {
			return err
		}
		if p == ctxLen-1 {
			break
		}
	}
	_, _, err := g.Generate(ctx, prompt[:1], 1, int(ctxLen-1), greedy, nil)
	return err
}

// Run serves on ln: the health probes at once, everything else after setup (which loads the
// model, attaches it and warms it up) has returned; then the server is ready. When ctx ends it
// stops admitting (readiness fails, new requests get 503), waits for the requests in flight for
// at most ShutdownTimeout, cancels what is left, and returns nil; an error of setup or of the
// listener is returned.
func (s *Server) Run(ctx context.Context, ln net.Listener, setup func(ctx context.Context) error) error {
	hard, cancelHard := context.WithCancel(context.Background())
	defer cancelHard()
	defer func() {
		if s.sched != nil {
			s.sched.close()
		}
	}()
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second,
		BaseContext: func(net.Listener) context.Context { return hard }}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	s.logf("listening on http://%s (not ready: loading)", ln.Addr())

	if err := setup(ctx); err != nil {
		cancelHard()
		hs.Close()
		<-served
		return err
	}
	if ctx.Err() == nil {
		s.ready.Store(true)
		s.logf("ready on http://%s", ln.Addr())
		if s.opts.OnReady != nil {
			s.opts.OnReady(ln.Addr().String())
		}
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	s.draining.Store(true)
	s.ready.Store(false)
	s.logf("draining: %d requests in flight, up to %s", s.adm.load(), s.opts.ShutdownTimeout)
	dctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(dctx)
	if err != nil {
		s.logf("drain timed out: canceling what is left")
		cancelHard()
		hs.Close()
	}
	<-served
	s.logf("stopped")
	return nil
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, "runner serve: "+format+"\n", args...)
	}
}

// ServeHTTP serves the routes behind the API key and the body limit, counting each request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		s.m.requests.WithLabelValues(routeOf(r.URL.Path), strconv.Itoa(sw.code())).Inc()
	}()
	if !strings.HasPrefix(r.URL.Path, "/v2/health/") && s.opts.APIKey != "" && !s.authorized(r) {
		sw.Header().Set("WWW-Authenticate", `Bearer realm="carve"`)
		writeError(sw, r, http.StatusUnauthorized, "authentication_error", "missing or wrong API key: send Authorization: Bearer KEY")
		return
	}
	r.Body = http.MaxBytesReader(sw, r.Body, s.opts.MaxBodyBytes)
	s.mux.ServeHTTP(sw, r)
}

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	key, ok := strings.CutPrefix(h, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(key)), []byte(s.opts.APIKey)) == 1
}

func (s *Server) routes() {
	s.mux.HandleFunc("/v2/health/live", get(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]bool{"live": true})
	}))
	s.mux.HandleFunc("/v2/health/ready", get(func(w http.ResponseWriter, r *http.Request) {
		if !s.ready.Load() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]bool{"ready": false})
			return
		}
		writeJSON(w, http.StatusOK, map[string]bool{"ready": true})
	}))
	s.mux.HandleFunc("/v2", get(s.serverMetadata))
	s.mux.HandleFunc("/v2/models/{model}", get(s.modelMetadata))
	s.mux.HandleFunc("/v2/models/{model}/ready", get(s.modelReady))
	s.mux.HandleFunc("/v2/models/{model}/infer", post(s.infer))
	s.mux.HandleFunc("/v1/completions", post(s.completions))
	s.mux.HandleFunc("/v1/models", get(s.listModels))
	s.mux.HandleFunc("/metrics", get(s.m.serve))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
}

func get(h http.HandlerFunc) http.HandlerFunc  { return method(http.MethodGet, h) }
func post(h http.HandlerFunc) http.HandlerFunc { return method(http.MethodPost, h) }

func method(m string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != m && !(m == http.MethodGet && r.Method == http.MethodHead) {
			w.Header().Set("Allow", m)
			writeError(w, r, http.StatusMethodNotAllowed, "invalid_request_error", fmt.Sprintf("%s %s: want %s", r.Method, r.URL.Path, m))
			return
		}
		h(w, r)
	}
}

// routeOf is the metrics label of a path: its route, with the model name left out.
func routeOf(p string) string {
	switch {
	case strings.HasPrefix(p, "/v2/models/"):
		switch {
		case strings.HasSuffix(p, "/infer"):
			return "/v2/models/{model}/infer"
		case strings.HasSuffix(p, "/ready"):
			return "/v2/models/{model}/ready"
		}
		return "/v2/models/{model}"
	case p == "/v2" || p == "/v2/health/live" || p == "/v2/health/ready" || p == "/v1/completions" || p == "/v1/models" || p == "/metrics":
		return p
	}
	return "other"
}

// available says whether the model is loaded and the server admitting; if not, it answers 503.
func (s *Server) available(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case s.draining.Load():
		w.Header().Set("Connection", "close")
		writeError(w, r, http.StatusServiceUnavailable, "unavailable", "the server is shutting down")
		return false
	case !s.ready.Load():
		w.Header().Set("Retry-After", "1")
		writeError(w, r, http.StatusServiceUnavailable, "unavailable", "the model is loading")
		return false
	}
	return true
}

// model checks the {model} of the path.
func (s *Server) model(w http.ResponseWriter, r *http.Request) bool {
	if m := r.PathValue("model"); m != s.name {
		writeError(w, r, http.StatusNotFound, "not_found", fmt.Sprintf("no model %q: this server serves %q", m, s.name))
		return false
	}
	return true
}

// admit enters k sequences into the queue, or answers 429 and returns false. The caller
// calls s.adm.leave(k) when they are done.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, k int) bool {
	if !s.adm.enter(k) {
		w.Header().Set("Retry-After", "1")
		writeError(w, r, http.StatusTooManyRequests, "rate_limit_error",
			fmt.Sprintf("the server is full: %d sessions and a queue of %d are taken; retry later", s.adm.slots, s.opts.Queue))
		return false
	}
	s.m.waiting.Add(float64(k))
	return true
}

// acquire waits for a free session, or for ctx.
func (s *Server) acquire(ctx context.Context) (int, error) {
	select {
	case i := <-s.sessions:
		s.m.waiting.Dec()
		s.m.running.Inc()
		if s.sched == nil {
			s.m.busy.Inc() // the scheduler counts its rows itself
		}
		return i, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (s *Server) release(i int) {
	s.m.running.Dec()
	if s.sched == nil {
		s.m.busy.Dec()
	}
	s.sessions <- i
}

// admission counts the sequences admitted, waiting or running, against the sessions and the
// queue.
type admission struct {
	mu                  sync.Mutex
	in, capacity, slots int
}

func (a *admission) enter(k int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.in+k > a.capacity {
		return false
	}
	a.in += k
	return true
}

func (a *admission) leave(k int) {
	a.mu.Lock()
	a.in -= k
	a.mu.Unlock()
}

func (a *admission) load() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.in
}

func (s *Server) serverMetadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"name": "carve", "version": "0", "extensions": []string{}})
}

func (s *Server) modelReady(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"name": r.PathValue("model"), "ready": false})
		return
	}
	if !s.model(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"name": s.name, "ready": true})
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	if !s.available(w, r) {
		return
	}
	data := []map[string]any{}
	if s.gen != nil {
		data = append(data, map[string]any{"id": s.name, "object": "model", "owned_by": "carve", "max_model_len": s.gen.Generate.Context})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeError writes a JSON error: OpenAI's shape ({"error": {"message", "type", "code"}}) on
// /v1 routes, the v2 protocol's ({"error": "message"}) elsewhere.
func writeError(w http.ResponseWriter, r *http.Request, status int, kind, msg string) {
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": kind, "code": status}})
		return
	}
	writeJSON(w, status, map[string]string{"error": msg})
}

// decodeBody decodes r's JSON body into v, answering 413 or 400 on failure.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err == nil {
		return true
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeError(w, r, http.StatusRequestEntityTooLarge, "invalid_request_error", fmt.Sprintf("the request body is larger than the limit of %d bytes (--max-body)", mbe.Limit))
		return false
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("empty body")
	}
	writeError(w, r, http.StatusBadRequest, "invalid_request_error", "the request body is not valid JSON for this route: "+err.Error())
	return false
}

// runError answers an error of a run: 400 for inputs the reservation does not admit, 503
// after the client left or during shutdown, 500 otherwise (refused, when valuesFault, with 400:
// a run of inputs of the right shapes that fails on a live device failed on their values, such
// as an index out of range).
func runError(w http.ResponseWriter, r *http.Request, err error, valuesFault ...bool) {
	var (
		ee *engine.EnvelopeError
		ie *engine.InputError
		dl *engine.DeviceLostError
	)
	switch {
	case errors.As(err, &dl):
		writeError(w, r, http.StatusInternalServerError, "server_error", err.Error())
	case errors.As(err, &ee) || errors.As(err, &ie):
		writeError(w, r, http.StatusBadRequest, "invalid_request_error", err.Error())
		writeError(w, r, http.StatusBadRequest, "invalid_request_error", err.Error())
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		writeError(w, r, http.StatusServiceUnavailable, "unavailable", "canceled: "+err.Error())
	case len(valuesFault) > 0 && valuesFault[0]:
		writeError(w, r, http.StatusBadRequest, "invalid_request_error", "the model refused the inputs: "+err.Error())
	default:
		writeError(w, r, http.StatusInternalServerError, "server_error", err.Error())
	}
}

// statusWriter records the status written, for the metrics, and passes Flush on.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
