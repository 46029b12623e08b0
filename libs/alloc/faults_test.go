package alloc

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInjectFaultsCounts: every counted kind of call is counted once per call, and the
// FailAt-th fails without reaching the device, with ErrInjected (and ErrOutOfMemory for a
// Malloc); calls after it succeed unless Sticky.
func TestInjectFaultsCounts(t *testing.T) {
	cpu := newCPU(t, 1<<20)
	d, f := InjectFaults(cpu, FaultConfig{})
	s, err := d.NewStream()
	require.NoError(t, err)
	p, err := d.Malloc(4096)
	require.NoError(t, err)
	e, err := d.NewEvent()
	require.NoError(t, err)
	require.NoError(t, d.RecordEvent(e, s))
	require.NoError(t, d.WaitEvent(s, e))
	ran := false
	require.NoError(t, d.(hostLauncher).Launch(s, func() { ran = true }))
	require.NoError(t, d.SynchronizeStream(s)) // FaultSync is not in FaultAll
	require.True(t, ran)
	require.Equal(t, int64(6), f.Calls())
	require.Empty(t, f.Failed())
	require.NoError(t, d.Free(p))
	require.NoError(t, d.DestroyEvent(e))
	require.NoError(t, d.DestroyStream(s))

	for _, tc := range []struct {
		name string
		ops  FaultOp
		call func(d Device) error
		oom  bool
		op   FaultOp
	}{
		{"malloc", FaultMalloc, func(d Device) error { _, err := d.Malloc(256); return err }, true, FaultMalloc},
		{"stream", FaultStream, func(d Device) error { _, err := d.NewStream(); return err }, false, FaultStream},
		{"event", FaultEvent, func(d Device) error { _, err := d.NewEvent(); return err }, false, FaultEvent},
		{"launch", FaultLaunch, func(d Device) error {
			return d.(hostLauncher).Launch(1, func() { panic("a failed launch must not run") })
		}, false, FaultLaunch},
		{"sync", FaultSync, func(d Device) error { return d.Synchronize() }, false, FaultSync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cpu := newCPU(t, 1<<20)
			d, f := InjectFaults(cpu, FaultConfig{Ops: tc.ops, FailAt: 1})
			before := cpu.Calls()
			err := tc.call(d)
			require.ErrorIs(t, err, ErrInjected)
			require.Equal(t, tc.oom, errors.Is(err, ErrOutOfMemory))
			require.Equal(t, before, cpu.Calls(), "the failed call did not reach the device")
			require.Equal(t, []FaultRecord{{Call: 1, Op: tc.op, What: f.Failed()[0].What}}, f.Failed())
			require.Contains(t, err.Error(), "cpu: ")
		})
	}

	t.Run("only the FailAt-th, unless sticky", func(t *testing.T) {
		for _, sticky := range []bool{false, true} {
			cpu := newCPU(t, 1<<20)
			d, f := InjectFaults(cpu, FaultConfig{Ops: FaultMalloc, FailAt: 2, Sticky: sticky})
			var errs []error
			for range 4 {
				p, err := d.Malloc(256)
				errs = append(errs, err)
				if err == nil {
					require.NoError(t, d.Free(p))
				}
			}
			require.NoError(t, errs[0])
			require.ErrorIs(t, errs[1], ErrInjected)
			if sticky {
				require.ErrorIs(t, errs[2], ErrInjected)
				require.ErrorIs(t, errs[3], ErrInjected)
				require.Len(t, f.Failed(), 3)
			} else {
				require.NoError(t, errs[2])
				require.NoError(t, errs[3])
				require.Len(t, f.Failed(), 1)
			}
			require.Equal(t, int64(4), f.Calls())
		}
	})
}

// fakeCopier is a device with copies and no Launch, as a simulated or CUDA device.
type fakeCopier struct {
	Device
	in, out int
}

func (c *fakeCopier) CopyIn(dst Ptr, src []byte, s Stream) error  { c.in++; return nil }
func (c *fakeCopier) CopyOut(dst []byte, src Ptr, s Stream) error { c.out++; return nil }

// launchCopier has both.
type launchCopier struct {
	*fakeCopier
	launched int
}

func (c *launchCopier) Launch(s Stream, fn func()) error { c.launched++; return nil }

// TestInjectFaultsKeepsInterfaces: the wrapper has Launch and CopyIn/CopyOut exactly when the
// wrapped device has them, so code that checks for them takes the same path through it.
func TestInjectFaultsKeepsInterfaces(t *testing.T) {
	cpu := newCPU(t, 1<<20)
	noLaunch := struct{ Device }{cpu} // the Device methods only
	fc := &fakeCopier{Device: noLaunch}
	lc := &launchCopier{fakeCopier: &fakeCopier{Device: noLaunch}}
	for _, tc := range []struct {
		name           string
		dev            Device
		launch, copies bool
	}{
		{"cpu", cpu, true, false},
		{"plain", noLaunch, false, false},
		{"copier", fc, false, true},
		{"both", lc, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, f := InjectFaults(tc.dev, FaultConfig{Ops: FaultCopy | FaultLaunch, FailAt: 2})
			_, isL := d.(hostLauncher)
			_, isC := d.(deviceCopier)
			require.Equal(t, tc.launch, isL)
			require.Equal(t, tc.copies, isC)
			require.Equal(t, tc.dev, d.(interface{ Unwrap() Device }).Unwrap())
			if isC {
				c := d.(deviceCopier)
				require.NoError(t, c.CopyIn(0, make([]byte, 8), 1))
				require.ErrorIs(t, c.CopyOut(make([]byte, 8), 0, 1), ErrInjected)
				require.Equal(t, FaultCopy, f.Failed()[0].Op)
			}
		})
	}
	require.Equal(t, 1, fc.in)
	require.Zero(t, fc.out, "the failed copy did not reach the device")
}

// TestInjectFaultsOverSim: over a SimDevice the wrapper keeps CopyIn/CopyOut and LaunchKernel
// (counted as copies and launches) and has no Launch, which would let host code reach its
// memory as host bytes; Faults.Inject counts a call made around the wrapper among the others.
func TestInjectFaultsOverSim(t *testing.T) {
	sim, _, err := NewSim(SimConfig{Memory: 1 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { sim.Close() })
	d, f := InjectFaults(sim, FaultConfig{Ops: FaultCopy | FaultLaunch, FailAt: 3})
	_, isL := d.(hostLauncher)
	require.False(t, isL)
	k, isK := d.(kernelLauncher)
	require.True(t, isK)
	c := d.(deviceCopier)
	s, err := d.NewStream()
	require.NoError(t, err)
	p, err := d.Malloc(8)
	require.NoError(t, err)
	require.NoError(t, c.CopyIn(p, make([]byte, 8), s))
	ran := 0
	require.NoError(t, k.LaunchKernel(s, func() error { ran++; return nil }))
	err = k.LaunchKernel(s, func() error { ran++; return nil })
	require.ErrorIs(t, err, ErrInjected)
	require.Contains(t, err.Error(), "sim: launch kernel (call 3)")
	require.NoError(t, f.Inject(FaultCopy, "a backend's copy"))
	require.NoError(t, d.SynchronizeStream(s))
	require.Equal(t, 1, ran, "the failed launch did not reach the device")
	require.Equal(t, int64(4), f.Calls())

	_, f = InjectFaults(sim, FaultConfig{Ops: FaultCopy, FailAt: 1})
	err = f.Inject(FaultCopy, "cuda:0: copy 8 bytes in")
	require.ErrorIs(t, err, ErrInjected)
	require.Equal(t, "cuda:0: copy 8 bytes in (call 1): injected device fault", err.Error())
	require.NoError(t, f.Inject(FaultMalloc, "not counted: not in Ops"))
}

// TestFailedEventRecordReleasedAtClose: a block whose Free cannot record an event for a
// stream that used it (here: the event cannot be created) is held for good, never handed out
// again, and released at Close, which first waits for the whole device. Before, Close left its
// segment allocated on the device.
func TestFailedEventRecordReleasedAtClose(t *testing.T) {
	cpu := newCPU(t, 64<<20)
	dev, f := InjectFaults(cpu, FaultConfig{Ops: FaultEvent, FailAt: 1})
	al, err := New(dev, Options{})
	require.NoError(t, err)
	s1, s2 := newStream(t, dev), newStream(t, dev)
	a, err := al.Alloc(s1, 4096)
	require.NoError(t, err)
	require.NoError(t, al.RecordStream(a, s2))
	err = al.Free(a)
	require.ErrorIs(t, err, ErrInjected)
	require.Len(t, f.Failed(), 1)
	require.Equal(t, int64(4096), al.Stats().HeldBytes, "held: nothing tells when s2 is done with it")
	b, err := al.Alloc(s1, 4096)
	require.NoError(t, err)
	require.NotEqual(t, a.Ptr(), b.Ptr(), "a held block is not handed out again")
	require.NoError(t, al.Free(b))
	require.NoError(t, al.DestroyStream(s1))
	require.NoError(t, al.DestroyStream(s2))
	require.NoError(t, al.Close())
	st := al.Stats()
	require.Zero(t, st.HeldBytes)
	require.Zero(t, st.SegmentBytes.Current, "segments after close")
	require.Zero(t, st.BytesInUse)
	free, total, err := cpu.MemInfo()
	require.NoError(t, err)
	require.Equal(t, total, free, "every byte back on the device")
}
