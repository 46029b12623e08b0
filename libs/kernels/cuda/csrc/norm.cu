// Row kernels: LayerNormalization, SimplifiedLayerNormalization (RMSNorm) and the contrib
// Skip* forms, Softmax and LogSoftmax. One block per row; statistics accumulate in float32 and
// are reduced across the block. When the row fits in shared memory (flag NORM_CACHED, the
// dynamic shared size is h floats) it is read from global memory once; otherwise twice.
#include "common.cuh"

using namespace carve;

namespace {

enum { NORM_SIMPLE = 1, NORM_STATS_F32 = 2, NORM_CACHED = 4 };

enum { NORM_THREADS = 512 };  // the most threads a carve_norm_rows block has (launch bounds)

template <typename T>
__device__ __forceinline__ void write_stat(void* p, i64 r, float v, bool f32) {
  if (!p) return;
  if (f32) ((float*)p)[r] = v;
  else ((T*)p)[r] = fromf<T>(v);
}

// layer_norm normalizes row blockIdx.x (grid-strided over rows) with V elements per access.
template <typename T, int V>
__device__ __forceinline__ void layer_norm(T* out, const T* x, const T* skip, const T* addBias, const T* gamma,
                                           const T* beta, T* sumOut, void* meanOut, void* invOut, i64 rows,
                                           i64 h, i64 skipRows, float eps, int flags) {
  extern __shared__ float smem[];
  __shared__ float red[32];
  const bool simple = flags & NORM_SIMPLE, cached = flags & NORM_CACHED;
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * h;
    const T* sr = skip ? skip + (r % skipRows) * h : nullptr;
    // value j..j+V of the row after the skip and bias additions
    auto val = [&](i64 j, float* f) {
      vec_load<T, V>(xr + j, f);
      if (sr) {
        float g[V];
        vec_load<T, V>(sr + j, g);
#pragma unroll
        for (int k = 0; k < V; k++) f[k] += g[k];
      }
      if (addBias) {
        float g[V];
        vec_load<T, V>(addBias + j, g);
#pragma unroll
        for (int k = 0; k < V; k++) f[k] += g[k];
      }
    };
    float s = 0.f;
    for (i64 j = (i64)threadIdx.x * V; j < h; j += (i64)blockDim.x * V) {
      float f[V];
      val(j, f);
      if (sumOut) vec_store<T, V>(sumOut + r * h + j, f);
#pragma unroll
      for (int k = 0; k < V; k++) {
        if (cached) smem[j + k] = f[k];
        s += simple ? f[k] * f[k] : f[k];
      }
    }
    s = block_sum(s, red);
    float mean = 0.f, var;
    if (simple) {
      var = s / (float)h;
    } else {
      mean = s / (float)h;
      float ss = 0.f;
      for (i64 j = (i64)threadIdx.x * V; j < h; j += (i64)blockDim.x * V) {
        float f[V];
        if (cached) {
#pragma unroll
          for (int k = 0; k < V; k++) f[k] = smem[j + k];
        } else {
          val(j, f);
        }
#pragma unroll
        for (int k = 0; k < V; k++) ss += (f[k] - mean) * (f[k] - mean);
      }
      var = block_sum(ss, red) / (float)h;
    }
    const float inv = 1.f / sqrtf(var + eps);
    for (i64 j = (i64)threadIdx.x * V; j < h; j += (i64)blockDim.x * V) {
      float f[V], g[V], b[V];
      if (cached) {
#pragma unroll
        for (int k = 0; k < V; k++) f[k] = smem[j + k];
      } else {
        val(j, f);
      }
      vec_load<T, V>(gamma + j, g);
      if (beta) vec_load<T, V>(beta + j, b);
#pragma unroll
      for (int k = 0; k < V; k++) f[k] = (f[k] - mean) * inv * g[k] + (beta ? b[k] : 0.f);
      vec_store<T, V>(out + r * h + j, f);
    }
    if (threadIdx.x == 0) {
      write_stat<T>(meanOut, r, mean, flags & NORM_STATS_F32);
      write_stat<T>(invOut, r, inv, flags & NORM_STATS_F32);
    }
    __syncthreads();  // smem is reused by the next row
  }
}

template <typename T>
__device__ __forceinline__ bool al16(const T* p) {
  return ((uintptr_t)p & 15) == 0;
}

}  // namespace

// carve_layer_norm_<T>: see layer_norm. Any of skip, addBias, beta, sumOut, meanOut and invOut
// may be null.
#define LAYER_NORM(name, T)                                                                               \
  extern "C" __global__ void name(T* out, const T* x, const T* skip, const T* addBias, const T* gamma,    \
                                  const T* beta, T* sumOut, void* meanOut, void* invOut, i64 rows, i64 h, \
                                  i64 skipRows, float eps, int flags) {                                   \
    constexpr int V = 16 / sizeof(T);                                                                     \
    bool vec = h % V == 0 && al16(out) && al16(x) && (!skip || al16(skip)) &&                             \
               (!addBias || al16(addBias)) && al16(gamma) && (!beta || al16(beta)) &&                     \
               (!sumOut || al16(sumOut));                                                                 \
    if (vec)                                                                                              \
      layer_norm<T, V>(out, x, skip, addBias, gamma, beta, sumOut, meanOut, invOut, rows, h, skipRows,    \
                       eps, flags);                                                                       \
    else                                                                                                  \
      layer_norm<T, 1>(out, x, skip, addBias, gamma, beta, sumOut, meanOut, invOut, rows, h, skipRows,    \
                       eps, flags);                                                                       \
  }
LAYER_NORM(carve_layer_norm_f32, float)
LAYER_NORM(carve_layer_norm_f16, __half)
LAYER_NORM(carve_layer_norm_bf16, bf16)

namespace {

// norm_rows is layer_norm with the row in registers: thread t holds the vectors t + k * blockDim
// (k < NS) of V elements, so a block's threads cover the row once. Gamma and beta, when a thread
// holds at most 8 of their elements, are loaded once for all the block's rows, before the first
// row's loads. Every statistic is one block reduction with a single barrier (the scratch
// alternates between rows, so a row's reads never race the next row's writes). For the decode
// step's one row it is a short latency chain: every load in flight at once, one or two
// reductions, the stores. It may be launched dependent (common.cuh): it waits first (gamma and
// beta need not be weights), and lets its successor be scheduled once its row's loads are on
// their way rather than at once: a successor's early weight reads then do not delay them (0.02 ms
// of the Qwen2.5-1.5B decode step on the H200).
template <typename T, int V, int NS>
__device__ __forceinline__ void norm_rows(T* out, const T* x, const T* skip, const T* addBias, const T* gamma,
                                          const T* beta, T* sumOut, void* meanOut, void* invOut, i64 rows, i64 h,
                                          i64 skipRows, float eps, int flags) {
  __shared__ float red[2][2][32];
  pdl_wait();
  const bool simple = flags & NORM_SIMPLE;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  // gamma and beta stay in registers when they are few (the decode row), else are read per row
  constexpr bool PRE = NS * V <= 8;
  float g[PRE ? NS : 1][V], bt[PRE ? NS : 1][V];
  auto affine = [&](int k, i64 j, float (&ga)[V], float (&be)[V]) {
#pragma unroll
    for (int e = 0; e < V; e++) ga[e] = be[e] = 0.f;
    if (j < h) {
      vec_load<T, V>(gamma + j, ga);
      if (beta) vec_load<T, V>(beta + j, be);
    }
  };
  if constexpr (PRE) {
#pragma unroll
    for (int k = 0; k < NS; k++) affine(k, ((i64)threadIdx.x + (i64)k * blockDim.x) * V, g[k], bt[k]);
  }
  // sum over the block: every thread gets it after one barrier
  auto reduce = [&](float v, float* scratch) {
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    float t = 0.f;
    for (int w = 0; w < nw; w++) t += scratch[w];
    return t;
  };
  int par = 0;
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x, par ^= 1) {
    const T* xr = x + r * h;
    const T* sr = skip ? skip + (r % skipRows) * h : nullptr;
    float f[NS][V];
#pragma unroll
    for (int k = 0; k < NS; k++) {
      const i64 j = ((i64)threadIdx.x + (i64)k * blockDim.x) * V;
#pragma unroll
      for (int e = 0; e < V; e++) f[k][e] = 0.f;
      if (j < h) {
        vec_load<T, V>(xr + j, f[k]);
        if (sr) {
          float a[V];
          vec_load<T, V>(sr + j, a);
#pragma unroll
          for (int e = 0; e < V; e++) f[k][e] += a[e];
        }
        if (addBias) {
          float a[V];
          vec_load<T, V>(addBias + j, a);
#pragma unroll
          for (int e = 0; e < V; e++) f[k][e] += a[e];
        }
        if (sumOut) vec_store<T, V>(sumOut + r * h + j, f[k]);
      }
    }
    pdl_trigger();  // once the row's loads are on their way (see above)
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < NS; k++)
#pragma unroll
      for (int e = 0; e < V; e++) s += simple ? f[k][e] * f[k][e] : f[k][e];
    s = reduce(s, red[par][0]);
    float mean = 0.f, var;
    if (simple) {
      var = s / (float)h;
    } else {
      mean = s / (float)h;
      float ss = 0.f;
#pragma unroll
      for (int k = 0; k < NS; k++) {
        const i64 j = ((i64)threadIdx.x + (i64)k * blockDim.x) * V;
        if (j < h) {
#pragma unroll
          for (int e = 0; e < V; e++) ss += (f[k][e] - mean) * (f[k][e] - mean);
        }
      }
      var = reduce(ss, red[par][1]) / (float)h;
    }
    const float inv = 1.f / sqrtf(var + eps);
#pragma unroll
    for (int k = 0; k < NS; k++) {
      const i64 j = ((i64)threadIdx.x + (i64)k * blockDim.x) * V;
      if (j < h) {
        float o[V], ga[V], be[V];
        if constexpr (PRE) {
#pragma unroll
          for (int e = 0; e < V; e++) ga[e] = g[k][e], be[e] = bt[k][e];
        } else {
          affine(k, j, ga, be);
        }
#pragma unroll
        for (int e = 0; e < V; e++) o[e] = (f[k][e] - mean) * inv * ga[e] + be[e];
        vec_store<T, V>(out + r * h + j, o);
      }
    }
    if (threadIdx.x == 0) {
      write_stat<T>(meanOut, r, mean, flags & NORM_STATS_F32);
      write_stat<T>(invOut, r, inv, flags & NORM_STATS_F32);
    }
  }
}

}  // namespace

// carve_norm_rows_<T>_<NS>: see norm_rows; the parameters are carve_layer_norm's. The block
// covers a row with NS vectors of 16 bytes a thread when every pointer is 16-byte aligned and h
// a multiple of the vector, else with NS * (16 / sizeof(T)) elements a thread.
#define NORM_ROWS(name, T, NS)                                                                                \
  extern "C" __global__ void __launch_bounds__(NORM_THREADS)                                                  \
      name(T* out, const T* x, const T* skip, const T* addBias, const T* gamma, const T* beta, T* sumOut,     \
           void* meanOut, void* invOut, i64 rows, i64 h, i64 skipRows, float eps, int flags) {                \
    constexpr int V = 16 / sizeof(T);                                                                         \
    bool vec = h % V == 0 && al16(out) && al16(x) && (!skip || al16(skip)) &&                                 \
               (!addBias || al16(addBias)) && al16(gamma) && (!beta || al16(beta)) &&                         \
               (!sumOut || al16(sumOut));                                                                     \
    if (vec)                                                                                                  \
      norm_rows<T, V, NS>(out, x, skip, addBias, gamma, beta, sumOut, meanOut, invOut, rows, h, skipRows,     \
                          eps, flags);                                                                        \
    else                                                                                                      \
      norm_rows<T, 1, NS * V>(out, x, skip, addBias, gamma, beta, sumOut, meanOut, invOut, rows, h, skipRows, \
                              eps, flags);                                                                    \
  }
NORM_ROWS(carve_norm_rows_f32_1, float, 1)
NORM_ROWS(carve_norm_rows_f32_2, float, 2)
NORM_ROWS(carve_norm_rows_f32_4, float, 4)
NORM_ROWS(carve_norm_rows_f16_1, __half, 1)
NORM_ROWS(carve_norm_rows_f16_2, __half, 2)
NORM_ROWS(carve_norm_rows_f16_4, __half, 4)
NORM_ROWS(carve_norm_rows_bf16_1, bf16, 1)
NORM_ROWS(carve_norm_rows_bf16_2, bf16, 2)
NORM_ROWS(carve_norm_rows_bf16_4, bf16, 4)

namespace {

// softmax_rows normalizes contiguous rows of dim elements, one block per row.
template <typename T>
__device__ __forceinline__ void softmax_rows(T* out, const T* x, i64 rows, i64 dim, int log, int cached) {
  extern __shared__ float smem[];
  __shared__ float red[32];
  for (i64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * dim;
    T* yr = out + r * dim;
    float m = -INFINITY;
    for (i64 j = threadIdx.x; j < dim; j += blockDim.x) {
      float v = tof(xr[j]);
      if (cached) smem[j] = v;
      m = fmaxf(m, v);
    }
    m = block_max(m, red);
    float s = 0.f;
    for (i64 j = threadIdx.x; j < dim; j += blockDim.x) {
      float v = cached ? smem[j] : tof(xr[j]);
      s += expf(v - m);
    }
    s = block_sum(s, red);
    const float ls = logf(s), inv = 1.f / s;
    for (i64 j = threadIdx.x; j < dim; j += blockDim.x) {
      float v = (cached ? smem[j] : tof(xr[j])) - m;
      yr[j] = fromf<T>(log ? v - ls : expf(v) * inv);
    }
    __syncthreads();
  }
}

// softmax_cols normalizes along a strided axis: one thread per (outer, inner) column.
template <typename T>
__device__ __forceinline__ void softmax_cols(T* out, const T* x, i64 outer, i64 dim, i64 inner, int log) {
  GRID_STRIDE(c, outer * inner) {
    i64 o = c / inner, i = c % inner, base = o * dim * inner + i;
    float m = -INFINITY;
    for (i64 k = 0; k < dim; k++) m = fmaxf(m, tof(x[base + k * inner]));
    float s = 0.f;
    for (i64 k = 0; k < dim; k++) s += expf(tof(x[base + k * inner]) - m);
    const float ls = logf(s), inv = 1.f / s;
    for (i64 k = 0; k < dim; k++) {
      float v = tof(x[base + k * inner]) - m;
      out[base + k * inner] = fromf<T>(log ? v - ls : expf(v) * inv);
    }
  }
}

}  // namespace

#define SOFTMAX(name, cols, T)                                                                           \
  extern "C" __global__ void name(T* out, const T* x, i64 rows, i64 dim, int log, int cached) {          \
    softmax_rows<T>(out, x, rows, dim, log, cached);                                                     \
  }                                                                                                      \
  extern "C" __global__ void cols(T* out, const T* x, i64 outer, i64 dim, i64 inner, int log) {          \
    softmax_cols<T>(out, x, outer, dim, inner, log);                                                     \
  }
SOFTMAX(carve_softmax_f32, carve_softmax_cols_f32, float)
SOFTMAX(carve_softmax_f16, carve_softmax_cols_f16, __half)
SOFTMAX(carve_softmax_bf16, carve_softmax_cols_bf16, bf16)
