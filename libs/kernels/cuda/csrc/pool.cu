// Pooling over [N, C, D...] tensors: MaxPool and AveragePool over one to three spatial dims (one
// thread an output element, walking its window), GlobalAveragePool and GlobalMaxPool (one block a
// plane, a block reduction). Values accumulate in float32; a max keeps the first NaN it meets, as
// the CPU kernels' (libs/kernels/cpu/pool.go) does.
#include "common.cuh"

using namespace carve;

enum { POOL_MAX = 1, POOL_INCLUDE_PAD = 2 };  // flags of carve_pool_*

namespace {

// nan_max is max(a, b) that keeps a NaN of either: the CPU's `if v > m || v != v { m = v }`.
__device__ __forceinline__ float nan_max(float m, float v) { return (v > m || v != v) ? v : m; }

__device__ __forceinline__ float warp_nan_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// block_nan_max is block_max (common.cuh) with nan_max: the maximum over the block, NaN if any
// thread holds one, returned to every thread. Same scratch rules as block_sum.
__device__ __forceinline__ float block_nan_max(float v, float* scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_nan_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = lane < nw ? scratch[lane] : -INFINITY;
  return warp_nan_max(r);
}

// pool_window computes n output elements of planes of o[0] x o[1] x o[2] from planes of
// in[0] x in[1] x in[2]; a 1-D or 2-D pool comes with its leading spatial dims 1 (kernel 1,
// stride 1, no pads). The taps of a window outside the input are skipped; an average divides by
// the taps inside the input, or with POOL_INCLUDE_PAD by those inside the padded input (begin
// pads pb, end pads pe: not the extra end a ceil_mode window reaches).
template <typename T>
__device__ __forceinline__ void pool_window(T* out, const T* x, i64 n, int flags, const int* in, const int* o,
                                            const int* k, const int* s, const int* d, const int* pb, const int* pe) {
  const bool isMax = flags & POOL_MAX, incl = flags & POOL_INCLUDE_PAD;
  const i64 inVol = (i64)in[0] * in[1] * in[2];
  const i64 outVol = (i64)o[0] * o[1] * o[2];
  GRID_STRIDE(i, n) {
    const i64 plane = i / outVol;
    i64 r = i - plane * outVol;
    const int ow = (int)(r % o[2]);
    r /= o[2];
    const int oh = (int)(r % o[1]), od = (int)(r / o[1]);
    const T* xp = x + plane * inVol;
    float m = -INFINITY, sum = 0.f;
    int valid = 0, padded = 0;
    for (int kz = 0; kz < k[0]; kz++) {
      const int iz = od * s[0] - pb[0] + kz * d[0];
      const bool inZ = iz >= 0 && iz < in[0];
      const bool padZ = iz >= -pb[0] && iz < in[0] + pe[0];
      for (int ky = 0; ky < k[1]; ky++) {
        const int iy = oh * s[1] - pb[1] + ky * d[1];
        const bool inY = inZ && iy >= 0 && iy < in[1];
        const bool padY = padZ && iy >= -pb[1] && iy < in[1] + pe[1];
        for (int kx = 0; kx < k[2]; kx++) {
          const int ix = ow * s[2] - pb[2] + kx * d[2];
          if (padY && ix >= -pb[2] && ix < in[2] + pe[2]) padded++;
          if (!inY || ix < 0 || ix >= in[2]) continue;
          const float v = tof(xp[((i64)iz * in[1] + iy) * in[2] + ix]);
          valid++;
          m = nan_max(m, v);
          sum += v;
        }
      }
    }
    float y = m;
    if (!isMax) {
      const int div = incl ? padded : valid;
      y = div == 0 ? 0.f : sum / (float)div;
    }
    out[i] = fromf<T>(y);
  }
}

// global_pool reduces each contiguous plane of len elements (grid-strided over planes, one block
// each) to its mean or its maximum, V elements a load.
template <typename T, int V>
__device__ __forceinline__ void global_pool(T* out, const T* x, i64 planes, i64 len, int isMax) {
  __shared__ float red[32];
  for (i64 p = blockIdx.x; p < planes; p += gridDim.x) {
    const T* xp = x + p * len;
    float acc = isMax ? -INFINITY : 0.f;
    for (i64 j = (i64)threadIdx.x * V; j < len; j += (i64)blockDim.x * V) {
      float f[V];
      vec_load<T, V>(xp + j, f);
#pragma unroll
      for (int e = 0; e < V; e++) acc = isMax ? nan_max(acc, f[e]) : acc + f[e];
    }
    // both reductions synchronize before writing red, so it is free for the next plane
    acc = isMax ? block_nan_max(acc, red) : block_sum(acc, red) / (float)(len > 0 ? len : 1);
    if (threadIdx.x == 0) out[p] = fromf<T>(acc);
  }
}

}  // namespace

// carve_pool_<T>: MaxPool (flags POOL_MAX) or AveragePool of n = planes * o0 * o1 * o2 outputs;
// see pool_window. Every dim, kernel size, stride, dilation and pad is an int.
#define POOL(name, T)                                                                                    \
  extern "C" __global__ void name(T* out, const T* x, i64 n, int flags, int in0, int in1, int in2,      \
                                  int o0, int o1, int o2, int k0, int k1, int k2, int s0, int s1, int s2, \
                                  int d0, int d1, int d2, int pb0, int pb1, int pb2, int pe0, int pe1,    \
                                  int pe2) {                                                             \
    const int in[3] = {in0, in1, in2}, o[3] = {o0, o1, o2}, k[3] = {k0, k1, k2}, s[3] = {s0, s1, s2};   \
    const int d[3] = {d0, d1, d2}, pb[3] = {pb0, pb1, pb2}, pe[3] = {pe0, pe1, pe2};                    \
    pool_window<T>(out, x, n, flags, in, o, k, s, d, pb, pe);                                            \
  }
POOL(carve_pool_f32, float)
POOL(carve_pool_f16, __half)
POOL(carve_pool_bf16, bf16)

// carve_global_pool_<T>: GlobalMaxPool (isMax 1) or GlobalAveragePool of planes planes of len
// elements; 16-byte loads when x is aligned and len a multiple of the vector.
#define GLOBAL_POOL(name, T)                                                                    \
  extern "C" __global__ void name(T* out, const T* x, i64 planes, i64 len, int isMax) {        \
    constexpr int V = 16 / sizeof(T);                                                          \
    if (len % V == 0 && ((uintptr_t)x & 15) == 0)                                              \
      global_pool<T, V>(out, x, planes, len, isMax);                                           \
    else                                                                                       \
      global_pool<T, 1>(out, x, planes, len, isMax);                                           \
  }
GLOBAL_POOL(carve_global_pool_f32, float)
GLOBAL_POOL(carve_global_pool_f16, __half)
GLOBAL_POOL(carve_global_pool_bf16, bf16)
