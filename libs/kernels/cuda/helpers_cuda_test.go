//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"carve.dev/libs/alloc"
	acuda "carve.dev/libs/alloc/cuda"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// These tests need a GPU: tools/gpu/build.sh builds them here, tools/gpu/run.sh runs them there.

// shared is the backend every test uses: opened once through the registered driver, closed
// by TestMain (whose exit status reports a failed Close).
var shared struct {
	once sync.Once
	b    *Backend
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.b != nil {
		if err := shared.b.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the CUDA backend:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testBackend returns the CUDA backend on device 0.
func testBackend(t testing.TB) *Backend {
	t.Helper()
	shared.once.Do(func() {
		d, err := kernels.LookupDriver(kernels.BackendCUDA)
		if err != nil {
			shared.err = err
			return
		}
		b, err := d.Open(kernels.OpenOptions{})
		if err != nil {
			shared.err = err
			return
		}
		shared.b = b.(*Backend)
	})
	require.NoError(t, shared.err)
	return shared.b
}

func testStream(t testing.TB, dev *acuda.Device) alloc.Stream {
	t.Helper()
	s, err := dev.NewStream()
	require.NoError(t, err)
	t.Cleanup(func() { dev.DestroyStream(s) })
	return s
}

// devBuf is device memory freed at the end of the test.
func devBuf(t testing.TB, dev *acuda.Device, n int64) alloc.Ptr {
	t.Helper()
	p, err := dev.Malloc(max(n, 256))
	require.NoError(t, err)
	t.Cleanup(func() { dev.Free(p) })
	return p
}

// encode converts float64 values to dt's bytes; decode reads them back.
func encode(dt graph.DType, v []float64) []byte {
	switch dt {
	case graph.Float16:
		u := make([]uint16, len(v))
		for i, x := range v {
			u[i] = float16.Fromfloat32(float32(x)).Bits()
		}
		return kernels.BytesOf(u)
	case graph.BFloat16:
		u := make([]uint16, len(v))
		for i, x := range v {
			u[i] = toBF16(float32(x))
		}
		return kernels.BytesOf(u)
	}
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return kernels.BytesOf(f)
}

func decode(dt graph.DType, b []byte) []float64 {
	switch dt {
	case graph.Float16, graph.BFloat16:
		u := kernels.ViewAs[uint16](b)
		out := make([]float64, len(u))
		for i, x := range u {
			if dt == graph.Float16 {
				out[i] = float64(float16.Frombits(x).Float32())
			} else {
				out[i] = float64(math.Float32frombits(uint32(x) << 16))
			}
		}
		return out
	}
	f := kernels.ViewAs[float32](b)
	out := make([]float64, len(f))
	for i, x := range f {
		out[i] = float64(x)
	}
	return out
}

func toBF16(f float32) uint16 {
	b := math.Float32bits(f)
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// randomValues are uniform in [-1, 1), rounded to dt so that host and device see the same
// operands.
func randomValues(r *rand.Rand, dt graph.DType, n int64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 2*r.Float64() - 1
	}
	return decode(dt, encode(dt, v))
}

// upload puts v on the device as dt and returns a tensor bound to it.
func upload(t testing.TB, b *Backend, s alloc.Stream, dt graph.DType, shape []int64, v []float64) kernels.Tensor {
	t.Helper()
	raw := encode(dt, v)
	p := devBuf(t, b.dev, int64(len(raw)))
	require.NoError(t, b.CopyIn(p, raw, s))
	tn := kernels.Tensor{DType: dt, Shape: shape}
	b.Bind(&tn, p, int64(len(raw)))
	return tn
}

// caseTensors uploads case c's input values vals into device buffers and makes its outputs
// (outputTensor), all bound to b; absent inputs and outputs stay zero Tensors.
func caseTensors(t testing.TB, b *Backend, s alloc.Stream, c kcase, vals [][]float64) (in, out []kernels.Tensor) {
	t.Helper()
	in = make([]kernels.Tensor, len(c.node.Inputs))
	for i, v := range c.node.Inputs {
		if !v.Present() {
			continue
		}
		raw := encodeAny(v.DType, vals[i])
		p := devBuf(t, b.dev, int64(len(raw)))
		require.NoError(t, b.CopyIn(p, raw, s))
		in[i] = kernels.Tensor{DType: v.DType, Shape: v.Shape}
		b.Bind(&in[i], p, int64(len(raw)))
	}
	out = make([]kernels.Tensor, len(c.node.Outputs))
	for i, v := range c.node.Outputs {
		if v.Present() {
			out[i] = outputTensor(t, b, s, v.DType, v.Shape)
		}
	}
	return in, out
}

// outputTensor is a device tensor of dt and shape, filled with NaN bits to catch unwritten
// elements.
func outputTensor(t testing.TB, b *Backend, s alloc.Stream, dt graph.DType, shape []int64) kernels.Tensor {
	t.Helper()
	n, err := kernels.ByteSize(dt, shape)
	require.NoError(t, err)
	p := devBuf(t, b.dev, n)
	require.NoError(t, b.dev.MemsetBytes(p, 0xff, n, s))
	tn := kernels.Tensor{DType: dt, Shape: shape}
	b.Bind(&tn, p, n)
	return tn
}

func download(t testing.TB, b *Backend, s alloc.Stream, tn kernels.Tensor) []float64 {
	t.Helper()
	n, err := kernels.ByteSize(tn.DType, tn.Shape)
	require.NoError(t, err)
	raw := make([]byte, n)
	require.NoError(t, b.CopyOut(raw, tn.Addr, s))
	return decode(tn.DType, raw)
}

// workspace allocates inst's Recipe on the device and carves it.
func workspace(t testing.TB, b *Backend, inst kernels.Instance) *alloc.Workspace {
	t.Helper()
	r := inst.Recipe()
	size, err := r.Size()
	require.NoError(t, err)
	if size == 0 {
		return nil
	}
	ws, err := alloc.Carve(alloc.Region{Ptr: devBuf(t, b.dev, size), Size: size}, r)
	require.NoError(t, err)
	return ws
}

// benchOnly skips a benchmark test unless CARVE_BENCH is set.
func benchOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("CARVE_BENCH") == "" {
		t.Skip("set CARVE_BENCH=1 to measure")
	}
}

// tightWorkspace carves inst's Recipe on b's device with its measured part (WorkspaceMeasurer)
// at what the device says it needs, at least alloc.DefaultPartAlign: the tight plan's carve.
func tightWorkspace(t testing.TB, b *Backend, inst kernels.Instance) *alloc.Workspace {
	t.Helper()
	wm := inst.(WorkspaceMeasurer)
	p := wm.MeasuredPart()
	need, err := wm.MeasureWorkspace(b)
	require.NoError(t, err)
	r := inst.Recipe()
	require.Contains(t, []string{gemmPart, convPart}, r.Parts[p].Name, "a library's cap")
	require.LessOrEqual(t, need, r.Parts[p].Size, "the need is within the cap")
	r.Parts = slices.Clone(r.Parts)
	r.Parts[p].Size = max(need, alloc.DefaultPartAlign)
	size, err := r.Size()
	require.NoError(t, err)
	ws, err := alloc.Carve(alloc.Region{Ptr: devBuf(t, b.dev, size), Size: size}, r)
	require.NoError(t, err)
	return ws
}
