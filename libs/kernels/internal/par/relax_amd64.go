package par

// cpuRelax is one PAUSE: a spin-wait hint that lets the core's other hardware thread run and
// keeps a polling loop from flooding the memory system (onnxruntime's spin loop does the same
// with _mm_pause). Hand-written because Go exposes no spin hint.
func cpuRelax()
