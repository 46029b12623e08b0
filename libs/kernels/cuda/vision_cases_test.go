package cuda

import (
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// visionCases are the vision and audio ops but the convolutions: the pools, the channel
// normalizations, Pad and Resize/Upsample, in 1-D to 3-D, odd sizes, strides, dilations and
// pads, each for every float type (the CPU kernels but Pad's take only float32: cpuF32).
func visionCases() []kcase {
	var cs []kcase
	A := kernels.Attrs
	f32, i32, i64 := graph.Float32, graph.Int32, graph.Int64
	// known is a value whose bytes Select knows (Value.Const), with the generator that gives the
	// run the same values
	known := func(dt graph.DType, xs ...float64) (kernels.Value, genFn) {
		val := v(dt, int64(len(xs)))
		val.Const = encodeAny(dt, xs)
		return val, vals(xs...)
	}
	for _, dt := range floatTypes {
		tg := dtTag(dt)
		add := func(c kcase) {
			c.name += "/" + tg
			c.cpuF32 = dt != f32
			cs = append(cs, c)
		}
		x := func(shape ...int64) []kernels.Value { return []kernels.Value{v(dt, shape...)} }

		// MaxPool and AveragePool, after libs/kernels/cpu/pool_test.go: padded, ceil_mode,
		// dilated with asymmetric pads, SAME, 1-D and 3-D, NaN kept by the max
		pool := func(name, op string, attrs graph.Attributes, in, out []int64, gen genFn) {
			c := kcase{name: name, node: nd("", op, attrs, x(in...), v(dt, out...)), kind: "reduce"}
			if gen != nil {
				c.gen = map[int]genFn{0: gen}
			}
			add(c)
		}
		k := func(ks ...int64) []int64 { return ks }
		pool("MaxPool-3x3-s2-p1", "MaxPool", A("kernel_shape", k(3, 3), "strides", k(2, 2), "pads", k(1, 1, 1, 1)), k(2, 3, 9, 8), k(2, 3, 5, 4), nil)
		pool("MaxPool-ceil", "MaxPool", A("kernel_shape", k(3, 3), "strides", k(2, 2), "ceil_mode", 1), k(1, 2, 6, 7), k(1, 2, 3, 3), nil)
		pool("MaxPool-dilated-asym", "MaxPool", A("kernel_shape", k(2, 3), "dilations", k(2, 1), "pads", k(0, 1, 1, 0)), k(1, 2, 9, 9), k(1, 2, 8, 8), nil)
		pool("MaxPool-same-upper", "MaxPool", A("kernel_shape", k(2, 2), "strides", k(2, 2), "auto_pad", "SAME_UPPER"), k(1, 2, 7, 7), k(1, 2, 4, 4), nil)
		pool("MaxPool-1d", "MaxPool", A("kernel_shape", k(3), "strides", k(2), "pads", k(1, 1)), k(2, 3, 11), k(2, 3, 6), nil)
		pool("MaxPool-3d", "MaxPool", A("kernel_shape", k(2, 2, 3), "strides", k(2, 2, 2), "dilations", k(1, 2, 1)), k(1, 2, 5, 7, 7), k(1, 2, 2, 3, 3), nil)
		pool("MaxPool-nan", "MaxPool", A("kernel_shape", k(2, 2), "strides", k(1, 1)), k(1, 2, 6, 9), k(1, 2, 5, 8), specials(uniform(-3, 3)))
		pool("AveragePool-exclude-pad", "AveragePool", A("kernel_shape", k(3, 3), "strides", k(2, 2), "pads", k(1, 1, 1, 1)), k(1, 3, 7, 6), k(1, 3, 4, 3), nil)
		pool("AveragePool-include-pad", "AveragePool", A("kernel_shape", k(3, 3), "strides", k(2, 2), "pads", k(1, 1, 1, 1), "count_include_pad", 1), k(1, 3, 7, 6), k(1, 3, 4, 3), nil)
		pool("AveragePool-ceil-include-pad", "AveragePool", A("kernel_shape", k(3, 3), "strides", k(2, 2), "pads", k(1, 1, 1, 1), "ceil_mode", 1, "count_include_pad", 1), k(1, 1, 6, 6), k(1, 1, 4, 4), nil)
		pool("AveragePool-same-lower-include-pad", "AveragePool", A("kernel_shape", k(3, 3), "strides", k(2, 2), "auto_pad", "SAME_LOWER", "count_include_pad", 1), k(1, 2, 9, 9), k(1, 2, 5, 5), nil)
		pool("AveragePool-1d", "AveragePool", A("kernel_shape", k(4), "strides", k(3)), k(2, 2, 11), k(2, 2, 3), nil)
		pool("AveragePool-3d-dilated", "AveragePool", A("kernel_shape", k(2, 2, 2), "dilations", k(2, 1, 2), "pads", k(1, 0, 1, 0, 1, 1)), k(1, 2, 5, 6, 5), k(1, 2, 4, 6, 5), nil)

		// GlobalAveragePool and GlobalMaxPool: a ResNet's 56 x 56 and 7 x 7 planes (16-byte loads,
		// and one element at a time), 1-D and 3-D, NaN and infinities kept by the max
		global := func(name, op string, in []int64, gen genFn) {
			out := append([]int64{in[0], in[1]}, make([]int64, len(in)-2)...)
			for i := 2; i < len(out); i++ {
				out[i] = 1
			}
			c := kcase{name: name, node: nd("", op, A(), x(in...), v(dt, out...)), kind: "reduce"}
			if gen != nil {
				c.gen = map[int]genFn{0: gen}
			}
			add(c)
		}
		global("GlobalAveragePool-56x56", "GlobalAveragePool", k(2, 64, 56, 56), nil)
		global("GlobalAveragePool-7x7", "GlobalAveragePool", k(1, 5, 7, 7), nil)
		global("GlobalAveragePool-1d", "GlobalAveragePool", k(2, 3, 301), nil)
		global("GlobalAveragePool-3d", "GlobalAveragePool", k(1, 2, 3, 4, 5), nil)
		global("GlobalMaxPool-56x56", "GlobalMaxPool", k(2, 8, 56, 56), nil)
		global("GlobalMaxPool-7x7-specials", "GlobalMaxPool", k(1, 6, 7, 7), specials(uniform(-3, 3)))

		// BatchNormalization: parameters of X's type or float32, 16-byte vectors and odd planes
		bn := func(name string, in []int64, pdt graph.DType, eps float32) {
			c := in[1]
			ins := []kernels.Value{v(dt, in...), v(pdt, c), v(pdt, c), v(pdt, c), v(pdt, c)}
			add(kcase{name: name, node: nd("", "BatchNormalization", A("epsilon", eps), ins, v(dt, in...)), kind: "reduce",
				gen: map[int]genFn{4: uniform(0.2, 2)}})
		}
		bn("BatchNormalization", k(2, 3, 5, 7), dt, 1e-5)
		bn("BatchNormalization-vec", k(2, 8, 16, 16), dt, 1e-3)
		bn("BatchNormalization-2d", k(4, 6), dt, 1e-5)
		bn("BatchNormalization-f32-params", k(1, 4, 9, 8), f32, 1e-5)

		// InstanceNormalization and GroupNormalization: odd planes (element by element), an item
		// cached in shared memory, one beyond the default 48 KiB, items split into chunks (few
		// items longer than a chunk, with vectors and without), opset 18's per-group parameters
		chn := func(name, op string, attrs graph.Attributes, in []int64, plen int64, opset int64) {
			n := nd("", op, attrs, []kernels.Value{v(dt, in...), v(dt, plen), v(dt, plen)}, v(dt, in...))
			n.Opset = opset
			add(kcase{name: name, node: n, kind: "reduce", gen: map[int]genFn{0: uniform(-2, 3)}})
		}
		chn("InstanceNormalization-odd", "InstanceNormalization", A(), k(2, 3, 7, 9), 3, 0)
		chn("InstanceNormalization-1d", "InstanceNormalization", A("epsilon", float32(1e-3)), k(2, 4, 300), 4, 0)
		chn("InstanceNormalization-cached", "InstanceNormalization", A(), k(1, 4, 64, 64), 4, 0)
		chn("InstanceNormalization-cached-64KiB", "InstanceNormalization", A(), k(1, 133, 128, 128), 133, 0)
		chn("InstanceNormalization-split", "InstanceNormalization", A(), k(1, 3, 100, 100), 3, 0)
		chn("GroupNormalization", "GroupNormalization", A("num_groups", 3), k(2, 6, 5, 5), 6, 21)
		chn("GroupNormalization-opset18", "GroupNormalization", A("num_groups", 2, "epsilon", float32(1e-4)), k(2, 6, 5, 5), 2, 18)
		chn("GroupNormalization-direct-vec", "GroupNormalization", A("num_groups", 8), k(1, 64, 32, 32), 64, 21)
		chn("GroupNormalization-split", "GroupNormalization", A("num_groups", 4), k(1, 32, 64, 64), 32, 21)
		chn("GroupNormalization-split-odd", "GroupNormalization", A("num_groups", 2), k(1, 8, 47, 47), 8, 21)
		chn("GroupNormalization-split-opset18", "GroupNormalization", A("num_groups", 2), k(2, 6, 60, 50), 2, 18)

		// Resize and Upsample: every coordinate transformation and nearest mode, scales known at
		// Select, read on the device, or from sizes; opset 10's and Upsample's inputs; the
		// opset-18 axes; 1-D to 4-D
		resize := func(name, op string, attrs graph.Attributes, opset int64, in []int64, rest []kernels.Value, gen map[int]genFn, out []int64) {
			n := nd("", op, attrs, append(x(in...), rest...), v(dt, out...))
			n.Opset = opset
			c := kcase{name: name, node: n, gen: gen}
			if attrs.String("mode", "nearest") != "nearest" {
				c.kind = "reduce"
			}
			add(c)
		}
		scales := func(xs ...float64) (kernels.Value, genFn) { return known(f32, xs...) }
		onDevice := func(xs ...float64) (kernels.Value, genFn) { return v(f32, int64(len(xs))), vals(xs...) }
		lin := func(coord string) graph.Attributes {
			return A("mode", "linear", "coordinate_transformation_mode", coord)
		}
		near := func(coord, round string) graph.Attributes {
			return A("mode", "nearest", "coordinate_transformation_mode", coord, "nearest_mode", round)
		}
		for _, r := range []struct {
			name   string
			attrs  graph.Attributes
			in     []int64
			scales []float64
			device bool
			out    []int64
		}{
			{"Resize-nearest-up", A(), k(1, 1, 2, 2), []float64{1, 1, 2, 3}, false, k(1, 1, 4, 6)},
			{"Resize-nearest-down", A(), k(1, 2, 9, 11), []float64{1, 1, 0.6, 0.6}, false, k(1, 2, 5, 6)},
			{"Resize-nearest-asym-floor-device", near("asymmetric", "floor"), k(2, 3, 5, 7), []float64{1, 1, 2, 2}, true, k(2, 3, 10, 14)},
			{"Resize-nearest-asym-ceil", near("asymmetric", "ceil"), k(1, 2, 5, 6), []float64{1, 1, 1.5, 2.5}, false, k(1, 2, 7, 15)},
			{"Resize-nearest-prefer-ceil", near("half_pixel", "round_prefer_ceil"), k(1, 2, 4, 5), []float64{1, 1, 2, 3}, true, k(1, 2, 8, 15)},
			{"Resize-nearest-symmetric-ceil", near("half_pixel_symmetric", "ceil"), k(1, 2, 6, 6), []float64{1, 1, 1.5, 1.5}, false, k(1, 2, 9, 9)},
			{"Resize-nearest-pytorch-1d", near("pytorch_half_pixel", "round_prefer_floor"), k(2, 3, 7), []float64{1, 1, 2.5}, false, k(2, 3, 17)},
			{"Resize-nearest-align-floor-5d", near("align_corners", "floor"), k(1, 2, 3, 4, 5), []float64{1, 1, 2, 1.5, 0.8}, true, k(1, 2, 6, 6, 4)},
			{"Resize-linear-half-pixel", lin("half_pixel"), k(1, 2, 5, 7), []float64{1, 1, 2, 2}, false, k(1, 2, 10, 14)},
			{"Resize-linear-pytorch-down", lin("pytorch_half_pixel"), k(1, 2, 10, 10), []float64{1, 1, 0.5, 0.5}, false, k(1, 2, 5, 5)},
			{"Resize-linear-asym-device", lin("asymmetric"), k(1, 2, 6, 6), []float64{1, 1, 1.5, 1.5}, true, k(1, 2, 9, 9)},
			{"Resize-linear-symmetric", lin("half_pixel_symmetric"), k(1, 1, 7, 5), []float64{1, 1, 1.7, 2.3}, false, k(1, 1, 11, 11)},
			{"Resize-linear-align-3d", lin("align_corners"), k(3, 6, 5), []float64{1, 2, 2.2}, false, k(3, 12, 11)},
			{"Resize-linear-1d", lin("half_pixel"), k(12), []float64{1.5}, true, k(18)},
		} {
			sv, sg := scales(r.scales...)
			if r.device {
				sv, sg = onDevice(r.scales...)
			}
			resize(r.name, "Resize", r.attrs, 13, r.in, []kernels.Value{none, sv}, map[int]genFn{2: sg}, r.out)
		}
		// sizes: the scales are out/in
		resize("Resize-nearest-sizes-align-prefer-ceil", "Resize", near("align_corners", "round_prefer_ceil"), 13,
			k(1, 3, 5, 5), []kernels.Value{none, none, v(i64, 4)}, map[int]genFn{3: vals(1, 3, 8, 7)}, k(1, 3, 8, 7))
		resize("Resize-linear-sizes-align", "Resize", lin("align_corners"), 13,
			k(2, 3, 4, 5), []kernels.Value{none, v(f32, 0), v(i64, 4)}, map[int]genFn{3: vals(2, 3, 9, 11)}, k(2, 3, 9, 11))
		// the opset-18 axes: scales known and on the device, sizes
		sv, sg := scales(2, 1.5)
		resize("Resize-axes", "Resize", A("axes", k(2, 3)), 18, k(1, 2, 2, 4), []kernels.Value{none, sv}, map[int]genFn{2: sg}, k(1, 2, 4, 6))
		dv, dg := onDevice(2.5, 2)
		resize("Resize-axes-device", "Resize", A("mode", "linear", "axes", k(-1, -2)), 18, k(1, 2, 3, 4), []kernels.Value{none, dv}, map[int]genFn{2: dg}, k(1, 2, 6, 10))
		resize("Resize-axes-sizes", "Resize", A("axes", k(3)), 18, k(1, 2, 4, 5), []kernels.Value{none, none, v(i64, 1)}, map[int]genFn{3: vals(7)}, k(1, 2, 4, 7))
		// opset 10 (X, scales), asymmetric and floor
		sv, sg = scales(1, 1, 2, 1.5)
		resize("Resize-opset10", "Resize", A(), 10, k(1, 2, 3, 3), []kernels.Value{sv}, map[int]genFn{1: sg}, k(1, 2, 6, 4))
		// Upsample: the scales input (opset 9), on the device; the attribute (opset 7), bilinear
		dv, dg = onDevice(1, 1, 2, 3)
		resize("Upsample-opset9", "Upsample", A("mode", "nearest"), 9, k(1, 2, 3, 3), []kernels.Value{dv}, map[int]genFn{1: dg}, k(1, 2, 6, 9))
		resize("Upsample-opset7-bilinear", "Upsample", A("mode", "bilinear", "scales", []float32{1, 1, 2, 2}), 7, k(1, 2, 3, 4), nil, nil, k(1, 2, 6, 8))
	}

	// Pad moves bytes, exactly, and the CPU kernel takes every dtype: no cpuF32
	padCase := func(name string, dt graph.DType, attrs graph.Attributes, opset int64, in, out []int64, rest []kernels.Value, gen map[int]genFn) {
		n := nd("", "Pad", attrs, append([]kernels.Value{v(dt, in...)}, rest...), v(dt, out...))
		n.Opset = opset
		tag := dtTag(dt)
		if tag == "" {
			tag = dt.String()
		}
		cs = append(cs, kcase{name: name + "/" + tag, node: n, gen: gen})
	}
	mode := func(m string) graph.Attributes { return A("mode", m) }
	for _, dt := range []graph.DType{graph.Float32, graph.Float16, graph.BFloat16, graph.Int64, graph.Uint8} {
		pads := func(xs ...float64) (kernels.Value, genFn) { return known(i64, xs...) }
		cv := v(dt)
		p, pg := pads(1, 2, 3, 1)
		padCase("Pad-constant-value", dt, mode("constant"), 19, []int64{4, 5}, []int64{8, 8}, []kernels.Value{p, cv}, map[int]genFn{1: pg, 2: vals(2)})
		p, pg = pads(0, 0, 1, 2, 0, 0, 1, 2)
		padCase("Pad-reflect-4d", dt, mode("reflect"), 19, []int64{1, 2, 3, 4}, []int64{1, 2, 5, 8}, []kernels.Value{p}, map[int]genFn{1: pg})
		p, pg = pads(2, 3, 0, 4)
		padCase("Pad-edge", dt, mode("edge"), 19, []int64{3, 5}, []int64{5, 12}, []kernels.Value{p}, map[int]genFn{1: pg})
		p, pg = pads(2, 7, 0, 9)
		padCase("Pad-wrap", dt, mode("wrap"), 19, []int64{4, 5}, []int64{6, 21}, []kernels.Value{p}, map[int]genFn{1: pg})
		p, pg = pads(3, 0, 4, 5)
		padCase("Pad-reflect-beyond-period", dt, mode("reflect"), 19, []int64{4, 3}, []int64{11, 8}, []kernels.Value{p}, map[int]genFn{1: pg})
		p, pg = pads(-1, 1, 2, -2)
		padCase("Pad-crop", dt, mode("constant"), 19, []int64{4, 5}, []int64{5, 4}, []kernels.Value{p, cv}, map[int]genFn{1: pg, 2: vals(3)})
		// pads (and axes) on the device
		padCase("Pad-device-pads", dt, mode("constant"), 19, []int64{2, 3, 7}, []int64{2, 4, 12}, []kernels.Value{v(i64, 6), cv},
			map[int]genFn{1: vals(0, 1, 2, 0, 0, 3), 2: vals(1)})
		padCase("Pad-device-axes", dt, mode("reflect"), 19, []int64{2, 3, 7}, []int64{2, 3, 10}, []kernels.Value{v(i64, 2), none, v(i32, 1)},
			map[int]genFn{1: vals(1, 2), 3: vals(-1)})
		a, ag := known(i64, 1, 2)
		p, pg = pads(2, 0, 1, 3)
		padCase("Pad-known-axes", dt, mode("edge"), 19, []int64{2, 3, 7}, []int64{2, 6, 10}, []kernels.Value{p, none, a}, map[int]genFn{1: pg, 3: ag})
		p, pg = pads(3, 0)
		padCase("Pad-known-pads-device-axes", dt, mode("wrap"), 19, []int64{2, 3, 7}, []int64{5, 3, 7}, []kernels.Value{p, none, v(i64, 1)},
			map[int]genFn{1: pg, 3: vals(0)})
		// opset 2's attributes, the value a float of the dtype's kind (zero for integers)
		padCase("Pad-opset2", dt, A("pads", []int64{1, 0, 2, 3}, "value", float32(-1.5)), 2, []int64{3, 4}, []int64{6, 7}, nil, nil)
		padCase("Pad-scalar", dt, mode("constant"), 19, []int64{}, []int64{}, []kernels.Value{v(i64, 0)}, map[int]genFn{1: vals()})
	}
	return cs
}
