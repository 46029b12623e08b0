package gemm

// kernGo is the portable micro-kernel: 4 x 16 in plain Go, for CPUs without AVX2 and FMA (and
// for checking the assembly ones). Strides are in elements. The C block lives in an array the
// compiler keeps on the stack, and B's rows are read through array pointers, so the inner
// loops have no bounds checks (1.5x faster than indexing slices; about 5 GFLOP/s a core).
func kernGo(rows, k int, a []float32, rsa, csa int, b []float32, rsb int, c []float32, ldc int, alpha float32, acc bool, bias []float32, relu bool) {
	const nr = 16
	var t [4][nr]float32
	for p := 0; p < k; p++ {
		brow := (*[nr]float32)(b[p*rsb:])
		for i := 0; i < rows; i++ {
			av := a[i*rsa+p*csa]
			ti := &t[i]
			for j := 0; j < nr; j++ {
				ti[j] += av * brow[j]
			}
		}
	}
	for i := 0; i < rows; i++ {
		crow := (*[nr]float32)(c[i*ldc:])
		for j := 0; j < nr; j++ {
			v := alpha * t[i][j]
			if bias != nil {
				v += bias[i]
			}
			if acc {
				v += crow[j]
			}
			if relu && v < 0 { // as vec.Relu: NaN and -0 kept
				v = 0
			}
			crow[j] = v
		}
	}
}
