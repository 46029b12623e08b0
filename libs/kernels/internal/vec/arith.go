package vec

// Op is an elementwise arithmetic operation.
type Op uint8

const (
	Add Op = iota
	Sub
	Mul
	Div
)

func apply(op Op, a, b float32) float32 {
	switch op {
	case Add:
		return a + b
	case Sub:
		return a - b
	case Mul:
		return a * b
	}
	return a / b
}

// VV sets z[i] = x[i] op y[i] (len(x), len(y) >= len(z)).
func VV(op Op, z, x, y []float32) {
	x, y = x[:len(z)], y[:len(z)]
	n := bulk(len(z))
	if n > 0 {
		vv(op, z[:n], x[:n], y[:n])
	}
	for i := n; i < len(z); i++ {
		z[i] = apply(op, x[i], y[i])
	}
}

// VS sets z[i] = x[i] op s.
func VS(op Op, z, x []float32, s float32) {
	x = x[:len(z)]
	n := bulk(len(z))
	if n > 0 {
		vs(op, z[:n], x[:n], s)
	}
	for i := n; i < len(z); i++ {
		z[i] = apply(op, x[i], s)
	}
}

// SV sets z[i] = s op y[i].
func SV(op Op, z []float32, s float32, y []float32) {
	y = y[:len(z)]
	switch op {
	case Add, Mul: // commutative
		VS(op, z, y, s)
		return
	}
	n := bulk(len(z))
	if n > 0 {
		sv(op, z[:n], s, y[:n])
	}
	for i := n; i < len(z); i++ {
		z[i] = apply(op, s, y[i])
	}
}
