// Normalizations over the channels of [N, C, spatial...] tensors (libs/kernels/cuda/channelnorm.go):
// BatchNormalization's inference form elementwise, and InstanceNormalization and
// GroupNormalization, which normalize each (image, group) item, cpg channels of spatial elements
// contiguous in memory, by its own mean and biased variance. Statistics accumulate in float32,
// two passes (the mean, then the squared deviations from it), reduced across the block:
//   - carve_group_norm_*: one block an item (grid-strided), the item cached in shared memory when
//     it fits (flag CN_CACHED, dynamic shared size len floats), else read three times;
//   - carve_chnorm_part_* then carve_chnorm_apply_*, for few long items: block (b, item) of
//     either takes chunk b of the item; the first writes the chunk's mean and squared deviations
//     (two floats a chunk, the workspace), the second combines the item's chunks (Chan's
//     formula) and normalizes its chunk.
// A vector of V elements never straddles two channels: the V-wide forms run only when spatial
// (and so every item, and every chunk, which is a multiple of 256) is a multiple of V.
#include "common.cuh"

using namespace carve;

enum { CN_PER_GROUP = 1, CN_CACHED = 2 };  // flags of carve_group_norm_* and carve_chnorm_apply_*

namespace {

// ldp is element i of a parameter of type T, or float32 when f32.
template <typename T>
__device__ __forceinline__ float ldp(const void* p, i64 i, int f32) {
  return f32 ? ((const float*)p)[i] : tof(((const T*)p)[i]);
}

template <typename T>
__device__ __forceinline__ bool al16(const T* p) {
  return ((uintptr_t)p & 15) == 0;
}

// batch_norm is y = (x - mean) / sqrt(var + eps) * scale + bias, per channel, V elements a
// thread (spatial a multiple of V). Bit k of pf32 says parameter k (scale, bias, mean, var) is
// float32 rather than T.
template <typename T, int V>
__device__ __forceinline__ void batch_norm(T* out, const T* x, const void* scale, const void* bias, const void* mean,
                                           const void* var, i64 n, i64 c, i64 spatial, float eps, int pf32) {
  GRID_STRIDE(i, n / V) {
    const i64 e = i * V, ch = (e / spatial) % c;
    const float a = ldp<T>(scale, ch, pf32 & 1) / sqrtf(ldp<T>(var, ch, pf32 & 8) + eps);
    const float m = ldp<T>(mean, ch, pf32 & 4), b = ldp<T>(bias, ch, pf32 & 2);
    float f[V];
    vec_load<T, V>(x + e, f);
#pragma unroll
    for (int k = 0; k < V; k++) f[k] = (f[k] - m) * a + b;
    vec_store<T, V>(out + e, f);
  }
}

// normalize writes elements [lo, hi) of item it (group grp) as (x - mean) * inv * scale + bias,
// the parameters per channel (or per group with CN_PER_GROUP), V elements a thread. src gives
// element j's V values.
template <typename T, int V, typename Src>
__device__ __forceinline__ void normalize(T* ys, Src src, const T* scale, const T* bias, int grp, int cpg,
                                          int spatial, int lo, int hi, float mean, float inv, int flags) {
  for (int j = lo + (int)threadIdx.x * V; j < hi; j += (int)blockDim.x * V) {
    const int pc = (flags & CN_PER_GROUP) ? grp : grp * cpg + j / spatial;
    const float a = tof(scale[pc]) * inv, b = tof(bias[pc]);
    float f[V];
    src(j, f);
#pragma unroll
    for (int k = 0; k < V; k++) f[k] = (f[k] - mean) * a + b;
    vec_store<T, V>(ys + j, f);
  }
}

// group_norm normalizes items of len = cpg * spatial elements (< 2^31), one block each.
template <typename T, int V>
__device__ __forceinline__ void group_norm(T* out, const T* x, const T* scale, const T* bias, i64 items, int groups,
                                           int cpg, int spatial, float eps, int flags) {
  extern __shared__ float smem[];
  __shared__ float red[32];
  const bool cached = flags & CN_CACHED;
  const int len = cpg * spatial;
  for (i64 it = blockIdx.x; it < items; it += gridDim.x) {
    const T* xs = x + it * len;
    auto val = [&](int j, float* f) {
      if (cached) {
#pragma unroll
        for (int k = 0; k < V; k++) f[k] = smem[j + k];
      } else {
        vec_load<T, V>(xs + j, f);
      }
    };
    float s = 0.f;
    for (int j = (int)threadIdx.x * V; j < len; j += (int)blockDim.x * V) {
      float f[V];
      vec_load<T, V>(xs + j, f);
#pragma unroll
      for (int k = 0; k < V; k++) {
        if (cached) smem[j + k] = f[k];
        s += f[k];
      }
    }
    const float mean = block_sum(s, red) / (float)len;  // its barriers publish smem too
    float ss = 0.f;
    for (int j = (int)threadIdx.x * V; j < len; j += (int)blockDim.x * V) {
      float f[V];
      val(j, f);
#pragma unroll
      for (int k = 0; k < V; k++) ss += (f[k] - mean) * (f[k] - mean);
    }
    const float inv = 1.f / sqrtf(block_sum(ss, red) / (float)len + eps);
    normalize<T, V>(out + it * len, val, scale, bias, (int)(it % groups), cpg, spatial, 0, len, mean, inv, flags);
    __syncthreads();  // smem is reused by the next item
  }
}

// chnorm_part writes chunk blockIdx.x of item blockIdx.y: its mean and the sum of its squared
// deviations from that mean, at part[2 * (item * chunks + chunk)].
template <typename T, int V>
__device__ __forceinline__ void chnorm_part(float* part, const T* x, int len, int chunk, int chunks) {
  __shared__ float red[32];
  const i64 it = blockIdx.y;
  const int lo = blockIdx.x * chunk, hi = min(len, lo + chunk);
  const T* xs = x + it * len;
  float s = 0.f;
  for (int j = lo + (int)threadIdx.x * V; j < hi; j += (int)blockDim.x * V) {
    float f[V];
    vec_load<T, V>(xs + j, f);
#pragma unroll
    for (int k = 0; k < V; k++) s += f[k];
  }
  const float mean = block_sum(s, red) / (float)(hi - lo);
  float ss = 0.f;
  for (int j = lo + (int)threadIdx.x * V; j < hi; j += (int)blockDim.x * V) {
    float f[V];
    vec_load<T, V>(xs + j, f);
#pragma unroll
    for (int k = 0; k < V; k++) ss += (f[k] - mean) * (f[k] - mean);
  }
  ss = block_sum(ss, red);
  if (threadIdx.x == 0) {
    float* p = part + 2 * (it * chunks + blockIdx.x);
    p[0] = mean;
    p[1] = ss;
  }
}

// chnorm_apply combines item blockIdx.y's chunks (n_b elements of mean m_b and squared
// deviations q_b: mean = sum n_b m_b / len, variance = sum (q_b + n_b (m_b - mean)^2) / len) and
// normalizes chunk blockIdx.x.
template <typename T, int V>
__device__ __forceinline__ void chnorm_apply(T* out, const T* x, const float* part, const T* scale, const T* bias,
                                             int groups, int cpg, int spatial, int chunk, int chunks, float eps,
                                             int flags) {
  __shared__ float red[32];
  const i64 it = blockIdx.y;
  const int len = cpg * spatial;
  const float* p = part + 2 * it * chunks;
  auto count = [&](int b) { return (float)(min(len, (b + 1) * chunk) - b * chunk); };
  float s = 0.f;
  for (int b = threadIdx.x; b < chunks; b += blockDim.x) s += count(b) * p[2 * b];
  const float mean = block_sum(s, red) / (float)len;
  float q = 0.f;
  for (int b = threadIdx.x; b < chunks; b += blockDim.x) {
    const float d = p[2 * b] - mean;
    q += p[2 * b + 1] + count(b) * d * d;
  }
  const float inv = 1.f / sqrtf(block_sum(q, red) / (float)len + eps);
  const T* xs = x + it * len;
  const int lo = blockIdx.x * chunk, hi = min(len, lo + chunk);
  normalize<T, V>(out + it * len, [&](int j, float* f) { vec_load<T, V>(xs + j, f); }, scale, bias,
                  (int)(it % groups), cpg, spatial, lo, hi, mean, inv, flags);
}

}  // namespace

// carve_batch_norm_<T>: see batch_norm; n elements of c channels of spatial elements.
#define BATCH_NORM(name, T)                                                                             \
  extern "C" __global__ void name(T* out, const T* x, const void* scale, const void* bias,             \
                                  const void* mean, const void* var, i64 n, i64 c, i64 spatial,        \
                                  float eps, int pf32) {                                               \
    constexpr int V = 16 / sizeof(T);                                                                  \
    if (spatial % V == 0 && al16(out) && al16(x))                                                      \
      batch_norm<T, V>(out, x, scale, bias, mean, var, n, c, spatial, eps, pf32);                      \
    else                                                                                               \
      batch_norm<T, 1>(out, x, scale, bias, mean, var, n, c, spatial, eps, pf32);                      \
  }
BATCH_NORM(carve_batch_norm_f32, float)
BATCH_NORM(carve_batch_norm_f16, __half)
BATCH_NORM(carve_batch_norm_bf16, bf16)

// carve_group_norm_<T>: see group_norm; items = N * groups of cpg channels of spatial elements.
#define GROUP_NORM(name, T)                                                                              \
  extern "C" __global__ void name(T* out, const T* x, const T* scale, const T* bias, i64 items,         \
                                  int groups, int cpg, int spatial, float eps, int flags) {             \
    constexpr int V = 16 / sizeof(T);                                                                   \
    if (spatial % V == 0 && al16(out) && al16(x))                                                       \
      group_norm<T, V>(out, x, scale, bias, items, groups, cpg, spatial, eps, flags);                   \
    else                                                                                                \
      group_norm<T, 1>(out, x, scale, bias, items, groups, cpg, spatial, eps, flags);                   \
  }
GROUP_NORM(carve_group_norm_f32, float)
GROUP_NORM(carve_group_norm_f16, __half)
GROUP_NORM(carve_group_norm_bf16, bf16)

// carve_chnorm_part_<T> and carve_chnorm_apply_<T>: see chnorm_part and chnorm_apply; the grid is
// (chunks, items), chunk a multiple of 256 elements.
#define CHNORM_SPLIT(part_name, apply_name, T)                                                            \
  extern "C" __global__ void part_name(float* part, const T* x, int cpg, int spatial, int chunk,          \
                                       int chunks) {                                                     \
    constexpr int V = 16 / sizeof(T);                                                                    \
    if (spatial % V == 0 && al16(x))                                                                     \
      chnorm_part<T, V>(part, x, cpg * spatial, chunk, chunks);                                          \
    else                                                                                                 \
      chnorm_part<T, 1>(part, x, cpg * spatial, chunk, chunks);                                          \
  }                                                                                                      \
  extern "C" __global__ void apply_name(T* out, const T* x, const float* part, const T* scale,           \
                                        const T* bias, int groups, int cpg, int spatial, int chunk,      \
                                        int chunks, float eps, int flags) {                              \
    constexpr int V = 16 / sizeof(T);                                                                    \
    if (spatial % V == 0 && al16(out) && al16(x))                                                        \
      chnorm_apply<T, V>(out, x, part, scale, bias, groups, cpg, spatial, chunk, chunks, eps, flags);    \
    else                                                                                                 \
      chnorm_apply<T, 1>(out, x, part, scale, bias, groups, cpg, spatial, chunk, chunks, eps, flags);    \
  }
CHNORM_SPLIT(carve_chnorm_part_f32, carve_chnorm_apply_f32, float)
CHNORM_SPLIT(carve_chnorm_part_f16, carve_chnorm_apply_f16, __half)
CHNORM_SPLIT(carve_chnorm_part_bf16, carve_chnorm_apply_bf16, bf16)
