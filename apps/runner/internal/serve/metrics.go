package serve

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics, under the carve: prefix and with vLLM's names
// where the meaning is the same (vllm:num_requests_running is carve:num_requests_running).
type metrics struct {
	reg                     *prometheus.Registry
	requests                *prometheus.CounterVec
	waiting, running        prometheus.Gauge
	slots, reserved         prometheus.Gauge
	busy, kvUsage           prometheus.Gauge
	steps                   prometheus.Counter
	ttft, itl, e2e          prometheus.Histogram
	promptTokens, genTokens prometheus.Counter
	success                 *prometheus.CounterVec
	handler                 http.Handler
}

// latencyBuckets are seconds, from a millisecond to a minute.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60}

func newMetrics() *metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &metrics{reg: reg}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "carve:http_requests_total",
		Help: "HTTP requests answered, by route and status code."}, []string{"route", "code"})
	m.waiting = prometheus.NewGauge(prometheus.GaugeOpts{Name: "carve:num_requests_waiting",
		Help: "Sequences admitted and waiting in the queue for a session (slot)."})
	m.running = prometheus.NewGauge(prometheus.GaugeOpts{Name: "carve:num_requests_running",
		Help: "Sequences (or v2 inferences) running on a session."})
	m.slots = prometheus.NewGauge(prometheus.GaugeOpts{Name: "carve:num_slots",
		Help: "Sessions (sequence slots) reserved at load."})
	m.busy = prometheus.NewGauge(prometheus.GaugeOpts{Name: "carve:num_slots_busy",
		Help: "Slots holding a sequence: rows of the batch under continuous batching, else sessions."})
	m.kvUsage = prometheus.NewGauge(prometheus.GaugeOpts{Name: "carve:kv_cache_usage_perc",
		Help: "Fraction of the batch's reserved KV positions (rows x context) that hold a sequence's tokens (1 = 100%); 0 without continuous batching."})
	m.steps = prometheus.NewCounter(prometheus.CounterOpts{Name: "carve:batch_steps_total",
		Help: "Steps of the continuous batch: one model call for every busy row, a prefill chunk or a token each."})
	m.reserved = prometheus.NewGauge(prometheus.GaugeOpts{Name: "carve:reserved_bytes",
		Help: "Device bytes reserved at load: weights on the device, every session's arena and KV state."})
	m.ttft = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "carve:time_to_first_token_seconds",
		Help: "Time from a completion request's arrival to its first token, queueing included.", Buckets: latencyBuckets})
	m.itl = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "carve:inter_token_latency_seconds",
		Help: "Time between a sequence's consecutive tokens.", Buckets: latencyBuckets})
	m.e2e = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "carve:e2e_request_latency_seconds",
		Help: "Time from a request's arrival to its last byte of output (completions and v2 inferences).", Buckets: latencyBuckets})
	m.promptTokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "carve:prompt_tokens_total",
		Help: "Prompt tokens prefilled."})
	m.genTokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "carve:generation_tokens_total",
		Help: "Tokens generated."})
	m.success = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "carve:request_success_total",
		Help: "Sequences finished, by finish reason (length, stop)."}, []string{"finished_reason"})
	for _, c := range []prometheus.Collector{m.requests, m.waiting, m.running, m.slots, m.reserved, m.busy, m.kvUsage, m.steps, m.ttft, m.itl, m.e2e,
		m.promptTokens, m.genTokens, m.success, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) serve(w http.ResponseWriter, r *http.Request) { m.handler.ServeHTTP(w, r) }
