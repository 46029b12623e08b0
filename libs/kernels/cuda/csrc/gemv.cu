// The gemv tactic of MatMul and Gemm (gemv.go): Y = alpha * A * B + beta * C for a few rows of A
// (M <= MR) against a row-major weight B [K, N], fp16 or bf16, fp32 accumulation. At such shapes
// the product is bound by the bytes of B, so the kernel is built to stream B at the memory's rate:
//
//   - grid (S, tiles): blockIdx.y is a tile of W = 8 * CW columns, blockIdx.x one of S equal
//     slices of K; the S blocks of a tile form one thread block cluster (S <= 8, portable);
//   - a block's 256 threads are CW column threads (each 8 columns, one 16-byte load per row of
//     B) times 256 / CW k-lanes that take every (256 / CW)-th row of the slice; loads of B go
//     U rows at a time, the next U issued before the current ones are used (register double
//     buffer), so many bytes are in flight per multiprocessor;
//   - the slice of A is staged in shared memory as float [rows][MR] (zero rows past M), read
//     as float4 per row of B;
//   - the k-lanes' sums meet in a warp shuffle, then in shared memory across warps; the S
//     slices' sums meet through distributed shared memory (every block reduces 1/S of the
//     tile's outputs), so a split K needs neither workspace nor a second launch;
//   - the epilogue adds beta * C[m * csm + n * csn] (a bias row: csm 0, csn 1) and writes Y.
//
// Shared memory (dynamic): max(ks * MR, 8 * MR * W) floats, the reduction reusing A's stage.
// The unaligned variants (N % 8 != 0 or B not 16-byte aligned) load B element by element.
#include <cooperative_groups.h>

#include "common.cuh"

namespace cg = cooperative_groups;

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Loads 8 consecutive elements of B as a uint4 (16-byte aligned), read-only, past L1. HINT 1
// also asks L2 to fetch the 256-byte block around it, HINT 2 is a plain read-only load.
template <int HINT>
__device__ __forceinline__ uint4 ld_stream(const void* p) {
  uint4 v;
  if constexpr (HINT == 1) {
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
  } else if constexpr (HINT == 2) {
    v = __ldg(reinterpret_cast<const uint4*>(p));
  } else {
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
  }
  return v;
}

template <typename T>
__device__ __forceinline__ void unpack8(const uint4& v, float* f);

template <>
__device__ __forceinline__ void unpack8<bf16>(const uint4& v, float* f) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; i++) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

template <>
__device__ __forceinline__ void unpack8<__half>(const uint4& v, float* f) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; i++) {
    __half2 h = *reinterpret_cast<const __half2*>(&w[i]);
    float2 p = __half22float2(h);
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

// load8 reads columns n0..n0+7 of row `row` of B (zeros past N or past the slice).
template <typename T, bool VEC, int HINT>
__device__ __forceinline__ uint4 load8(const T* b, i64 row, int n0, int n, bool ok) {
  uint4 v = make_uint4(0, 0, 0, 0);
  if (!ok) return v;
  const T* p = b + row * n + n0;
  if constexpr (VEC) {
    v = ld_stream<HINT>(p);
  } else {
    union { uint4 u; unsigned short e[8]; } x;
    x.u = v;
#pragma unroll
    for (int j = 0; j < 8; j++) {
      if (n0 + j < n) x.e[j] = reinterpret_cast<const unsigned short*>(p)[j];
    }
    v = x.u;
  }
  return v;
}

// A row of the staged A: MR floats.
template <int MR>
__device__ __forceinline__ void arow(const float* s, float* a) {
  if constexpr (MR == 1) {
    a[0] = s[0];
  } else if constexpr (MR == 2) {
    float2 v = *reinterpret_cast<const float2*>(s);
    a[0] = v.x, a[1] = v.y;
  } else {
#pragma unroll
    for (int i = 0; i < MR; i += 4) {
      float4 v = *reinterpret_cast<const float4*>(s + i);
      a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
    }
  }
}

// cp.async of 16 bytes from global to shared memory, past L1; bytes 0 writes zeros and reads
// nothing.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// acc += A's row (MR floats at s) times 8 columns of B (v).
template <typename T, int MR>
__device__ __forceinline__ void fma_row(float (&acc)[MR][8], const float* s, const uint4& v) {
  float av[MR], bv[8];
  arow<MR>(s, av);
  unpack8<T>(v, bv);
#pragma unroll
  for (int i = 0; i < MR; i++) {
#pragma unroll
    for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
  }
}

// Registers (P = 0): U rows of B per thread and batch; DB: the next batch is loaded before the
// current one is used. Ring (P > 0, VEC only): every thread keeps P rows in flight with cp.async
// into its own slots of a ring in shared memory (P * 4 KiB before A's stage), so many bytes are
// in flight without registers; it reads back only what it copied, so no barrier is needed.
// PUSH (S > 1): the slices' sums meet with one cluster barrier: every block stores its sums into
// the owner's inbox (after A's stage) and the owners add them up, instead of the owners reading
// every block's sums between two barriers.
template <typename T, int MR, int S, bool VEC, int U, bool DB, int HINT, int P = 0, bool PUSH = false>
__device__ __forceinline__ void gemv(T* __restrict__ y, const T* __restrict__ a, const T* __restrict__ b,
                                     const T* __restrict__ c, i64 mn, i64 kks, int cwlog, float alpha, float beta,
                                     i64 cs) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const int m = carve::lo32(mn), n = carve::hi32(mn);
  const int k = carve::lo32(kks), ks = carve::hi32(kks);
  const int cw = 1 << cwlog, w = 8 << cwlog, kl_n = kThreads >> cwlog;
  const int tid = threadIdx.x, col = tid & (cw - 1), kl = tid >> cwlog;
  const int n0 = blockIdx.y * w + col * 8;
  const int k0 = blockIdx.x * ks;
  const int kb = max(0, min(ks, k - k0));  // rows of this slice
  const bool colok = n0 < n;
  if constexpr (PUSH && S > 1) {
    // Announces this block's start: another block stores into its shared memory only after
    // every block of the cluster has started (the matching wait is before the stores).
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  }

  float acc[MR][8];
#pragma unroll
  for (int i = 0; i < MR; i++) {
#pragma unroll
    for (int j = 0; j < 8; j++) acc[i][j] = 0.f;
  }
  if constexpr (P > 0) {
    float* stage = smem + P * kThreads * 4;
    const unsigned ring = (unsigned)__cvta_generic_to_shared(smem4) + tid * 16;
    const T* bp = b + (i64)(k0 + kl) * n + n0;
    const i64 rstep = (i64)kl_n * n;
    const int rows = kb > kl ? (kb - kl + kl_n - 1) / kl_n : 0;
#pragma unroll
    for (int p = 0; p < P; p++) {
      const bool ok = colok && p < rows;
      cp_async16(ring + p * kThreads * 16, ok ? bp + p * rstep : b, ok ? 16 : 0);
      cp_commit();
    }
#pragma unroll
    for (int mm = 0; mm < MR; mm++) {
      for (int r = tid; r < kb; r += kThreads) stage[r * MR + mm] = mm < m ? carve::tof(a[(i64)mm * k + k0 + r]) : 0.f;
    }
    __syncthreads();
    for (int i = 0; i < rows; i++) {
      cp_wait<P - 1>();
      const unsigned slot = ring + (i & (P - 1)) * kThreads * 16;
      uint4 v;
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(slot));
      const int j = i + P;
      const bool ok = colok && j < rows;
      cp_async16(slot, ok ? bp + j * rstep : b, ok ? 16 : 0);
      cp_commit();
      fma_row<T, MR>(acc, stage + (kl + i * kl_n) * MR, v);
    }
    cp_wait<0>();
  } else {
    // First rows of B before A's stage, so that they are in flight while it loads.
    uint4 cur[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const int r = kl + u * kl_n;
      cur[u] = load8<T, VEC, HINT>(b, (i64)(k0 + r), n0, n, colok && r < kb);
    }
#pragma unroll
    for (int mm = 0; mm < MR; mm++) {
      for (int r = tid; r < kb; r += kThreads) smem[r * MR + mm] = mm < m ? carve::tof(a[(i64)mm * k + k0 + r]) : 0.f;
    }
    __syncthreads();
    const int step = kl_n * U;
    for (int base = kl; base < kb; base += step) {
      uint4 nxt[U];
      if constexpr (DB) {
#pragma unroll
        for (int u = 0; u < U; u++) {
          const int r = base + step + u * kl_n;
          nxt[u] = load8<T, VEC, HINT>(b, (i64)(k0 + r), n0, n, colok && r < kb);
        }
      } else if (base != kl) {
#pragma unroll
        for (int u = 0; u < U; u++) {
          const int r = base + u * kl_n;
          cur[u] = load8<T, VEC, HINT>(b, (i64)(k0 + r), n0, n, colok && r < kb);
        }
      }
#pragma unroll
      for (int u = 0; u < U; u++) {
        const int r = base + u * kl_n;
        if (r < kb) fma_row<T, MR>(acc, smem + r * MR, cur[u]);
      }
      if constexpr (DB) {
#pragma unroll
        for (int u = 0; u < U; u++) cur[u] = nxt[u];
      }
    }
  }

  // The k-lanes of a warp: lanes that differ above bit cwlog.
  for (int off = 16; off >= cw; off >>= 1) {
#pragma unroll
    for (int i = 0; i < MR; i++) {
#pragma unroll
      for (int j = 0; j < 8; j++) acc[i][j] += __shfl_xor_sync(0xffffffffu, acc[i][j], off);
    }
  }
  __syncthreads();  // the ring and A's stage are dead: the reduction reuses them
  const int lane = tid & 31, warp = tid >> 5;
  const int tile = MR * w;  // floats of one warp's (and the block's) partial tile
  if (lane < cw) {
#pragma unroll
    for (int i = 0; i < MR; i++) {
      float* p = smem + warp * tile + i * w + col * 8;
      *reinterpret_cast<float4*>(p) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      *reinterpret_cast<float4*>(p + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
  }
  __syncthreads();
  const int used = m * w;  // rows past M are not summed
  if constexpr (PUSH && S > 1) {
    cg::cluster_group cl = cg::this_cluster();
    const int per = (used + S - 1) / S, rank = (int)cl.block_rank();
    float* inbox = smem + max(P * kThreads * 4 + ks * MR, kWarps * tile);
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    for (int e = tid; e < used; e += kThreads) {
      float s = 0.f;
#pragma unroll
      for (int q = 0; q < kWarps; q++) s += smem[q * tile + e];
      const int q = e / per;
      cl.map_shared_rank(inbox, q)[rank * per + e - q * per] = s;
    }
    cl.sync();
    const int lo = min(used, rank * per), hi = min(used, lo + per);
    for (int e = lo + tid; e < hi; e += kThreads) {
      float s = 0.f;
#pragma unroll
      for (int q = 0; q < S; q++) s += inbox[q * per + e - lo];
      const int mm = e >> (cwlog + 3), nn = blockIdx.y * w + (e & (w - 1));
      if (nn < n) {
        float v = alpha * s;
        if (c != nullptr) v += beta * carve::tof(c[(i64)mm * carve::lo32(cs) + (i64)nn * carve::hi32(cs)]);
        y[(i64)mm * n + nn] = carve::fromf<T>(v);
      }
    }
  } else {
    for (int e = tid; e < used; e += kThreads) {
      float s = 0.f;
#pragma unroll
      for (int q = 0; q < kWarps; q++) s += smem[q * tile + e];
      smem[e] = s;
    }
    int lo = 0, hi = used;
    if constexpr (S > 1) {
      cg::cluster_group cl = cg::this_cluster();
      cl.sync();
      const int per = (used + S - 1) / S, rank = (int)cl.block_rank();
      lo = min(used, rank * per), hi = min(used, lo + per);
      for (int e = lo + tid; e < hi; e += kThreads) {
        float s = 0.f;
#pragma unroll
        for (int q = 0; q < S; q++) s += cl.map_shared_rank(smem, q)[e];
        const int mm = e >> (cwlog + 3), nn = blockIdx.y * w + (e & (w - 1));
        if (nn < n) {
          float v = alpha * s;
          if (c != nullptr) v += beta * carve::tof(c[(i64)mm * carve::lo32(cs) + (i64)nn * carve::hi32(cs)]);
          y[(i64)mm * n + nn] = carve::fromf<T>(v);
        }
      }
      cl.sync();  // the other blocks' shared memory is read until here
    } else {
      __syncthreads();
      for (int e = lo + tid; e < hi; e += kThreads) {
        const int mm = e >> (cwlog + 3), nn = blockIdx.y * w + (e & (w - 1));
        if (nn < n) {
          float v = alpha * smem[e];
          if (c != nullptr) v += beta * carve::tof(c[(i64)mm * carve::lo32(cs) + (i64)nn * carve::hi32(cs)]);
          y[(i64)mm * n + nn] = carve::fromf<T>(v);
        }
      }
    }
  }
}

}  // namespace

// carve_gemv_<dtype>_m<MR>_s<S>[_u]: Y[m, n] = alpha * sum_k A[m, k] B[k, n] + beta * C[m*csm +
// n*csn] for m < M <= MR. mn = M | N << 32, kks = K | ks << 32 (rows per slice), cs = csm | csn <<
// 32; c may be null. _u: B's rows need not be 16-byte aligned.
#define GEMV_PARAMS(T)                                                                              \
  T *y, const T *a, const T *b, const T *c, long long mn, long long kks, int cwlog, float alpha, \
      float beta, long long cs
#define GEMV_ARGS y, a, b, c, mn, kks, cwlog, alpha, beta, cs

// A slice count of 1 launches no cluster.
#define GEMV_CLUSTER_1
#define GEMV_CLUSTER_2 __cluster_dims__(2, 1, 1)
#define GEMV_CLUSTER_4 __cluster_dims__(4, 1, 1)
#define GEMV_CLUSTER_8 __cluster_dims__(8, 1, 1)

#define GEMV_ONE(NAME, T, MR, S, VEC)                                                       \
  extern "C" __global__ void GEMV_CLUSTER_##S __launch_bounds__(kThreads) carve_gemv_##NAME( \
      GEMV_PARAMS(T)) {                                                                     \
    gemv<T, MR, S, VEC, 4, true, 0>(GEMV_ARGS);                                             \
  }

#define GEMV_RING(NAME, T, MR, S, P)                                                        \
  extern "C" __global__ void GEMV_CLUSTER_##S __launch_bounds__(kThreads) carve_gemv_##NAME( \
      GEMV_PARAMS(T)) {                                                                     \
    gemv<T, MR, S, true, 1, false, 0, P>(GEMV_ARGS);                                        \
  }

#define GEMV_PUSH(NAME, T, MR, S, P)                                                        \
  extern "C" __global__ void GEMV_CLUSTER_##S __launch_bounds__(kThreads) carve_gemv_##NAME( \
      GEMV_PARAMS(T)) {                                                                     \
    gemv<T, MR, S, true, 1, false, 0, P, true>(GEMV_ARGS);                                  \
  }

#define GEMV_S(NAME, T, MR)                \
  GEMV_ONE(NAME##_s1, T, MR, 1, true)      \
  GEMV_ONE(NAME##_s2, T, MR, 2, true)      \
  GEMV_ONE(NAME##_s4, T, MR, 4, true)      \
  GEMV_ONE(NAME##_s8, T, MR, 8, true)      \
  GEMV_ONE(NAME##_s1_u, T, MR, 1, false)   \
  GEMV_ONE(NAME##_s2_u, T, MR, 2, false)   \
  GEMV_ONE(NAME##_s4_u, T, MR, 4, false)   \
  GEMV_ONE(NAME##_s8_u, T, MR, 8, false)   \
  GEMV_RING(NAME##_p8_s1, T, MR, 1, 8)     \
  GEMV_RING(NAME##_p8_s2, T, MR, 2, 8)     \
  GEMV_RING(NAME##_p8_s4, T, MR, 4, 8)     \
  GEMV_RING(NAME##_p8_s8, T, MR, 8, 8)     \
  GEMV_RING(NAME##_p16_s1, T, MR, 1, 16)   \
  GEMV_RING(NAME##_p16_s2, T, MR, 2, 16)   \
  GEMV_RING(NAME##_p16_s4, T, MR, 4, 16)   \
  GEMV_RING(NAME##_p16_s8, T, MR, 8, 16)   \
  GEMV_PUSH(NAME##_p8_s2_c1, T, MR, 2, 8)  \
  GEMV_PUSH(NAME##_p8_s4_c1, T, MR, 4, 8)  \
  GEMV_PUSH(NAME##_p8_s8_c1, T, MR, 8, 8)  \
  GEMV_PUSH(NAME##_p16_s2_c1, T, MR, 2, 16) \
  GEMV_PUSH(NAME##_p16_s4_c1, T, MR, 4, 16) \
  GEMV_PUSH(NAME##_p16_s8_c1, T, MR, 8, 16)

#define GEMV_M(NAME, T)   \
  GEMV_S(NAME##_m1, T, 1) \
  GEMV_S(NAME##_m2, T, 2) \
  GEMV_S(NAME##_m4, T, 4) \
  GEMV_S(NAME##_m8, T, 8)

GEMV_M(bf16, bf16)
GEMV_M(f16, __half)
