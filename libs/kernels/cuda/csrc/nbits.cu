// com.microsoft.MatMulNBits: Y = A * dequant(B)^T (+ bias). B holds N rows of K weights quantized
// in blocks of bs along K, `bits` per weight packed low bits first; w = (q - zero_point) * scale,
// the zero point packed like B (zpKind 1), one value of A's type per block (zpKind 2) or
// 2^(bits-1) (zpKind 0).
//
// carve_nbits_gemv_*: tactic "gemv", for a few rows of A (m <= 8): one warp per output column
// reads its weight row once (coalesced 4-byte words), dequantizes in registers and accumulates
// every row of A in float32; no workspace.
// carve_nbits_dequant_*: tactic "dequant-gemm", for more rows: a chunk of weight rows is
// dequantized into the workspace as A's type and multiplied by a GEMM.
#include "common.cuh"

using namespace carve;

#define GEMV_WARPS 8
#define GEMV_MMAX 8

namespace {

template <typename T>
__device__ __forceinline__ float zero_point(const void* zp, int zpKind, int bits, i64 n, int kb, int kBlocks) {
  if (zpKind == 1) {
    const int zpRow = (kBlocks * bits + 7) / 8;
    const int bit = kb * bits;
    const unsigned char z = ((const unsigned char*)zp)[n * zpRow + bit / 8];
    return (float)((z >> (bit % 8)) & ((1 << bits) - 1));
  }
  if (zpKind == 2) return tof(((const T*)zp)[n * kBlocks + kb]);
  return (float)(1 << (bits - 1));
}

// load8 reads a[k..k+8) as floats; vec when 16-byte aligned loads are allowed.
template <typename T>
__device__ __forceinline__ void load8(const T* a, bool vec, float* f) {
  if (vec) {
    if constexpr (sizeof(T) == 4) {
      float4 x = __ldg((const float4*)a), y = __ldg((const float4*)a + 1);
      f[0] = x.x, f[1] = x.y, f[2] = x.z, f[3] = x.w, f[4] = y.x, f[5] = y.y, f[6] = y.z, f[7] = y.w;
    } else {
      union { uint4 u; T e[8]; } v;
      v.u = __ldg((const uint4*)a);
#pragma unroll
      for (int i = 0; i < 8; i++) f[i] = tof(v.e[i]);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 8; i++) f[i] = tof(a[i]);
}

// gemv_word folds one 4-byte word of column n's weights (WPW weights from k0 = wi*WPW) into the
// accumulators of the m rows of A. A word never straddles a block (blob is a multiple of 4
// bytes); weights past K (the last block's padding) are skipped.
template <typename T, int BITS, int MMAX>
__device__ __forceinline__ void gemv_word(float (&acc)[MMAX], unsigned wd, int wi, const T* a, const T* scales,
                                          const void* zp, i64 n, int m, int K, int kBlocks, int bs, int zpKind,
                                          bool avec) {
  constexpr int WPW = 32 / BITS;
  const int k0 = wi * WPW;
  const int kb = k0 / bs;
  const float s = tof(scales[n * kBlocks + kb]);
  const float z = zero_point<T>(zp, zpKind, BITS, n, kb, kBlocks);
  float wf[WPW];
#pragma unroll
  for (int i = 0; i < WPW; i++) wf[i] = ((float)((wd >> (i * BITS)) & ((1u << BITS) - 1)) - z) * s;
  if (k0 + WPW <= K) {
#pragma unroll
    for (int r = 0; r < MMAX; r++) {
      if (r < m) {
        const T* ar = a + (i64)r * K + k0;
        if constexpr (WPW >= 8) {
#pragma unroll
          for (int i0 = 0; i0 < WPW; i0 += 8) {
            float af[8];
            load8<T>(ar + i0, avec, af);
#pragma unroll
            for (int i = 0; i < 8; i++) acc[r] = fmaf(wf[i0 + i], af[i], acc[r]);
          }
        } else {
#pragma unroll
          for (int i = 0; i < WPW; i++) acc[r] = fmaf(wf[i], tof(ar[i]), acc[r]);
        }
      }
    }
  } else {
    for (int i = 0; i < WPW && k0 + i < K; i++)
#pragma unroll
      for (int r = 0; r < MMAX; r++)
        if (r < m) acc[r] = fmaf(wf[i], tof(a[(i64)r * K + k0 + i]), acc[r]);
  }
}

// gemv: one warp per output column. Rows of 16-byte multiples stream as 16-byte loads, two in
// flight per lane before any is used; other rows as 4-byte words.
template <typename T, int BITS, int MMAX>
__device__ __forceinline__ void gemv(T* y, const T* a, const unsigned char* b, const T* scales, const void* zp,
                                     const T* bias, int m, int K, int N, int kBlocks, int bs, int zpKind) {
  const int lane = threadIdx.x & 31;
  const int blob = bs * BITS / 8;
  const i64 rowBytes = (i64)kBlocks * blob;
  const bool avec = (K % 8 == 0) && (((uintptr_t)a & 15) == 0);
  const bool v16 = rowBytes % 16 == 0 && (((uintptr_t)b & 15) == 0);
  for (i64 n = (i64)blockIdx.x * GEMV_WARPS + (threadIdx.x >> 5); n < N; n += (i64)gridDim.x * GEMV_WARPS) {
    float acc[MMAX];
#pragma unroll
    for (int r = 0; r < MMAX; r++) acc[r] = 0.f;
    if (v16) {
      const uint4* row = (const uint4*)(b + n * rowBytes);
      const int chunks = (int)(rowBytes / 16);
      for (int c0 = lane; c0 < chunks; c0 += 64) {
        const int c1 = c0 + 32;
        const uint4 w0 = __ldg(row + c0);
        uint4 w1 = make_uint4(0, 0, 0, 0);
        if (c1 < chunks) w1 = __ldg(row + c1);
        gemv_word<T, BITS, MMAX>(acc, w0.x, 4 * c0, a, scales, zp, n, m, K, kBlocks, bs, zpKind, avec);
        gemv_word<T, BITS, MMAX>(acc, w0.y, 4 * c0 + 1, a, scales, zp, n, m, K, kBlocks, bs, zpKind, avec);
        gemv_word<T, BITS, MMAX>(acc, w0.z, 4 * c0 + 2, a, scales, zp, n, m, K, kBlocks, bs, zpKind, avec);
        gemv_word<T, BITS, MMAX>(acc, w0.w, 4 * c0 + 3, a, scales, zp, n, m, K, kBlocks, bs, zpKind, avec);
        if (c1 < chunks) {
          gemv_word<T, BITS, MMAX>(acc, w1.x, 4 * c1, a, scales, zp, n, m, K, kBlocks, bs, zpKind, avec);
          gemv_word<T, BITS, MMAX>(acc, w1.y, 4 * c1 + 1, a, scales, zp, n, m, K, kBlocks, bs, zpKind, avec);
          gemv_word<T, BITS, MMAX>(acc, w1.z, 4 * c1 + 2, a, scales, zp, n, m, K, kBlocks, bs, zpKind, avec);
          gemv_word<T, BITS, MMAX>(acc, w1.w, 4 * c1 + 3, a, scales, zp, n, m, K, kBlocks, bs, zpKind, avec);
        }
      }
    } else {
      const unsigned* row = (const unsigned*)(b + n * rowBytes);
      const int words = (int)(rowBytes / 4);
      for (int w = lane; w < words; w += 32)
        gemv_word<T, BITS, MMAX>(acc, __ldg(row + w), w, a, scales, zp, n, m, K, kBlocks, bs, zpKind, avec);
    }
#pragma unroll
    for (int r = 0; r < MMAX; r++) {
      if (r < m) {
        float v = warp_sum(acc[r]);
        if (lane == 0) y[(i64)r * N + n] = fromf<T>(v + (bias ? tof(bias[n]) : 0.f));
      }
    }
  }
}

}  // namespace

// carve_nbits_gemv_<T>_<bits> (m <= 8) and carve_nbits_gemv1_<T>_<bits> (m == 1, fewer
// registers): mk = m|K, nkb = N|kBlocks.
#define GEMV(name, name1, T, BITS)                                                                          \
  extern "C" __global__ void __launch_bounds__(GEMV_WARPS * 32)                                             \
      name(T* y, const T* a, const unsigned char* b, const T* scales, const void* zp, const T* bias, i64 mk, \
           i64 nkb, int bs, int zpKind) {                                                                   \
    gemv<T, BITS, GEMV_MMAX>(y, a, b, scales, zp, bias, lo32(mk), hi32(mk), lo32(nkb), hi32(nkb), bs, zpKind); \
  }                                                                                                         \
  extern "C" __global__ void __launch_bounds__(GEMV_WARPS * 32)                                             \
      name1(T* y, const T* a, const unsigned char* b, const T* scales, const void* zp, const T* bias, i64 mk, \
            i64 nkb, int bs, int zpKind) {                                                                  \
    gemv<T, BITS, 1>(y, a, b, scales, zp, bias, 1, hi32(mk), lo32(nkb), hi32(nkb), bs, zpKind);             \
  }
GEMV(carve_nbits_gemv_f32_2, carve_nbits_gemv1_f32_2, float, 2)
GEMV(carve_nbits_gemv_f32_4, carve_nbits_gemv1_f32_4, float, 4)
GEMV(carve_nbits_gemv_f32_8, carve_nbits_gemv1_f32_8, float, 8)
GEMV(carve_nbits_gemv_f16_2, carve_nbits_gemv1_f16_2, __half, 2)
GEMV(carve_nbits_gemv_f16_4, carve_nbits_gemv1_f16_4, __half, 4)
GEMV(carve_nbits_gemv_f16_8, carve_nbits_gemv1_f16_8, __half, 8)
GEMV(carve_nbits_gemv_bf16_2, carve_nbits_gemv1_bf16_2, bf16, 2)
GEMV(carve_nbits_gemv_bf16_4, carve_nbits_gemv1_bf16_4, bf16, 4)
GEMV(carve_nbits_gemv_bf16_8, carve_nbits_gemv1_bf16_8, bf16, 8)

// carve_nbits_dequant_<T>: w[r, k] = dequantized weight (n0 + r, k) for r < rows, k < K, as T.
// nr = n0|rows, kkb = K|kBlocks.
#define DEQUANT(name, T)                                                                                   \
  extern "C" __global__ void name(T* w, const unsigned char* b, const T* scales, const void* zp, i64 nr,    \
                                  i64 kkb, int bs, int bits, int zpKind) {                                 \
    const int n0 = lo32(nr), rows = hi32(nr), K = lo32(kkb), kBlocks = hi32(kkb);                          \
    const int blob = bs * bits / 8;                                                                        \
    const unsigned mask = (1u << bits) - 1;                                                                \
    GRID_STRIDE(t, (i64)rows * K) {                                                                        \
      const i64 n = n0 + t / K;                                                                            \
      const int k = (int)(t % K), kb = k / bs, i = k % bs;                                                 \
      const int bit = i * bits;                                                                            \
      const unsigned char byte = b[(n * kBlocks + kb) * blob + bit / 8];                                   \
      const float q = (float)((byte >> (bit % 8)) & mask);                                                 \
      w[t] = fromf<T>((q - zero_point<T>(zp, zpKind, bits, n, kb, kBlocks)) * tof(scales[n * kBlocks + kb])); \
    }                                                                                                      \
  }
DEQUANT(carve_nbits_dequant_f32, float)
DEQUANT(carve_nbits_dequant_f16, __half)
DEQUANT(carve_nbits_dequant_bf16, bf16)
