package app

import (
	"encoding/csv"
	"io"
	"runtime"
	"strconv"
	"sync"
	"time"

	"carve.dev/apps/runner/internal/run"
)

// sampler writes `runner bench --samples`: one CSV row of memory figures every --sample-every
// during the timed runs, so that a soak test can see whether memory grows.
type sampler struct {
	r   *run.Runner
	mu  sync.Mutex
	w   *csv.Writer
	err error // the first write error
}

// sampleHeader names the columns: seconds since the timed runs began, runs done, then summed
// over the devices of --device: the allocator's segment bytes (device memory it holds),
// allocated bytes (live blocks) and arena bytes, the device's malloc calls and free bytes, and
// the Go heap's bytes in use.
var sampleHeader = []string{"elapsed_s", "runs", "segment_bytes", "allocated_bytes", "arena_bytes",
	"device_mallocs", "device_free_bytes", "go_heap_bytes"}

func newSampler(w io.Writer, r *run.Runner) *sampler {
	s := &sampler{r: r, w: csv.NewWriter(w)}
	s.write(sampleHeader)
	return s
}

func (s *sampler) sample(elapsed time.Duration, done int) {
	var seg, allocated, arenas, mallocs, free int64
	for _, rep := range s.r.Replicas {
		st := rep.Alloc.Stats()
		seg += st.SegmentBytes.Current
		allocated += st.AllocatedBytes.Current
		arenas += st.ReservedBytes
		mallocs += st.DeviceMallocCalls
		if f, _, err := rep.Backend.Device().MemInfo(); err == nil {
			free += f
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	row := []string{strconv.FormatFloat(elapsed.Seconds(), 'f', 1, 64), strconv.Itoa(done)}
	for _, v := range []int64{seg, allocated, arenas, mallocs, free, int64(ms.HeapAlloc)} {
		row = append(row, strconv.FormatInt(v, 10))
	}
	s.write(row)
}

func (s *sampler) write(row []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.w.Write(row)
	s.w.Flush() // each row reaches the file at once: a soak's reader follows it
	s.err = s.w.Error()
}
