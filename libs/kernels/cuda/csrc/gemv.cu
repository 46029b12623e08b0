// carve_gemv_<T>_m<M>: y[M, N] = x[M, K] * w[K, N], all row-major, fp32 accumulation, for the
// few rows of a decode step (M <= 8), where the product reads each weight once and is bound by
// memory bandwidth; cuBLASLt's GEMM kernels leave much of the bandwidth unused at these shapes.
//
// A block owns 16 output columns and walks all of K: in a warp, lane & 1 picks 8 of the 16
// columns (one 16-byte load of w) and lane >> 1 one of 16 rows, so a warp reads 16 rows x 32
// bytes (whole sectors) per load; the block's warps take interleaved rows. Each thread keeps
// its M x 8 sums in registers with four loads in flight, the warp sums its 16 row lanes with
// shuffles and the block its warps in shared memory. vec = 0 (N not a multiple of 8, or an
// operand not 16-byte aligned) loads elements one by one.
#include "common.cuh"

namespace {

using carve::fromf;
using carve::tof;

constexpr int kMaxWarps = 16;

template <typename T>
__device__ __forceinline__ void load8(const T* w, i64 k, int N, int col, bool vec, float (&f)[8]) {
  const T* p = w + k * N + col;
  if (vec) {
    union { uint4 u; T e[8]; } v;
    v.u = __ldg(reinterpret_cast<const uint4*>(p));
#pragma unroll
    for (int e = 0; e < 8; e++) f[e] = tof(v.e[e]);
  } else {
#pragma unroll
    for (int e = 0; e < 8; e++) f[e] = col + e < N ? tof(p[e]) : 0.f;
  }
}

template <typename T, int M>
__device__ __forceinline__ void fma8(const T* x, i64 k, int K, const float (&f)[8], float (&acc)[M][8]) {
#pragma unroll
  for (int m = 0; m < M; m++) {
    const float xv = tof(x[(i64)m * K + k]);
#pragma unroll
    for (int e = 0; e < 8; e++) acc[m][e] = fmaf(xv, f[e], acc[m][e]);
  }
}

template <typename T, int M>
__device__ void gemv(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, int K, int N, int vec) {
  __shared__ float red[kMaxWarps][M][16];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  const int cx = lane & 1, col = blockIdx.x * 16 + cx * 8;
  const int step = nw * 16;
  float acc[M][8];
#pragma unroll
  for (int m = 0; m < M; m++)
#pragma unroll
    for (int e = 0; e < 8; e++) acc[m][e] = 0.f;
  if (col < N) {
    int k = warp * 16 + (lane >> 1);
    for (; k + 3 * step < K; k += 4 * step) {
      float f0[8], f1[8], f2[8], f3[8];
      load8(w, k, N, col, vec, f0);
      load8(w, k + step, N, col, vec, f1);
      load8(w, k + 2 * step, N, col, vec, f2);
      load8(w, k + 3 * step, N, col, vec, f3);
      fma8<T, M>(x, k, K, f0, acc);
      fma8<T, M>(x, k + step, K, f1, acc);
      fma8<T, M>(x, k + 2 * step, K, f2, acc);
      fma8<T, M>(x, k + 3 * step, K, f3, acc);
    }
    for (; k < K; k += step) {
      float f0[8];
      load8(w, k, N, col, vec, f0);
      fma8<T, M>(x, k, K, f0, acc);
    }
  }
  // the warp's 16 row lanes (lane bits 1..4)
#pragma unroll
  for (int m = 0; m < M; m++)
#pragma unroll
    for (int e = 0; e < 8; e++) {
      float s = acc[m][e];
#pragma unroll
      for (int o = 2; o < 32; o <<= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
      acc[m][e] = s;
    }
  if ((lane >> 1) == 0) {
#pragma unroll
    for (int m = 0; m < M; m++)
#pragma unroll
      for (int e = 0; e < 8; e++) red[warp][m][cx * 8 + e] = acc[m][e];
  }
  __syncthreads();
  for (int t = threadIdx.x; t < M * 16; t += blockDim.x) {
    const int m = t / 16, c = t % 16, n = blockIdx.x * 16 + c;
    if (n >= N) continue;
    float s = 0.f;
    for (int q = 0; q < nw; q++) s += red[q][m][c];
    y[(i64)m * N + n] = fromf<T>(s);
  }
}

}  // namespace

#define GEMV(T, tag, M)                                                                              \
  extern "C" __global__ void __launch_bounds__(kMaxWarps * 32)                                       \
      carve_gemv_##tag##_m##M(const T* x, const T* w, T* y, int K, int N, int vec) {                 \
    gemv<T, M>(x, w, y, K, N, vec);                                                                  \
  }
#define GEMV_ALL(T, tag) \
  GEMV(T, tag, 1) GEMV(T, tag, 2) GEMV(T, tag, 3) GEMV(T, tag, 4) GEMV(T, tag, 5) GEMV(T, tag, 6) GEMV(T, tag, 7) GEMV(T, tag, 8)

GEMV_ALL(bf16, bf16)
GEMV_ALL(__half, f16)
