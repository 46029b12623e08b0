package gemm

// kernGo is the portable micro-kernel: 4 x 16 in plain Go, for CPUs without AVX2 and FMA (and
// for checking the assembly ones). Strides are in elements.
func kernGo(rows, k int, a []float32, rsa, csa int, b []float32, rsb int, c []float32, ldc int, alpha float32, acc bool) {
	const nr = 16
	var t [4][nr]float32
	for p := 0; p < k; p++ {
		brow := b[p*rsb : p*rsb+nr]
		for i := 0; i < rows; i++ {
			av := a[i*rsa+p*csa]
			ti := &t[i]
			for j, bv := range brow {
				ti[j] += av * bv
			}
		}
	}
	for i := 0; i < rows; i++ {
		crow := c[i*ldc : i*ldc+nr]
		for j := range crow {
			v := alpha * t[i][j]
			if acc {
				v += crow[j]
			}
			crow[j] = v
		}
	}
}
