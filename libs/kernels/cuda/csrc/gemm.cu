// Gemm's C operand, broadcast into Y before cuBLASLt computes Y = alpha*A*B + beta*Y.
// Elements are copied as bits, so one kernel per element size serves every dtype.

template <typename T>
__device__ void fill_c(T* __restrict__ y, const T* __restrict__ c, long long m, long long n, long long sm, long long sn) {
    const long long total = m * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const long long r = i / n, col = i - r * n;
        y[i] = c[r * sm + col * sn];
    }
}

// Y[i, j] = C[i*sm + j*sn] for 4-byte elements (float32).
extern "C" __global__ void carve_gemm_fill_c32(unsigned* y, const unsigned* c, long long m, long long n, long long sm, long long sn) {
    fill_c(y, c, m, n, sm, sn);
}

// Y[i, j] = C[i*sm + j*sn] for 2-byte elements (float16, bfloat16).
extern "C" __global__ void carve_gemm_fill_c16(unsigned short* y, const unsigned short* c, long long m, long long n, long long sm, long long sn) {
    fill_c(y, c, m, n, sm, sn);
}
