package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Kernel profiling: while a Profile is attached to a session (Session.Profile), every run of it
// is eager, even with RuntimeOptions.Graphs, and each kernel is queued between two timing
// events; after the run the device's elapsed time between each pair is added to the Profile,
// by node. Before each kernel's first event the stream is held back for ProfileStall (on a
// kernels.Staller backend), so that the host has queued the kernel and its closing event
// before the device reaches them and a kernel's time holds no launch gap of the host. (One
// stall before the whole run does not do: the driver's queue holds about a thousand commands,
// so a large model's later kernels would be paced by the host again.) A kernel timed so still
// carries the device's own cost of starting it after the event (microseconds, about what a
// kernel in a CUDA graph costs): after each run an empty kernel is timed the same way, and its
// time, the floor, is what Profile.NetMs takes off each kernel. A step's time in a graph minus
// the net sum is what the gaps between kernels cost.
//
// Invariants:
//  1. Off (no Profile attached), a run pays one nil check: no event, no allocation.
//  2. A profiled run is the same computation as an unprofiled one: the same kernels, in the
//     same order, on the same stream; only events and the stall are added.
//  3. The events are made at the first profiled run of a program of n kernels (2n of them,
//     grown, never shrunk) and destroyed when the profile is detached or the session closed.

// ProfileStall is how long a profiled run holds its stream back before each kernel: the time
// the host has to queue the kernel (a node's kernel may launch several) and its closing event.
const ProfileStall = 200 * time.Microsecond

// Profile is the device time of each kernel over the profiled runs of a session.
type Profile struct {
	Runs    int          // runs profiled
	Kernels []KernelTime // by node, in the order first run
	// FloorMs sums, over the runs, the time of an empty kernel timed as the kernels are (0
	// without a kernels.Staller backend).
	FloorMs float64
	index   map[*graph.Node]int
}

// KernelTime is one node's kernel over the profiled runs.
type KernelTime struct {
	Node     *graph.Node
	Tactic   string
	Launches int     // times it ran
	Ms       float64 // device milliseconds, summed over its launches
}

// OpTime is the kernels of one op type over the profiled runs.
type OpTime struct {
	Op       string // the node's OpType, prefixed with its domain outside ai.onnx ("com.microsoft.GroupQueryAttention")
	Launches int
	Ms       float64
}

// Reset forgets what p measured, keeping it attached.
func (p *Profile) Reset() {
	p.Runs, p.Kernels, p.FloorMs = 0, p.Kernels[:0], 0
	clear(p.index)
}

// Floor is the mean time of an empty kernel timed as the kernels are: each launch's share of
// a kernel's time that is the device starting it, not running it.
func (p *Profile) Floor() float64 {
	if p.Runs == 0 {
		return 0
	}
	return p.FloorMs / float64(p.Runs)
}

// NetMs is ms, the time of launches kernels, less each one's floor.
func (p *Profile) NetMs(ms float64, launches int) float64 {
	return max(ms-float64(launches)*p.Floor(), 0)
}

// TotalMs is the device milliseconds of every kernel over the profiled runs.
func (p *Profile) TotalMs() float64 {
	var t float64
	for _, k := range p.Kernels {
		t += k.Ms
	}
	return t
}

// ByOp sums the kernels by op type, the most time first.
func (p *Profile) ByOp() []OpTime {
	at := map[string]int{}
	var ops []OpTime
	for _, k := range p.Kernels {
		op := k.Node.OpType
		if k.Node.Domain != "" {
			op = k.Node.Domain + "." + op
		}
		i, ok := at[op]
		if !ok {
			i = len(ops)
			at[op] = i
			ops = append(ops, OpTime{Op: op})
		}
		ops[i].Launches += k.Launches
		ops[i].Ms += k.Ms
	}
	slices.SortStableFunc(ops, func(a, b OpTime) int {
		switch {
		case a.Ms > b.Ms:
			return -1
		case a.Ms < b.Ms:
			return 1
		}
		return 0
	})
	return ops
}

func (p *Profile) add(n *graph.Node, tactic string, ms float64) {
	if p.index == nil {
		p.index = map[*graph.Node]int{}
	}
	i, ok := p.index[n]
	if !ok {
		i = len(p.Kernels)
		p.index[n] = i
		p.Kernels = append(p.Kernels, KernelTime{Node: n, Tactic: tactic})
	}
	p.Kernels[i].Launches++
	p.Kernels[i].Ms += ms
}

// ProfileError reports a profile the session's device cannot take.
type ProfileError struct {
	Device string
}

func (e *ProfileError) Error() string {
	return fmt.Sprintf("profiling kernels needs a device with timing events (CUDA); %s has none", e.Device)
}

// profiler is a session's attached Profile and its events.
type profiler struct {
	p          *Profile
	timer      alloc.Timer
	start, end []alloc.Event
}

// Profile attaches p to the session: its later runs are eager, each kernel timed into p (see
// the invariants above). Profile(nil) detaches the profile and releases its events. It fails
// with *ProfileError on a device that cannot time its events.
func (s *Session) Profile(p *Profile) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stopProfile(); err != nil {
		return err
	}
	if p == nil {
		return nil
	}
	dev := s.rt.Backend.Device()
	timer, ok := dev.(alloc.Timer)
	if !ok {
		return &ProfileError{Device: dev.Name()}
	}
	s.prof = &profiler{p: p, timer: timer}
	return nil
}

// stopProfile detaches the profile and destroys its events.
func (s *Session) stopProfile() error {
	pr := s.prof
	if pr == nil {
		return nil
	}
	s.prof = nil
	dev := s.rt.Backend.Device()
	var err error
	for _, evs := range [][]alloc.Event{pr.start, pr.end} {
		for _, ev := range evs {
			err = errors.Join(err, dev.DestroyEvent(ev))
		}
	}
	return err
}

// profile runs prog eagerly with each kernel between two timing events and adds their times.
func (s *Session) profile(prog *program) error {
	pr, dev := s.prof, s.rt.Backend.Device()
	n := len(prog.steps)
	for len(pr.start) < n+1 { // one pair per kernel, and one for the floor
		a, err := pr.timer.NewTimingEvent()
		if err != nil {
			return err
		}
		b, err := pr.timer.NewTimingEvent()
		if err != nil {
			return errors.Join(err, dev.DestroyEvent(a))
		}
		pr.start, pr.end = append(pr.start, a), append(pr.end, b)
	}
	s.err = nil
	staller, stall := s.rt.Backend.(kernels.Staller)
	launcher, host := s.rt.Backend.(kernels.Launcher)
	for i := range prog.steps {
		if stall {
			if err := staller.Stall(s.stream, ProfileStall); err != nil {
				return s.abandon(err)
			}
		}
		if err := dev.RecordEvent(pr.start[i], s.stream); err != nil {
			return s.abandon(err)
		}
		if err := s.launchStep(prog, i, launcher, host); err != nil {
			return err
		}
		if err := dev.RecordEvent(pr.end[i], s.stream); err != nil {
			return s.abandon(err)
		}
	}
	if stall { // the floor: an empty kernel (a stall of 0), timed as the kernels are
		err := staller.Stall(s.stream, ProfileStall)
		if err == nil {
			err = dev.RecordEvent(pr.start[n], s.stream)
		}
		if err == nil {
			err = staller.Stall(s.stream, 0)
		}
		if err == nil {
			err = dev.RecordEvent(pr.end[n], s.stream)
		}
		if err != nil {
			return s.abandon(err)
		}
	}
	if err := s.finish(prog); err != nil {
		return err
	}
	if stall {
		ms, err := pr.timer.ElapsedMs(pr.start[n], pr.end[n])
		if err != nil {
			return err
		}
		pr.p.FloorMs += float64(ms)
	}
	for i := range prog.steps {
		ms, err := pr.timer.ElapsedMs(pr.start[i], pr.end[i])
		if err != nil {
			return err
		}
		ps := &prog.steps[i]
		pr.p.add(ps.node, ps.inst.Tactic(), float64(ms))
	}
	pr.p.Runs++
	return nil
}
