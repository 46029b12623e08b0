//go:build parstats

package par

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// With the build tag parstats, For counts its loops by call site (the three frames above it):
// how many, how many fanned out, the helpers asked for and those that joined before the work
// ran out, indices and chunks (and those the caller ran itself), and wall time.
// A profiling aid only: it locks and allocates.
const statsOn = true

type site struct {
	calls, fanouts, extra, joined, n, chunks, mine int64
	ns                                             int64
}

var (
	statsMu sync.Mutex
	sites   = map[[3]uintptr]*site{}
)

func record(n, grain, extra, joined, mine int, start time.Time) {
	var pcs [5]uintptr
	runtime.Callers(3, pcs[:])
	var key [3]uintptr
	copy(key[:], pcs[:])
	statsMu.Lock()
	s := sites[key]
	if s == nil {
		s = &site{}
		sites[key] = s
	}
	s.calls++
	if extra > 0 {
		s.fanouts++
		s.extra += int64(extra)
		s.joined += int64(joined)
		s.mine += int64(mine)
		s.ns += int64(time.Since(start))
	}
	s.n += int64(n)
	s.chunks += int64((n + grain - 1) / grain)
	statsMu.Unlock()
}

// ResetStats forgets the counts.
func ResetStats() {
	statsMu.Lock()
	sites = map[[3]uintptr]*site{}
	statsMu.Unlock()
}

// Stats is the loops counted since ResetStats, totals and by call site, each count divided
// by runs.
func Stats(runs int) string {
	statsMu.Lock()
	defer statsMu.Unlock()
	type row struct {
		name string
		s    site
	}
	var rows []row
	var tot site
	for k, s := range sites {
		var names []string
		fr := runtime.CallersFrames(k[:])
		for {
			f, more := fr.Next()
			if f.Function != "" {
				names = append(names, fmt.Sprintf("%s:%d", f.Function[strings.LastIndex(f.Function, "/")+1:], f.Line))
			}
			if !more {
				break
			}
		}
		rows = append(rows, row{strings.Join(names, " < "), *s})
		tot.calls += s.calls
		tot.fanouts += s.fanouts
		tot.extra += s.extra
		tot.joined += s.joined
		tot.mine += s.mine
		tot.chunks += s.chunks
		tot.ns += s.ns
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].s.fanouts > rows[j].s.fanouts })
	r := float64(max(runs, 1))
	var b strings.Builder
	fmt.Fprintf(&b, "per run: For calls %.1f, fan-outs %.1f, helpers asked %.1f, joined %.1f, chunks %.1f, fan-out wall %.3f ms\n",
		float64(tot.calls)/r, float64(tot.fanouts)/r, float64(tot.extra)/r, float64(tot.joined)/r, float64(tot.chunks)/r, float64(tot.ns)/r/1e6)
	for _, x := range rows {
		s := x.s
		f := float64(max(s.fanouts, 1))
		fmt.Fprintf(&b, "  calls %6.1f fanouts %6.1f avg-helpers %4.1f joined %4.1f avg-n %8.1f avg-chunks %6.1f caller-ran %6.1f avg-us %8.1f  %s\n",
			float64(s.calls)/r, float64(s.fanouts)/r, float64(s.extra)/f, float64(s.joined)/f,
			float64(s.n)/float64(s.calls), float64(s.chunks)/float64(s.calls), float64(s.mine)/f, float64(s.ns)/f/1e3, x.name)
	}
	return b.String()
}
