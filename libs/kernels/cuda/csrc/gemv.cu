// The gemv tactic of MatMul and Gemm (gemv.go): Y = alpha * A * B + beta * C for a few rows of A
// (M <= MR) against a row-major weight B [K, N], fp16 or bf16, fp32 accumulation. At such shapes
// the product is bound by reading B, so the kernel is built to keep many of B's bytes in flight:
//
//   - grid (S, tiles): blockIdx.y is a tile of W = 8 * CW columns, blockIdx.x one of S equal
//     slices of K; the S blocks of a tile form one thread block cluster (S <= 8, portable);
//   - a block's 256 threads are CW column threads (each 8 columns, one 16-byte copy per row of
//     B) times 256 / CW k-lanes that take every (256 / CW)-th row of the slice; every thread
//     keeps kRing rows in flight with cp.async into its own slots of a ring in shared memory
//     and reads back only what it copied, so the ring needs no barrier and no registers;
//   - the slice of A is staged in shared memory as float [rows][MR] (zero rows past M) while
//     the first rows of B are on their way;
//   - the k-lanes' sums meet in a warp shuffle, then in shared memory across warps; with S > 1
//     every block stores its sums into the inbox of the block that owns them (each owns 1/S of
//     the tile's outputs; distributed shared memory), one cluster barrier, and the owners add
//     them up: a split K needs neither workspace nor a second launch;
//   - the epilogue adds beta * C[m * csm + n * csn] (a bias row: csm 0, csn 1) and writes Y;
//   - launched dependent (programmatic dependent launch, common.cuh's rules), it lets its
//     successor be scheduled at once, and when B is a weight (early) it issues its first rows of
//     B before waiting for the kernel ahead of it: a block's ring (32 KiB) streams while that
//     kernel finishes, which hides most of the product's ramp at decode sizes. Otherwise it waits
//     first.
//
// Shared memory (dynamic, gemvShared in gemv.go): max(kRing * 4 KiB + A's stage (ks * MR floats),
// the warps' sums (8 * MR * W floats)), then with S > 1 the inbox (S * ceil(MR * W / S) floats;
// carve_gemv_swiglu's: S * 2 * ceil(MR * W / 2S), its sums travelling in pairs).
// The unaligned kernels (_u: N % 8 != 0 or B not 16-byte aligned) load B element by element into
// registers, kBatch rows at a time, the next batch before the current one is used.
#include <cooperative_groups.h>

#include "common.cuh"

namespace cg = cooperative_groups;

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kRing = 8;   // rows of B in flight per thread (ring kernels)
constexpr int kBatch = 4;  // rows of B per register batch (unaligned kernels)

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

// load8 reads columns n0..n0+7 of row `row` of B element by element (zeros past N, or all zeros
// when !ok): B's rows need no alignment.
template <typename T>
__device__ __forceinline__ uint4 load8(const T* b, i64 row, int n0, int n, bool ok) {
  union { uint4 u; unsigned short e[8]; } x;
  x.u = make_uint4(0, 0, 0, 0);
  if (ok) {
    const unsigned short* p = reinterpret_cast<const unsigned short*>(b + row * n + n0);
#pragma unroll
    for (int j = 0; j < 8; j++) {
      if (n0 + j < n) x.e[j] = p[j];
    }
  }
  return x.u;
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

// RING: B's rows are 16-byte aligned and go through the ring; otherwise element loads.
// DUAL (carve_gemv_swiglu): two weights of one shape, b (the gate's) and b2 (the up's), over the
// same A; a block's first cw / 2 column threads read b and the others b2 at the same columns, so
// a tile of 8 << cwlog sums holds the gate's and the up's for 4 << cwlog output columns, and the
// epilogue writes Y = swish(gate, salpha) * up (no C; alpha scales both products).
template <typename T, int MR, int S, bool RING, bool DUAL>
__device__ __forceinline__ void gemv(T* __restrict__ y, const T* __restrict__ a, const T* __restrict__ b,
                                     const T* __restrict__ b2, const T* __restrict__ c, i64 mn, i64 kks, int cwlog,
                                     float alpha, float beta, i64 cs, int early, float salpha) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const int m = carve::lo32(mn), n = carve::hi32(mn);
  const int k = carve::lo32(kks), ks = carve::hi32(kks);
  const int cw = 1 << cwlog, w = 8 << cwlog, kl_n = kThreads >> cwlog;
  const int tid = threadIdx.x, col = tid & (cw - 1), kl = tid >> cwlog;
  // column threads per weight and output columns per block: with DUAL, half of each
  const int hw = DUAL ? cw / 2 : cw, wo = 8 * hw;
  const bool second = DUAL && col >= hw;
  const T* __restrict__ bsrc = second ? b2 : b;
  const int n0 = blockIdx.y * wo + (second ? col - hw : col) * 8;
  const int k0 = blockIdx.x * ks;
  const int kb = max(0, min(ks, k - k0));  // rows of this slice
  const bool colok = n0 < n;
  constexpr int P = RING ? kRing : 0;
  float* stage = smem + P * kThreads * 4;  // A's stage, after the ring
  if constexpr (S > 1) {
    // Announces this block's start: other blocks store into its shared memory only after every
    // block of the cluster has started (the matching wait is before the stores).
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  }
  carve::pdl_trigger();
  if (!early) carve::pdl_wait();

  float acc[MR][8];
#pragma unroll
  for (int i = 0; i < MR; i++) {
#pragma unroll
    for (int j = 0; j < 8; j++) acc[i][j] = 0.f;
  }
  if constexpr (RING) {
    const unsigned ring = (unsigned)__cvta_generic_to_shared(smem4) + tid * 16;
    const T* bp = bsrc + (i64)(k0 + kl) * n + n0;
    const i64 rstep = (i64)kl_n * n;
    const int rows = kb > kl ? (kb - kl + kl_n - 1) / kl_n : 0;
#pragma unroll
    for (int p = 0; p < P; p++) {
      const bool ok = colok && p < rows;
      cp_async16(ring + p * kThreads * 16, ok ? bp + p * rstep : b, ok ? 16 : 0);
      cp_commit();
    }
    if (early) carve::pdl_wait();  // A is the kernel ahead's output
#pragma unroll
    for (int mm = 0; mm < MR; mm++) {
      for (int r = tid; r < kb; r += kThreads) stage[r * MR + mm] = mm < m ? carve::tof(a[(i64)mm * k + k0 + r]) : 0.f;
    }
    __syncthreads();
    for (int i = 0; i < rows; i++) {
      cp_wait<P - 1>();  // row i has landed
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
    uint4 cur[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; u++) {
      const int r = kl + u * kl_n;
      cur[u] = load8<T>(bsrc, (i64)(k0 + r), n0, n, colok && r < kb);
    }
    if (early) carve::pdl_wait();
#pragma unroll
    for (int mm = 0; mm < MR; mm++) {
      for (int r = tid; r < kb; r += kThreads) stage[r * MR + mm] = mm < m ? carve::tof(a[(i64)mm * k + k0 + r]) : 0.f;
    }
    __syncthreads();
    const int step = kl_n * kBatch;
    for (int base = kl; base < kb; base += step) {
      uint4 nxt[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; u++) {
        const int r = base + step + u * kl_n;
        nxt[u] = load8<T>(bsrc, (i64)(k0 + r), n0, n, colok && r < kb);
      }
#pragma unroll
      for (int u = 0; u < kBatch; u++) {
        const int r = base + u * kl_n;
        if (r < kb) fma_row<T, MR>(acc, stage + r * MR, cur[u]);
      }
#pragma unroll
      for (int u = 0; u < kBatch; u++) cur[u] = nxt[u];
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
  __syncthreads();  // the ring and A's stage are dead: the warps' sums reuse them
  const int lane = tid & 31, warp = tid >> 5;
  const int tile = MR * w;  // floats of one warp's partial tile
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
  // The block adds up outputs [lo, hi): the sum of parts values, per floats apart, at sums[e].
  int lo = 0, hi = used, per = used, parts = 1;
  const float* sums = smem;
  if constexpr (S > 1) {
    cg::cluster_group cl = cg::this_cluster();
    const int rank = (int)cl.block_rank();
    // With DUAL the sums travel in pair order, f = 2 * (row * wo + column) + (up ? 1 : 0), and
    // per is even, so that an owner holds both sums of each of its outputs.
    per = DUAL ? 2 * ((used / 2 + S - 1) / S) : (used + S - 1) / S;
    float* inbox = smem + max(P * kThreads * 4 + ks * MR, kWarps * tile);
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    for (int e = tid; e < used; e += kThreads) {
      float s = 0.f;
#pragma unroll
      for (int q = 0; q < kWarps; q++) s += smem[q * tile + e];
      int f = e;
      if constexpr (DUAL) {
        const int i = e / w, v = e - i * w, up = v >= wo;
        f = 2 * (i * wo + v - up * wo) + up;
      }
      const int q = f / per;
      cl.map_shared_rank(inbox, q)[rank * per + f - q * per] = s;
    }
    cl.sync();  // every inbox is full
    lo = min(used, rank * per), hi = min(used, lo + per);
    sums = inbox - lo;
    parts = S;
  } else {
    for (int e = tid; e < used; e += kThreads) {
      float s = 0.f;
#pragma unroll
      for (int q = 0; q < kWarps; q++) s += smem[q * tile + e];
      smem[e] = s;
    }
    __syncthreads();
  }
  if constexpr (DUAL) {
    // outputs [plo, phi) as (row, column) pairs: the gate's sum and the up's
    const int plo = S > 1 ? lo / 2 : 0, phi = S > 1 ? hi / 2 : used / 2;
    for (int pr = plo + tid; pr < phi; pr += kThreads) {
      const int mm = pr / wo, cc = pr - mm * wo;
      float g = 0.f, u = 0.f;
      if constexpr (S > 1) {
#pragma unroll
        for (int q = 0; q < S; q++) {
          if (q < parts) g += sums[q * per + 2 * pr], u += sums[q * per + 2 * pr + 1];
        }
      } else {
        g = smem[mm * w + cc], u = smem[mm * w + wo + cc];
      }
      const int nn = blockIdx.y * wo + cc;
      if (nn < n) {
        g *= alpha, u *= alpha;
        y[(i64)mm * n + nn] = carve::fromf<T>(g / (1.f + expf(-salpha * g)) * u);
      }
    }
  } else {
    for (int e = lo + tid; e < hi; e += kThreads) {
      float s = 0.f;
#pragma unroll
      for (int q = 0; q < S; q++) {
        if (q < parts) s += sums[q * per + e];
      }
      const int mm = e >> (cwlog + 3), nn = blockIdx.y * w + (e & (w - 1));
      if (nn < n) {
        float v = alpha * s;
        if (c != nullptr) v += beta * carve::tof(c[(i64)mm * carve::lo32(cs) + (i64)nn * carve::hi32(cs)]);
        y[(i64)mm * n + nn] = carve::fromf<T>(v);
      }
    }
  }
}

}  // namespace

// carve_gemv_<dtype>_m<MR>_s<S>[_u]: Y[m, n] = alpha * sum_k A[m, k] B[k, n] + beta * C[m*csm +
// n*csn] for m < M <= MR. mn = M | N << 32, kks = K | ks << 32 (rows per slice), cs = csm | csn <<
// 32; c may be null. _u: B's rows need not be 16-byte aligned. early: B is a weight, read before
// the dependent launch's wait (see gemv).
#define GEMV_PARAMS(T)                                                                              \
  T *y, const T *a, const T *b, const T *c, long long mn, long long kks, int cwlog, float alpha, \
      float beta, long long cs, int early
#define GEMV_ARGS y, a, b, c, mn, kks, cwlog, alpha, beta, cs, early

// A slice count of 1 launches no cluster.
#define GEMV_CLUSTER_1
#define GEMV_CLUSTER_2 __cluster_dims__(2, 1, 1)
#define GEMV_CLUSTER_4 __cluster_dims__(4, 1, 1)
#define GEMV_CLUSTER_8 __cluster_dims__(8, 1, 1)

#define GEMV_ONE(NAME, T, MR, S, RING)                                                      \
  extern "C" __global__ void GEMV_CLUSTER_##S __launch_bounds__(kThreads) carve_gemv_##NAME( \
      GEMV_PARAMS(T)) {                                                                     \
    gemv<T, MR, S, RING, false>(y, a, b, nullptr, c, mn, kks, cwlog, alpha, beta, cs, early, 0.f); \
  }

#define GEMV_S(NAME, T, MR)              \
  GEMV_ONE(NAME##_s1, T, MR, 1, true)    \
  GEMV_ONE(NAME##_s2, T, MR, 2, true)    \
  GEMV_ONE(NAME##_s4, T, MR, 4, true)    \
  GEMV_ONE(NAME##_s8, T, MR, 8, true)    \
  GEMV_ONE(NAME##_s1_u, T, MR, 1, false) \
  GEMV_ONE(NAME##_s2_u, T, MR, 2, false) \
  GEMV_ONE(NAME##_s4_u, T, MR, 4, false) \
  GEMV_ONE(NAME##_s8_u, T, MR, 8, false)

#define GEMV_M(NAME, T)   \
  GEMV_S(NAME##_m1, T, 1) \
  GEMV_S(NAME##_m2, T, 2) \
  GEMV_S(NAME##_m4, T, 4)

GEMV_M(bf16, bf16)
GEMV_M(f16, __half)

// carve_gemv_swiglu_<dtype>_m1_s<S>[_u]: Y[n] = swish(G, salpha) * U for one row of A (M = 1),
// G = alpha * A Bg and U = alpha * A Bu over two [K, N] weights of one layout (carve's
// GatedMatMul; the DUAL gemv above). mn = 1 | N << 32, kks and cwlog as carve_gemv's (cwlog >= 1:
// 4 << cwlog output columns a block).
#define GEMV_SWIGLU_ONE(NAME, T, S, RING)                                                                  \
  extern "C" __global__ void GEMV_CLUSTER_##S __launch_bounds__(kThreads) carve_gemv_swiglu_##NAME(       \
      T* y, const T* a, const T* b, const T* b2, long long mn, long long kks, int cwlog, float alpha,      \
      float salpha, int early) {                                                                           \
    gemv<T, 1, S, RING, true>(y, a, b, b2, nullptr, mn, kks, cwlog, alpha, 0.f, 0, early, salpha);         \
  }
#define GEMV_SWIGLU_S(NAME, T)                 \
  GEMV_SWIGLU_ONE(NAME##_s1, T, 1, true)       \
  GEMV_SWIGLU_ONE(NAME##_s2, T, 2, true)       \
  GEMV_SWIGLU_ONE(NAME##_s4, T, 4, true)       \
  GEMV_SWIGLU_ONE(NAME##_s8, T, 8, true)       \
  GEMV_SWIGLU_ONE(NAME##_s1_u, T, 1, false)    \
  GEMV_SWIGLU_ONE(NAME##_s2_u, T, 2, false)    \
  GEMV_SWIGLU_ONE(NAME##_s4_u, T, 4, false)    \
  GEMV_SWIGLU_ONE(NAME##_s8_u, T, 8, false)

GEMV_SWIGLU_S(bf16_m1, bf16)
GEMV_SWIGLU_S(f16_m1, __half)
