//go:build cuda

package cuda

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
)

// carve_gemm_fill_c32 broadcasts C into Y: a kernel with pointer and 64-bit parameters.
func TestLaunchRunsKernel(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	const m, n = 3, 5
	c := upload(t, b, s, graph.Float32, []int64{n}, []float64{1, 2, 3, 4, 5})
	y := outputTensor(t, b, s, graph.Float32, []int64{m, n})
	require.NoError(t, launch(s, "carve_gemm_fill_c32", Dim3{X: 1}, Dim3{X: 64}, 0,
		PtrArg(y.Addr), PtrArg(c.Addr), Int64Arg(m), Int64Arg(n), Int64Arg(0), Int64Arg(1)))
	require.Equal(t, []float64{1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2, 3, 4, 5}, download(t, b, s, y))
}

// Parameters are checked against the kernel's declaration, and unknown kernels are named.
func TestLaunchRefusesBadCalls(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	y := outputTensor(t, b, s, graph.Float32, []int64{4})
	m, err := moduleOf(b.dev)
	require.NoError(t, err)
	var f *kfunc
	require.NoError(t, b.dev.Do(func() error { f, err = m.function("carve_gemm_fill_c32"); return err }))
	if f.nparams < 0 {
		t.Skip("this driver cannot report kernel parameters (cuFuncGetParamInfo), so launch cannot check them")
	}
	require.Equal(t, 6, f.nparams)
	require.Equal(t, []uint8{8, 8, 8, 8, 8, 8}, f.sizes[:6])
	var le *LaunchError
	err = launch(s, "carve_gemm_fill_c32", Dim3{X: 1}, Dim3{X: 32}, 0, PtrArg(y.Addr), PtrArg(y.Addr))
	require.ErrorAs(t, err, &le, "too few arguments")
	t.Log(err)
	err = launch(s, "carve_gemm_fill_c32", Dim3{X: 1}, Dim3{X: 32}, 0,
		PtrArg(y.Addr), PtrArg(y.Addr), Int32Arg(1), Int64Arg(4), Int64Arg(0), Int64Arg(0))
	require.ErrorAs(t, err, &le, "a 4-byte argument for an 8-byte parameter")
	t.Log(err)
	var uk *UnknownKernelError
	err = launch(s, "carve_no_such_kernel", Dim3{X: 1}, Dim3{X: 32}, 0)
	require.True(t, errors.As(err, &uk), "%v", err)
	t.Log(err)
	require.NoError(t, b.dev.SynchronizeStream(s))
}

// launch allocates nothing on the Go heap once the kernel is loaded.
func TestLaunchDoesNotAllocate(t *testing.T) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	y := outputTensor(t, b, s, graph.Float32, []int64{256})
	c := upload(t, b, s, graph.Float32, []int64{1}, []float64{7})
	run := func() {
		if err := launch(s, "carve_gemm_fill_c32", Dim3{X: 1}, Dim3{X: 256}, 0,
			PtrArg(y.Addr), PtrArg(c.Addr), Int64Arg(1), Int64Arg(256), Int64Arg(0), Int64Arg(0)); err != nil {
			t.Fatal(err)
		}
	}
	run()
	require.Zero(t, testing.AllocsPerRun(1000, run))
	require.NoError(t, b.dev.SynchronizeStream(s))
}

func BenchmarkLaunch(bm *testing.B) {
	b := testBackend(bm)
	s := testStream(bm, b.dev)
	y := outputTensor(bm, b, s, graph.Float32, []int64{256})
	bm.ReportAllocs()
	for bm.Loop() {
		if err := launch(s, "carve_gemm_fill_c32", Dim3{X: 1}, Dim3{X: 256}, 0,
			PtrArg(y.Addr), PtrArg(y.Addr), Int64Arg(1), Int64Arg(256), Int64Arg(0), Int64Arg(0)); err != nil {
			bm.Fatal(err)
		}
	}
	require.NoError(bm, b.dev.SynchronizeStream(s))
}
