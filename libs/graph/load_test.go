package graph_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
)

// mlp is a small valid model: y = Reshape(MatMul(x, w) + b, [batch*seq, 4]).
func mlp() *mb {
	return newModel().
		input("x", f32, "batch", "seq", 8).
		initFloat("w", []int64{8, 4}, make([]float32, 32)...).
		initFloat("b", []int64{4}, 1, 2, 3, 4).
		initInt64("shape", []int64{2}, -1, 4).
		node("MatMul", []string{"x", "w"}, []string{"mm"}).
		node("Add", []string{"mm", "b"}, []string{"add"}).
		node("Reshape", []string{"add", "shape"}, []string{"y"}).
		output("y")
}

func TestParseValidModel(t *testing.T) {
	data := mlp().bytes(t)
	m, err := graph.Parse(data, "")
	require.NoError(t, err)
	require.Equal(t, []string{"batch", "seq"}, m.DimNames)
	require.Len(t, m.Nodes, 3)
	y := m.Value("y")
	require.Equal(t, "[batch*seq, 4]", y.Shape.String())
	require.True(t, y.Output)

	// Embedded weights alias the caller's buffer: no copy.
	w, err := m.Value("b").Init.Bytes()
	require.NoError(t, err)
	require.Len(t, w, 16)
	start, end := uintptr(unsafe.Pointer(&data[0])), uintptr(unsafe.Pointer(&data[len(data)-1]))
	p := uintptr(unsafe.Pointer(&w[0]))
	require.True(t, p >= start && p <= end, "initializer bytes alias the model buffer")

	b, err := graph.Bind(m, map[string]int64{"batch": 2, "seq": 3})
	require.NoError(t, err)
	require.Equal(t, []int64{6, 4}, b.Shape(y))
	require.Equal(t, int64(6*4*4), b.Size(y))
	h, ok := b.Host(m.Value("shape"))
	require.True(t, ok)
	vals, err := h.Int64s()
	require.NoError(t, err)
	require.Equal(t, []int64{-1, 4}, vals)
}

// TestHostileModels: malformed and hostile models fail with a clear, typed error.
func TestHostileModels(t *testing.T) {
	big := int64(1) << 40
	tests := []struct {
		name  string
		model func() *mb
		want  string // substring of the error
	}{
		{"cycle", func() *mb {
			return newModel().input("x", f32, 2).
				node("Add", []string{"x", "b"}, []string{"a"}).
				node("Neg", []string{"a"}, []string{"b"}).output("b")
		}, "cycle"},
		{"self loop", func() *mb {
			return newModel().input("x", f32, 2).node("Add", []string{"x", "a"}, []string{"a"}).output("a")
		}, "cycle"},
		{"dangling input", func() *mb {
			return newModel().input("x", f32, 2).node("Add", []string{"x", "nope"}, []string{"a"}).output("a")
		}, `"nope": input is not a graph input`},
		{"value defined twice", func() *mb {
			return newModel().input("x", f32, 2).node("Neg", []string{"x"}, []string{"a"}).
				node("Abs", []string{"x"}, []string{"a"}).output("a")
		}, "defined more than once"},
		{"output of nothing", func() *mb { return newModel().input("x", f32, 2).output("zzz") }, "graph output is not defined"},
		{"raw data of the wrong size", func() *mb {
			return mlp().initRaw("bad", f32, []int64{3}, make([]byte, 11))
		}, `tensor "bad": raw_data holds 11 bytes, want 12`},
		{"typed data of the wrong count", func() *mb { return mlp().initInt64("bad", []int64{3}, 1, 2) }, `tensor "bad": bad data`},
		{"negative initializer dim", func() *mb { return mlp().initRaw("bad", f32, []int64{-1}, nil) }, "negative"},
		{"initializer byte size overflows", func() *mb {
			return mlp().initRaw("bad", f32, []int64{big, big}, nil)
		}, "overflows int64"},
		{"negative input dim", func() *mb { return newModel().input("x", f32, -3).output("x") }, "negative"},
		{"unsupported dtype", func() *mb { return newModel().input("x", 8, 2).output("x") }, "element type string"},
		{"unsupported op", func() *mb {
			return newModel().input("x", f32, 2).node("Frobnicate", []string{"x"}, []string{"a"}).
				msNode("Frob2", []string{"a"}, []string{"b"}).output("b")
		}, `Frobnicate (domain ai.onnx, node "Frobnicate_a"), Frob2 (domain com.microsoft, node "Frob2_b"); supported: Abs Add And`},
		{"old opset", func() *mb {
			m := mlp()
			m.opset = 11
			return m
		}, "opset 11 is not supported"},
		{"reshape to runtime data", func() *mb {
			return newModel().input("x", f32, 4).input("s", i64, 1).
				node("Reshape", []string{"x", "s"}, []string{"y"}).output("y")
		}, "the target shape (input 1, \"s\") is not computable on the host"},
		{"matmul inner dims", func() *mb {
			return newModel().input("x", f32, "b", 8).initFloat("w", []int64{7, 2}, make([]float32, 14)...).
				node("MatMul", []string{"x", "w"}, []string{"y"}).output("y")
		}, "inner dims of MatMul: 8 != 7"},
		{"reshape count", func() *mb {
			return newModel().input("x", f32, 2, 3).initInt64("s", []int64{2}, 5, 5).
				node("Reshape", []string{"x", "s"}, []string{"y"}).output("y")
		}, "changes the element count"},
		{"broadcast", func() *mb {
			return newModel().input("x", f32, 2, 3).input("z", f32, 4, 3).
				node("Add", []string{"x", "z"}, []string{"y"}).output("y")
		}, "do not broadcast"},
		{"concat overflow", func() *mb {
			return newModel().input("x", f32, int64(1)<<62).input("z", f32, int64(1)<<62).
				node("Concat", []string{"x", "z", "x"}, []string{"y"}, attrInt("axis", 0)).output("y")
		}, "overflows int64"},
		{"bad axis", func() *mb {
			return newModel().input("x", f32, 2).node("Concat", []string{"x"}, []string{"y"}, attrInt("axis", 5)).output("y")
		}, "axis 5 is out of range"},
		{"bad perm", func() *mb {
			return newModel().input("x", f32, 2, 3).node("Transpose", []string{"x"}, []string{"y"}, attrInts("perm", 0, 0)).output("y")
		}, "not a permutation"},
		{"external data outside the directory", func() *mb {
			return mlp().initExternal("e", f32, []int64{2}, "location", "../secret.bin")
		}, "not a relative path inside the model's directory"},
		{"external data at an absolute path", func() *mb {
			return mlp().initExternal("e", f32, []int64{2}, "location", "/etc/passwd")
		}, "not a relative path"},
		{"external data length mismatch", func() *mb {
			return mlp().initExternal("e", f32, []int64{2}, "location", "w.bin", "length", "7")
		}, "length 7 does not match the tensor's 8 bytes"},
		{"external data bad offset", func() *mb {
			return mlp().initExternal("e", f32, []int64{2}, "location", "w.bin", "offset", "-5")
		}, "not a non-negative integer"},
		{"squeeze a dim that is not 1", func() *mb {
			return newModel().input("x", f32, 2, 3).initInt64("ax", []int64{1}, 0).
				node("Squeeze", []string{"x", "ax"}, []string{"y"}).output("y")
		}, "squeezed dim 0: 2 != 1"},
		{"gather index out of range", func() *mb {
			return newModel().input("x", f32, 2, 3).initInt64("i", []int64{1}, 7).
				node("Shape", []string{"x"}, []string{"s"}).
				node("Gather", []string{"s", "i"}, []string{"y"}).output("y")
		}, "index 7 is out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := graph.Parse(tc.model().bytes(t), t.TempDir())
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			var me *graph.ModelError
			var ue *graph.UnsupportedOpError
			require.True(t, errors.As(err, &me) || errors.As(err, &ue), "typed error, got %T", err)
		})
	}
}

// TestBindErrors: bindings that do not fit fail with a *BindError naming the node.
func TestBindErrors(t *testing.T) {
	huge := newModel().input("x", f32, "n", "n").node("Neg", []string{"x"}, []string{"y"}).output("y")
	inner := newModel().input("x", f32, "b", "k").input("w", f32, "k2", 4).
		node("MatMul", []string{"x", "w"}, []string{"y"}).output("y")
	reshape := newModel().input("x", f32, "a", 3).initInt64("s", []int64{2}, -1, 2).
		node("Reshape", []string{"x", "s"}, []string{"y"}).output("y")
	rng := newModel().input("x", f32, "n").initInt64("z", nil, 0).initInt64("one", nil, 1).initInt64("lim", nil, int64(1)<<62).
		node("Range", []string{"z", "lim", "one"}, []string{"r"}).output("r")
	cos := newModel().input("x", f32, "n").initInt64("s", []int64{2}, int64(1)<<40, int64(1)<<40).
		node("ConstantOfShape", []string{"s"}, []string{"y"}).output("y")
	expand := newModel().input("x", f32, "n", 1).initInt64("s", []int64{2}, 1, int64(1)<<62).
		node("Expand", []string{"x", "s"}, []string{"y"}).output("y")
	tests := []struct {
		name string
		m    *mb
		dims map[string]int64
		want string
	}{
		{"constant of a huge shape", cos, map[string]int64{"n": 1}, "overflows int64"},
		{"expand to a huge shape", expand, map[string]int64{"n": 3}, "overflows int64"},
		{"missing dim", mlp(), map[string]int64{"batch": 1}, `dim "seq" has no value`},
		{"unknown dim", mlp(), map[string]int64{"batch": 1, "seq": 2, "zz": 3}, `no dim "zz"`},
		{"negative dim", mlp(), map[string]int64{"batch": -1, "seq": 2}, "negative"},
		{"byte size overflows", huge, map[string]int64{"n": 1 << 31}, "overflows int64"},
		{"inner dims", inner, map[string]int64{"b": 2, "k": 3, "k2": 5}, "inner dims of MatMul: k == k2"},
		{"reshape not divisible", reshape, map[string]int64{"a": 3}, "9 is not a multiple of 2"},
		{"range too long", rng, map[string]int64{"n": 1}, "overflows int64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Parse(tc.m.bytes(t), "")
			require.NoError(t, err)
			_, err = graph.Bind(m, tc.dims)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			var be *graph.BindError
			require.ErrorAs(t, err, &be)
		})
	}
}

// TestCorruptModels: truncations and random byte flips of a real model never panic.
func TestCorruptModels(t *testing.T) {
	data, err := testmodels.MustGet("contrib_gqa").Bytes()
	require.NoError(t, err)
	for _, n := range []int{0, 1, 2, 7, 100, len(data) / 3, len(data) / 2, len(data) - 1} {
		_, err := graph.Parse(data[:n], "")
		if n > 0 {
			require.Error(t, err, "truncated to %d bytes", n)
		}
	}
	seed := uint64(rand.Int64())
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i < 200; i++ {
		b := append([]byte(nil), data...)
		for k := 0; k < 1+rng.IntN(4); k++ {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("seed %d, try %d: panic: %v", seed, i, r)
				}
			}()
			if m, err := graph.Parse(b, ""); err == nil {
				if bd, err := graph.Bind(m, map[string]int64{"batch": 2, "seq": 3}); err == nil {
					_, _ = bd.Lifetimes(nil)
				}
			}
		}()
	}
}

// TestExternalData: weights in a side file are mapped once and validated; a missing file
// fails only when the bytes are asked for.
func TestExternalData(t *testing.T) {
	m := testmodels.MustGet("llama")
	path := m.WriteTemp(t)
	g, err := graph.Load(path)
	require.NoError(t, err)
	defer g.Close()
	file, err := os.ReadFile(filepath.Join(filepath.Dir(path), m.ExternalData))
	require.NoError(t, err)
	var first []byte
	var firstOff int64
	ext := 0
	for _, v := range g.Initializers {
		b, err := v.Init.Bytes()
		require.NoError(t, err)
		require.Len(t, b, int(v.Init.Size))
		e, ok := v.Init.External()
		if !ok {
			continue
		}
		ext++
		require.Equal(t, file[e.Offset:e.Offset+e.Length], b, v.Name)
		if first == nil {
			first, firstOff = b, e.Offset
			continue
		}
		// One mapping per file: tensors lie at their offsets' distance in memory.
		if len(b) > 0 && len(first) > 0 {
			d := int64(uintptr(unsafe.Pointer(&b[0])) - uintptr(unsafe.Pointer(&first[0])))
			require.Equal(t, e.Offset-firstOff, d, "tensors of one file share one mapping")
		}
	}
	require.Greater(t, ext, 5)

	// Without the data file the model still loads and binds.
	dir := t.TempDir()
	b, err := m.Bytes()
	require.NoError(t, err)
	p := filepath.Join(dir, m.OnnxName())
	require.NoError(t, os.WriteFile(p, b, 0o644))
	g2, err := graph.Load(p)
	require.NoError(t, err)
	defer g2.Close()
	_, err = graph.Bind(g2, map[string]int64{"batch": 2, "seq": 5})
	require.NoError(t, err)
	for _, v := range g2.Initializers {
		if _, ok := v.Init.External(); ok {
			_, err := v.Init.Bytes()
			var ee *graph.ExternalDataError
			require.ErrorAs(t, err, &ee)
			require.ErrorIs(t, err, os.ErrNotExist)
			break
		}
	}

	// A data file too short for the offsets is rejected at load.
	require.NoError(t, os.WriteFile(filepath.Join(dir, m.ExternalData), file[:len(file)/2], 0o644))
	_, err = graph.Load(p)
	require.ErrorContains(t, err, "lie outside")
}

func TestLoadMissingFile(t *testing.T) {
	_, err := graph.Load(filepath.Join(t.TempDir(), "nope.onnx"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
