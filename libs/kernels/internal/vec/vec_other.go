//go:build !amd64 || purego

package vec

const useAVX2 = false

func expShift(dst, src []float32, shift float32) float32 { panic("unreachable") }

func max8(x []float32) float32 { panic("unreachable") }

func tanhV(dst, src []float32)                              { panic("unreachable") }
func sigmoidV(dst, src []float32, alpha float32, mulx bool) { panic("unreachable") }
func geluTanhV(dst, src []float32)                          { panic("unreachable") }
func erfV(dst, src []float32)                               { panic("unreachable") }
func geluV(dst, src []float32)                              { panic("unreachable") }
