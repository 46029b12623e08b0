package cuda

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
)

// The CPU side of the GPU comparison (kernels_cuda_test.go): inputs drawn per case, and the CPU
// kernels' outputs on them.

// bf16Bits rounds to bfloat16, nearest even.
func bf16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// encodeAny converts values to dt's bytes (integers and bools exactly).
func encodeAny(dt graph.DType, vs []float64) []byte {
	es := dt.Size()
	b := make([]byte, int64(len(vs))*es)
	for i, x := range vs {
		o := b[int64(i)*es:]
		switch dt {
		case graph.Float32:
			binary.LittleEndian.PutUint32(o, math.Float32bits(float32(x)))
		case graph.Float16:
			binary.LittleEndian.PutUint16(o, float16.Fromfloat32(float32(x)).Bits())
		case graph.BFloat16:
			binary.LittleEndian.PutUint16(o, bf16Bits(float32(x)))
		case graph.Float64:
			binary.LittleEndian.PutUint64(o, math.Float64bits(x))
		case graph.Int64, graph.Uint64:
			binary.LittleEndian.PutUint64(o, uint64(int64(x)))
		case graph.Int32, graph.Uint32:
			binary.LittleEndian.PutUint32(o, uint32(int32(x)))
		case graph.Int16, graph.Uint16:
			binary.LittleEndian.PutUint16(o, uint16(int16(x)))
		case graph.Bool:
			if x != 0 {
				o[0] = 1
			}
		default:
			o[0] = byte(int8(x))
		}
	}
	return b
}

func decodeAny(dt graph.DType, b []byte) []float64 {
	es := dt.Size()
	out := make([]float64, int64(len(b))/es)
	for i := range out {
		o := b[int64(i)*es:]
		switch dt {
		case graph.Float32:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(o)))
		case graph.Float16:
			out[i] = float64(float16.Frombits(binary.LittleEndian.Uint16(o)).Float32())
		case graph.BFloat16:
			out[i] = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(o)) << 16))
		case graph.Float64:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(o))
		case graph.Int64:
			out[i] = float64(int64(binary.LittleEndian.Uint64(o)))
		case graph.Int32:
			out[i] = float64(int32(binary.LittleEndian.Uint32(o)))
		case graph.Int16:
			out[i] = float64(int16(binary.LittleEndian.Uint16(o)))
		case graph.Int8:
			out[i] = float64(int8(o[0]))
		default:
			out[i] = float64(o[0])
		}
	}
	return out
}

// caseInputs draws a case's input values, rounded to each input's dtype.
func caseInputs(c kcase, seed uint64) [][]float64 {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	vals := make([][]float64, len(c.node.Inputs))
	for i, in := range c.node.Inputs {
		if !in.Present() {
			continue
		}
		n := numel(in.Shape)
		g, ok := c.gen[i]
		switch {
		case ok:
		case in.DType == graph.Bool:
			g = ints(0, 2)
		case isFloat(in.DType) || in.DType == graph.Float64:
			g = uniform(-1, 1)
		default:
			g = ints(0, 4)
		}
		vs := g(r, n)
		if int64(len(vs)) != n {
			panic(fmt.Sprintf("case %s: generator of input %d made %d values, want %d", c.name, i, len(vs), n))
		}
		vals[i] = decodeAny(in.DType, encodeAny(in.DType, vs))
	}
	return vals
}

// hostRegion is 256-byte aligned host memory for a CPU kernel's workspace.
func hostRegion(size int64) (alloc.Region, []byte) {
	buf := make([]byte, size+alloc.DefaultPartAlign)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	off := (alloc.DefaultPartAlign - int64(p%uintptr(alloc.DefaultPartAlign))) % alloc.DefaultPartAlign
	return alloc.Region{Ptr: alloc.Ptr(p + uintptr(off)), Size: size}, buf
}

// asF32 is a value with a 16-bit float type replaced by float32 (for CPU kernels that take only
// float32).
func asF32(v kernels.Value) kernels.Value {
	if v.DType == graph.Float16 || v.DType == graph.BFloat16 {
		v.DType = graph.Float32
	}
	return v
}

// runCPU runs the case on the CPU kernels and returns every output's values.
func runCPU(t testing.TB, c kcase, vals [][]float64) [][]float64 {
	n := c.node
	if c.cpuF32 {
		n.Inputs, n.Outputs = make([]kernels.Value, len(c.node.Inputs)), make([]kernels.Value, len(c.node.Outputs))
		for i, v := range c.node.Inputs {
			n.Inputs[i] = asF32(v)
		}
		for i, v := range c.node.Outputs {
			n.Outputs[i] = asF32(v)
		}
	}
	inst, err := cpu.NewRegistry().Select(&n, kernels.CPU(2))
	require.NoError(t, err, "CPU select")
	in := make([]kernels.Tensor, len(n.Inputs))
	for i, v := range n.Inputs {
		if v.Present() {
			in[i] = kernels.Tensor{DType: v.DType, Shape: v.Shape, Data: encodeAny(v.DType, vals[i])}
		}
	}
	out := make([]kernels.Tensor, len(n.Outputs))
	for i, v := range n.Outputs {
		if v.Present() {
			out[i] = kernels.MustTensor(v.DType, v.Shape...)
		}
	}
	size, err := inst.Recipe().Size()
	require.NoError(t, err)
	reg, keep := hostRegion(size)
	require.NoError(t, kernels.Execute(inst, in, out, reg, 0), "CPU run")
	_ = keep[0]
	res := make([][]float64, len(out))
	for i, o := range out {
		if o.Data != nil {
			res[i] = decodeAny(o.DType, o.Data)
		}
	}
	return res
}

// Every case runs on the CPU kernels with the inputs the GPU test draws: the reference side of
// TestKernelsMatchCPU works without a GPU.
func TestCasesRunOnCPU(t *testing.T) {
	for _, c := range allCases() {
		t.Run(c.name, func(t *testing.T) {
			runCPU(t, c, caseInputs(c, seedOf(c.name)))
		})
	}
}

func seedOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}
