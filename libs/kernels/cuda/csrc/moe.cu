// com.microsoft.MoE, onnxruntime's mixture of experts (moe.go): routing, a counting sort of the
// routes by expert, the two products of every expert over the rows routed to it, and a per-row
// combine. Every launch's geometry is fixed by the shapes; how many rows each expert gets is
// known only on the device, and the products' blocks read it there (blocks past the experts'
// tiles exit), so the sequence is graph-capturable and the host never waits.
//
//   - carve_moe_route_<T>: one thread a row. The softmax of the row's logits in float32 (the
//     maximum subtracted, summed in expert order), the K experts of the highest (probability,
//     index) pairs, ties to the larger index and NaN lowest (onnxruntime's partial_sort with
//     std::greater), each the best below the one before (K passes over the experts, the
//     probabilities recomputed: no per-row array); the weights are the probabilities, over their
//     sum in rank order with normalize. The row's K routes are stored in ascending expert order;
//     a route of weight <= 0 (or NaN) is skipped from here on.
//   - carve_moe_sort: one block of 1024 threads. Counts per expert (shared atomics), their
//     prefix sums (offsets, and the products' tiles of bm rows: tiles[e] is expert e's first),
//     then a stable counting sort in chunks of MOE_CHUNK routes staged in shared memory: warp w
//     places the routes of experts w, w + 32, ... with ballots, so each expert's slots hold its
//     routes in ascending order. slots[r] is route r's slot (-1: skipped), sorted[s] slot s's
//     route.
//   - carve_moe_fc1{,g}_<T>_m<BM> and carve_moe_fc2_<T>_m<BM>: a tiled float32-accumulating
//     product, blockIdx.x a tile of BM slots of one expert (found by binary search in tiles),
//     blockIdx.y 64 output columns, 256 threads of TM x 4 outputs, K in steps of 16 through shared
//     memory. fc1 reads its rows through sorted (input row = route / K) and applies the biases
//     and the activation in its epilogue; the gated form (g) accumulates a gate and a linear
//     column per output (swiglu: fc1's columns 2j, 2j+1 or j, Inter+j; fc3: fc1's and fc3's
//     column j). fc2 reads the activations by slot and adds fc2's bias. Weights are read
//     element by element in either layout ([out, in], or the legacy [in, out]): no alignment is
//     needed.
//   - carve_moe_combine_<T>: out[row] = sum of weight * y over the row's routes in ascending
//     expert order (the CPU kernel's order), in float32, rounded once.
#include "common.cuh"

using namespace carve;

enum {
  MOE_LEGACY = 1,      // weights [E, in, out]; else [E, out, in]
  MOE_ACT_SHIFT = 8,   // flags >> MOE_ACT_SHIFT: the activation
  MOE_RELU = 0,        // kernels.MoERelu and the rest, in order
  MOE_GELU = 1,
  MOE_SILU = 2,
  MOE_IDENTITY = 3,
  MOE_SWIGLU = 4,
  MOE_MAX_K = 64,       // experts per row carve_moe_route takes
  MOE_MAX_EXPERTS = 1024,  // experts carve_moe_sort takes
  MOE_CHUNK = 4096,     // routes carve_moe_sort stages at a time
  MOE_SORT_THREADS = 1024,
};

namespace {

// above reports whether (p, i) ranks above (q, j): the higher probability, ties to the larger
// index, NaN below every number.
__device__ __forceinline__ bool above(float p, int i, float q, int j) {
  bool pn = p != p, qn = q != q;
  if (pn || qn) return pn && qn ? i > j : qn;
  return p > q || (p == q && i > j);
}

template <typename T>
__device__ __forceinline__ void route(const T* logits, int* experts, float* weights, int rows, int E, int k,
                                      int normalize) {
  GRID_STRIDE(t, rows) {
    const T* l = logits + t * E;
    float mx = tof(l[0]);
    for (int j = 1; j < E; j++) {
      float f = tof(l[j]);
      if (f > mx) mx = f;
    }
    float sum = 0.f;
    for (int j = 0; j < E; j++) sum += expf(tof(l[j]) - mx);
    int ids[MOE_MAX_K];
    float ps[MOE_MAX_K];
    for (int r = 0; r < k; r++) {
      int best = -1;
      float bp = 0.f;
      for (int j = 0; j < E; j++) {
        float p = expf(tof(l[j]) - mx) / sum;
        if (r > 0 && !above(ps[r - 1], ids[r - 1], p, j)) continue;
        if (best < 0 || above(p, j, bp, best)) best = j, bp = p;
      }
      ids[r] = best, ps[r] = bp;
    }
    if (normalize) {
      float s = 0.f;
      for (int r = 0; r < k; r++) s += ps[r];
      for (int r = 0; r < k; r++) ps[r] /= s;
    }
    for (int r = 1; r < k; r++) {  // ascending expert order
      for (int q = r; q > 0 && ids[q] < ids[q - 1]; q--) {
        int ti = ids[q];
        ids[q] = ids[q - 1], ids[q - 1] = ti;
        float tp = ps[q];
        ps[q] = ps[q - 1], ps[q - 1] = tp;
      }
    }
    for (int r = 0; r < k; r++) {
      experts[t * k + r] = ids[r];
      weights[t * k + r] = ps[r];
    }
  }
}

__device__ __forceinline__ float activate(int act, float v) {
  switch (act) {
    case MOE_RELU: return 0.f < v ? v : 0.f;
    case MOE_GELU: return 0.5f * v * (1.f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    case MOE_SILU: return v * (1.f / (1.f + expf(-v)));
  }
  return v;
}

// swiglu of one (gate, linear) pair, as onnxruntime's CPU kernel computes it.
__device__ __forceinline__ float swiglu(float g, float l, float alpha, float beta, float limit) {
  g = limit < g ? limit : g;
  l = l < -limit ? -limit : (limit < l ? limit : l);
  float a = alpha * g, s;
  if (a > 0.f) {
    s = 1.f / (1.f + expf(-a));
  } else {
    float e = expf(a);
    s = e / (1.f + e);
  }
  return g * s * (l + beta);
}

constexpr int BN = 64, BK = 16, NT = 256, TN = BN / 16;

// gemm is one block's tile: out[slot, j] for BM slots of one expert and BN columns j of N, the
// sum over K of a[row(slot), k] * W(k, column), W one expert's [cols, K] matrix (legacy: [K,
// cols]), column j*gs + go of wg (and j*ls + lo of wl when GATED); then the epilogue. GATHER: the
// row of slot s is sorted[s] / kroute (an input row), else s.
template <typename TA, typename TW, int BM, bool GATED, bool GATHER>
__device__ __forceinline__ void gemm(float* out, const TA* a, const int* sorted, const int* counts, const TW* wg,
                                     const TW* bg, const TW* wl, const TW* bl, int E, int kroute, int K, int N,
                                     int gcols, int lcols, int gs, int go, int ls, int lo, int flags, float limit,
                                     float alpha, float beta) {
  constexpr int TM = BM / 16;
  __shared__ float As[BK][BM + 1];
  __shared__ float Bg[BK][BN + 1];
  __shared__ float Bl[GATED ? BK : 1][GATED ? BN + 1 : 1];
  __shared__ int rowOf[BM];
  const int* offsets = counts;
  const int* tiles = counts + E + 1;
  const int tile = blockIdx.x;
  if (tile >= tiles[E]) return;
  int e = 0, hi = E - 1;  // the last expert whose first tile is at or before this one
  while (e < hi) {
    int mid = (e + hi + 1) / 2;
    if (tiles[mid] <= tile) e = mid;
    else hi = mid - 1;
  }
  const int s0 = offsets[e] + (tile - tiles[e]) * BM;
  const int cnt = min(BM, offsets[e + 1] - s0);
  const int n0 = blockIdx.y * BN;
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const bool legacy = flags & MOE_LEGACY;
  if (tid < BM) rowOf[tid] = tid < cnt ? (GATHER ? sorted[s0 + tid] / kroute : s0 + tid) : -1;
  __syncthreads();
  const TW* Wg = wg + (i64)e * gcols * K;
  const TW* Wl = GATED ? wl + (i64)e * lcols * K : nullptr;
  float accg[TM][TN], accl[GATED ? TM : 1][GATED ? TN : 1];
#pragma unroll
  for (int i = 0; i < TM; i++) {
#pragma unroll
    for (int j = 0; j < TN; j++) {
      accg[i][j] = 0.f;
      if constexpr (GATED) accl[i][j] = 0.f;
    }
  }
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += NT) {
      const int r = i / BK, kk = i % BK, row = rowOf[r];
      As[kk][r] = row >= 0 && k0 + kk < K ? tof(a[(i64)row * K + k0 + kk]) : 0.f;
    }
    for (int i = tid; i < BK * BN; i += NT) {
      int kk, n;
      if (legacy) kk = i / BN, n = i % BN;  // consecutive threads along a weight row
      else n = i / BK, kk = i % BK;
      const int j = n0 + n, k = k0 + kk;
      float g = 0.f, l = 0.f;
      if (j < N && k < K) {
        const int cg = j * gs + go;
        g = tof(legacy ? Wg[(i64)k * gcols + cg] : Wg[(i64)cg * K + k]);
        if constexpr (GATED) {
          const int cl = j * ls + lo;
          l = tof(legacy ? Wl[(i64)k * lcols + cl] : Wl[(i64)cl * K + k]);
        }
      }
      Bg[kk][n] = g;
      if constexpr (GATED) Bl[kk][n] = l;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk++) {
      float av[TM], gv[TN], lv[TN];
#pragma unroll
      for (int i = 0; i < TM; i++) av[i] = As[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; j++) {
        gv[j] = Bg[kk][tx * TN + j];
        if constexpr (GATED) lv[j] = Bl[kk][tx * TN + j];
      }
#pragma unroll
      for (int i = 0; i < TM; i++) {
#pragma unroll
        for (int j = 0; j < TN; j++) {
          accg[i][j] += av[i] * gv[j];
          if constexpr (GATED) accl[i][j] += av[i] * lv[j];
        }
      }
    }
    __syncthreads();
  }
  const int act = flags >> MOE_ACT_SHIFT;
#pragma unroll
  for (int i = 0; i < TM; i++) {
    const int r = ty * TM + i;
    if (r >= cnt) continue;
    float* o = out + (i64)(s0 + r) * N;
#pragma unroll
    for (int jj = 0; jj < TN; jj++) {
      const int j = n0 + tx * TN + jj;
      if (j >= N) continue;
      float g = accg[i][jj];
      if (bg) g += tof(bg[(i64)e * gcols + j * gs + go]);
      float v;
      if constexpr (GATED) {
        float l = accl[i][jj];
        if (bl) l += tof(bl[(i64)e * lcols + j * ls + lo]);
        v = act == MOE_SWIGLU ? swiglu(g, l, alpha, beta, limit) : activate(act, g) * l;
      } else {
        v = activate(act, g);
      }
      o[j] = v;
    }
  }
}

}  // namespace

// carve_moe_route_<T>: re = rows | E << 32.
#define MOE_ROUTE(name, T)                                                                          \
  extern "C" __global__ void name(const T* logits, int* experts, float* weights, i64 re, int k,  \
                                  int normalize) {                                                  \
    route<T>(logits, experts, weights, lo32(re), hi32(re), k, normalize);                           \
  }
MOE_ROUTE(carve_moe_route_f32, float)
MOE_ROUTE(carve_moe_route_f16, __half)
MOE_ROUTE(carve_moe_route_bf16, bf16)

// carve_moe_sort: one block of MOE_SORT_THREADS; re = routes | E << 32; counts holds offsets[E+1]
// then tiles[E+1] (tiles of bm slots).
extern "C" __global__ void __launch_bounds__(MOE_SORT_THREADS)
    carve_moe_sort(const int* experts, const float* weights, int* sorted, int* slots, int* counts, i64 re, int bm) {
  __shared__ int cnt[MOE_MAX_EXPERTS];
  __shared__ int chunk[MOE_CHUNK];
  const int R = lo32(re), E = hi32(re);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
  int* offsets = counts;
  int* tiles = counts + E + 1;
  for (int e = tid; e < E; e += blockDim.x) cnt[e] = 0;
  __syncthreads();
  for (int r = tid; r < R; r += blockDim.x) {
    if (weights[r] > 0.f) atomicAdd(&cnt[experts[r]], 1);
  }
  __syncthreads();
  if (tid == 0) {
    int off = 0, tl = 0;
    for (int e = 0; e < E; e++) {
      int c = cnt[e];
      offsets[e] = off, tiles[e] = tl;
      cnt[e] = off;  // from here on: expert e's next slot
      off += c, tl += (c + bm - 1) / bm;
    }
    offsets[E] = off, tiles[E] = tl;
  }
  __syncthreads();
  for (int c0 = 0; c0 < R; c0 += MOE_CHUNK) {
    const int len = min(MOE_CHUNK, R - c0);
    for (int i = tid; i < len; i += blockDim.x) {
      const int r = c0 + i;
      const int id = weights[r] > 0.f ? experts[r] : -1;
      chunk[i] = id;
      if (id < 0) slots[r] = -1;
    }
    __syncthreads();
    for (int e = warp; e < E; e += warps) {
      int base = cnt[e];
      for (int i = 0; i < len; i += 32) {
        const int id = i + lane < len ? chunk[i + lane] : -1;
        const unsigned m = __ballot_sync(0xffffffffu, id == e);
        if (id == e) {
          const int s = base + __popc(m & ((1u << lane) - 1));
          sorted[s] = c0 + i + lane;
          slots[c0 + i + lane] = s;
        }
        base += __popc(m);
      }
      __syncwarp();
      if (lane == 0) cnt[e] = base;
    }
    __syncthreads();
  }
}

// carve_moe_fc1_<T>_m<BM> (an activation), carve_moe_fc1g_<T>_m<BM> (gated: swiglu, or fc3) and
// carve_moe_fc2_<T>_m<BM>: ek = E | K (experts per row) << 32, kn = K | N << 32, cols = gate
// matrix columns | linear matrix columns << 32, gmap = gs | go << 32, lmap = ls | lo << 32.
#define MOE_GEMM(name, TA, T, BM, GATED, GATHER)                                                        \
  extern "C" __global__ void __launch_bounds__(NT, 2)                                                  \
      name(float* out, const TA* a, const int* sorted, const int* counts, const T* wg, const T* bg,    \
           const T* wl, const T* bl, i64 ek, i64 kn, i64 cols, i64 gmap, i64 lmap, int flags,           \
           float limit, float alpha, float beta) {                                                     \
    gemm<TA, T, BM, GATED, GATHER>(out, a, sorted, counts, wg, bg, wl, bl, lo32(ek), hi32(ek), lo32(kn), \
                                   hi32(kn), lo32(cols), hi32(cols), lo32(gmap), hi32(gmap),          \
                                   lo32(lmap), hi32(lmap), flags, limit, alpha, beta);                 \
  }
#define MOE_GEMMS(tn, T, BM)                                          \
  MOE_GEMM(carve_moe_fc1_##tn##_m##BM, T, T, BM, false, true)         \
  MOE_GEMM(carve_moe_fc1g_##tn##_m##BM, T, T, BM, true, true)         \
  MOE_GEMM(carve_moe_fc2_##tn##_m##BM, float, T, BM, false, false)
MOE_GEMMS(f32, float, 16)
MOE_GEMMS(f32, float, 64)
MOE_GEMMS(f16, __half, 16)
MOE_GEMMS(f16, __half, 64)
MOE_GEMMS(bf16, bf16, 16)
MOE_GEMMS(bf16, bf16, 64)

// carve_moe_combine_<T>: rh = rows | hidden << 32.
#define MOE_COMBINE(name, T)                                                                          \
  extern "C" __global__ void name(T* out, const float* y, const float* weights, const int* slots,    \
                                  i64 rh, int k) {                                                    \
    const int H = hi32(rh);                                                                           \
    GRID_STRIDE(i, (i64)lo32(rh) * H) {                                                               \
      const i64 t = i / H;                                                                            \
      const int c = (int)(i - t * H);                                                                 \
      float acc = 0.f;                                                                                \
      for (int j = 0; j < k; j++) {                                                                   \
        const int s = slots[t * k + j];                                                               \
        if (s >= 0) acc += weights[t * k + j] * y[(i64)s * H + c];                                    \
      }                                                                                               \
      out[i] = fromf<T>(acc);                                                                         \
    }                                                                                                 \
  }
MOE_COMBINE(carve_moe_combine_f32, float)
MOE_COMBINE(carve_moe_combine_f16, __half)
MOE_COMBINE(carve_moe_combine_bf16, bf16)
