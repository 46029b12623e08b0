// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare,
// ReduceL1, ReduceL2, ReduceLogSumExp, ArgMax, ArgMin. Every output element accumulates in double
// over its reduced sub-tensor, as the CPU kernels do.
//
// Three modes (mode, chosen by reduce.go):
//   1 (rows): the reduced elements of an output are contiguous (the reduced dims are innermost)
//     and one block reduces each output;
//   2 (columns): one reduced dim, strided, as a mean over the sequence of [B, H, S, D] is: a block
//     takes 32 consecutive outputs (threadIdx.x, coalesced when the kept innermost dim is
//     contiguous) and splits the reduced dim over threadIdx.y, then combines through shared
//     memory, so a few outputs over a long dim still fill the device (not for ArgMax/ArgMin or
//     ReduceLogSumExp);
//   0: one thread walks each output's reduced sub-tensor through its own strided layout.
#include <cooperative_groups.h>

#include "common.cuh"

using namespace carve;
namespace cg = cooperative_groups;

enum RedOp {
  R_SUM = 0, R_MEAN = 1, R_MAX = 2, R_MIN = 3, R_PROD = 4, R_SUMSQ = 5, R_L1 = 6, R_L2 = 7,
  R_LSE = 8, R_ARGMAX = 9, R_ARGMIN = 10,
};

namespace {

__device__ __forceinline__ double ldd(float v) { return v; }
__device__ __forceinline__ double ldd(__half v) { return __half2float(v); }
__device__ __forceinline__ double ldd(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ double ldd(i64 v) { return (double)v; }
__device__ __forceinline__ double ldd(int v) { return v; }

template <typename T> __device__ __forceinline__ T fromd(double v);
template <> __device__ __forceinline__ float fromd<float>(double v) { return (float)v; }
template <> __device__ __forceinline__ __half fromd<__half>(double v) { return __float2half_rn((float)v); }
template <> __device__ __forceinline__ bf16 fromd<bf16>(double v) { return __float2bfloat16_rn((float)v); }
template <> __device__ __forceinline__ i64 fromd<i64>(double v) { return (i64)v; }
template <> __device__ __forceinline__ int fromd<int>(double v) { return (int)v; }

template <typename T> struct IsInt { static const bool v = false; };
template <> struct IsInt<i64> { static const bool v = true; };
template <> struct IsInt<int> { static const bool v = true; };

__device__ __forceinline__ double init(int op) {
  switch (op) {
    case R_MAX: case R_ARGMAX: return -INFINITY;
    case R_MIN: case R_ARGMIN: return INFINITY;
    case R_PROD: return 1.0;
  }
  return 0.0;
}

// step folds v into acc; lse is the log-sum-exp shift.
__device__ __forceinline__ double step(int op, double acc, double v, double lse) {
  switch (op) {
    case R_SUM: case R_MEAN: return acc + v;
    case R_MAX: return fmax(acc, v);
    case R_MIN: return fmin(acc, v);
    case R_PROD: return acc * v;
    case R_SUMSQ: case R_L2: return acc + v * v;
    case R_L1: return acc + fabs(v);
    case R_LSE: return acc + exp(v - lse);
  }
  return acc;
}

// combine merges two partial accumulators.
__device__ __forceinline__ double combine(int op, double a, double b) {
  switch (op) {
    case R_MAX: return fmax(a, b);
    case R_MIN: return fmin(a, b);
    case R_PROD: return a * b;
  }
  return a + b;
}

template <typename T>
__device__ __forceinline__ void finish(int op, T* out, i64 o, double acc, double lse, i64 count) {
  double r = acc;
  switch (op) {
    case R_MEAN:
      if (IsInt<T>::v) r = (double)((i64)acc / (count > 0 ? count : 1));
      else r = acc / (double)count;
      break;
    case R_L2: r = sqrt(acc); break;
    case R_LSE: r = log(acc) + lse; break;
  }
  out[o] = fromd<T>(r);
}

__device__ __forceinline__ double shfl_d(double v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }

__device__ __forceinline__ double warp_comb(int op, double v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = combine(op, v, shfl_d(v, o));
  return v;
}

// block_comb combines v over the block; every thread gets the result.
__device__ __forceinline__ double block_comb(int op, double v, double* scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_comb(op, v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  double r = lane < nw ? scratch[lane] : init(op == R_MEAN || op == R_LSE ? R_SUM : op);
  return warp_comb(op, r);
}

// better reports whether candidate (v, i) beats (bv, bi) for ArgMax/ArgMin.
__device__ __forceinline__ bool better(int op, double v, i64 i, double bv, i64 bi, int last) {
  if (bi < 0) return true;
  if (op == R_ARGMAX ? v > bv : v < bv) return true;
  return v == bv && (last ? i > bi : i < bi);
}

template <typename T>
__device__ __forceinline__ void reduce(void* outp, const T* x, i64 nOut, i64 count, int op, int mode, int last,
                                       const Layout& K, const Layout& R) {
  __shared__ double scratch[32];
  __shared__ i64 iscratch[32];
  const bool arg = op == R_ARGMAX || op == R_ARGMIN;
  if (mode == 1) {  // one block per output, reduced elements contiguous
    for (i64 o = blockIdx.x; o < nOut; o += gridDim.x) {
      i64 base, u1, u2;
      K.offsets(o, base, u1, u2);
      const T* xr = x + base;
      if (arg) {
        double bv = 0;
        i64 bi = -1;
        for (i64 k = threadIdx.x; k < count; k += blockDim.x) {
          double v = ldd(xr[k]);
          if (better(op, v, k, bv, bi, last)) bv = v, bi = k;
        }
#pragma unroll
        for (int s = 16; s > 0; s >>= 1) {
          double ov = shfl_d(bv, s);
          i64 oi = __shfl_xor_sync(0xffffffffu, bi, s);
          if (oi >= 0 && better(op, ov, oi, bv, bi, last)) bv = ov, bi = oi;
        }
        int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
        __syncthreads();
        if (lane == 0) scratch[warp] = bv, iscratch[warp] = bi;
        __syncthreads();
        if (threadIdx.x == 0) {
          for (int w = 1; w < nw; w++)
            if (iscratch[w] >= 0 && better(op, scratch[w], iscratch[w], bv, bi, last)) bv = scratch[w], bi = iscratch[w];
          ((i64*)outp)[o] = bi < 0 ? 0 : bi;
        }
        continue;
      }
      double lse = 0;
      if (op == R_LSE) {
        double m = -INFINITY;
        for (i64 k = threadIdx.x; k < count; k += blockDim.x) m = fmax(m, ldd(xr[k]));
        m = block_comb(R_MAX, m, scratch);
        lse = isinf(m) ? 0 : m;
      }
      double acc = init(op);
      for (i64 k = threadIdx.x; k < count; k += blockDim.x) acc = step(op, acc, ldd(xr[k]), lse);
      acc = block_comb(op == R_MEAN || op == R_LSE || op == R_SUMSQ || op == R_L2 || op == R_L1 ? R_SUM : op, acc,
                       scratch);
      if (threadIdx.x == 0) finish<T>(op, (T*)outp, o, acc, lse, count);
    }
    return;
  }
  if (mode == 2) {
    __shared__ double part[32][33];
    const i64 o = (i64)blockIdx.x * 32 + threadIdx.x;
    const i64 rs = R.st[0][0];
    double acc = init(op);
    if (o < nOut) {
      i64 base, u1, u2;
      K.offsets(o, base, u1, u2);
      // RU loads in flight per thread before they are accumulated, in the order one at a time
      // would take them (one load at a time: a mean over the 2048 positions of [1, 2, 2048, 128]
      // took 18 us on an H200)
      constexpr int RU = 8;
      const i64 ys = blockDim.y;
      for (i64 k0 = threadIdx.y; k0 < count; k0 += RU * ys) {
        double v[RU];
#pragma unroll
        for (int u = 0; u < RU; u++) {
          const i64 k = k0 + u * ys;
          v[u] = k < count ? ldd(x[base + k * rs]) : 0.0;
        }
#pragma unroll
        for (int u = 0; u < RU; u++)
          if (k0 + u * ys < count) acc = step(op, acc, v[u], 0);
      }
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && o < nOut) {
      for (int j = 1; j < (int)blockDim.y; j++) acc = combine(op, acc, part[j][threadIdx.x]);
      finish<T>(op, (T*)outp, o, acc, 0, count);
    }
    return;
  }
  GRID_STRIDE(o, nOut) {
    i64 base, u1, u2;
    K.offsets(o, base, u1, u2);
    if (arg) {
      double bv = 0;
      i64 bi = -1;
      for (i64 k = 0; k < count; k++) {
        i64 off, w1, w2;
        R.offsets(k, off, w1, w2);
        double v = ldd(x[base + off]);
        if (better(op, v, k, bv, bi, last)) bv = v, bi = k;
      }
      ((i64*)outp)[o] = bi < 0 ? 0 : bi;
      continue;
    }
    double lse = 0;
    if (op == R_LSE) {
      double m = -INFINITY;
      for (i64 k = 0; k < count; k++) {
        i64 off, w1, w2;
        R.offsets(k, off, w1, w2);
        m = fmax(m, ldd(x[base + off]));
      }
      lse = isinf(m) ? 0 : m;
    }
    double acc = init(op);
    for (i64 k = 0; k < count; k++) {
      i64 off, w1, w2;
      R.offsets(k, off, w1, w2);
      acc = step(op, acc, ldd(x[base + off]), lse);
    }
    finish<T>(op, (T*)outp, o, acc, lse, count);
  }
}

// betterf is better for float values (exact for the float types argmax_rows takes).
__device__ __forceinline__ bool betterf(bool mx, float v, i64 i, float bv, i64 bi, int last) {
  if (bi < 0) return true;
  if (mx ? v > bv : v < bv) return true;
  return v == bv && (last ? i > bi : i < bi);
}

// block_argmax is a block's ArgMax or ArgMin candidate (the first of equals, or the last with
// last) over vectors [vlo, vhi) of the row xr and, with tail, the elements past its whole vectors
// up to count: each thread with RU 16-byte loads in flight, compared as floats, then the threads'
// candidates merged as mode 1 merges them. Thread 0 gets the result (bi -1: no element); the
// block's threads all call it, and sv and si may be reused once it returns.
template <typename T>
__device__ __forceinline__ void block_argmax(const T* xr, i64 vlo, i64 vhi, bool tail, i64 count, bool mx, int last,
                                             float* sv, i64* si, float& bv, i64& bi) {
  constexpr int V = 16 / sizeof(T), RU = 4;
  const i64 bs = blockDim.x;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  bv = 0.f, bi = -1;
  for (i64 v0 = vlo + threadIdx.x; v0 < vhi; v0 += RU * bs) {
    union {
      uint4 u;
      T e[V];
    } w[RU];
#pragma unroll
    for (int r = 0; r < RU; r++)
      if (v0 + r * bs < vhi) w[r].u = ((const uint4*)xr)[v0 + r * bs];
#pragma unroll
    for (int r = 0; r < RU; r++) {
      const i64 v = v0 + r * bs;
      if (v >= vhi) break;
#pragma unroll
      for (int k = 0; k < V; k++) {
        const float val = tof(w[r].e[k]);
        if (betterf(mx, val, v * V + k, bv, bi, last)) bv = val, bi = v * V + k;
      }
    }
  }
  if (tail) {
    for (i64 k = count / V * V + threadIdx.x; k < count; k += bs) {
      const float val = tof(xr[k]);
      if (betterf(mx, val, k, bv, bi, last)) bv = val, bi = k;
    }
  }
#pragma unroll
  for (int s = 16; s > 0; s >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, bv, s);
    const i64 oi = __shfl_xor_sync(0xffffffffu, bi, s);
    if (oi >= 0 && betterf(mx, ov, oi, bv, bi, last)) bv = ov, bi = oi;
  }
  if (lane == 0) sv[warp] = bv, si[warp] = bi;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < nw; w++)
      if (si[w] >= 0 && betterf(mx, sv[w], si[w], bv, bi, last)) bv = sv[w], bi = si[w];
  }
  __syncthreads();  // sv and si are read before anyone writes them again
}

// argmax_rows is ArgMax or ArgMin (op) over nOut rows of count contiguous elements, row o at
// x + o * count, every row 16-byte aligned: a block per row (block_argmax). A greedy choice over a
// vocabulary of 151936 in mode 1 walked 594 elements a thread one load at a time.
template <typename T>
__device__ __forceinline__ void argmax_rows(i64* out, const T* x, i64 nOut, i64 count, int op, int last) {
  constexpr int V = 16 / sizeof(T);
  __shared__ float sv[32];
  __shared__ i64 si[32];
  for (i64 o = blockIdx.x; o < nOut; o += gridDim.x) {
    float bv;
    i64 bi;
    block_argmax<T>(x + o * count, 0, count / V, true, count, op == R_ARGMAX, last, sv, si, bv, bi);
    if (threadIdx.x == 0) out[o] = bi < 0 ? 0 : bi;
  }
}

// argmax_split is argmax_rows for a few long rows, such as a decode step's greedy choice over a
// vocabulary (151936 at batch 1 took 18 us on one multiprocessor of an H200, bound by its
// comparisons): a thread block cluster of ARGMAX_SPLIT blocks per row (grid (ARGMAX_SPLIT, nOut)),
// block rank r taking the r-th of ARGMAX_SPLIT equal runs of the row's vectors (the last one the
// elements past them), and the blocks' candidates meeting in rank 0's shared memory, merged in
// rank order.
enum { ARGMAX_SPLIT = 8 };

template <typename T>
__device__ __forceinline__ void argmax_split(i64* out, const T* x, i64 count, int op, int last) {
  constexpr int V = 16 / sizeof(T);
  __shared__ float sv[32];
  __shared__ i64 si[32];
  __shared__ float cv[ARGMAX_SPLIT];
  __shared__ i64 ci[ARGMAX_SPLIT];
  cg::cluster_group cl = cg::this_cluster();
  const int rank = (int)cl.block_rank();
  // Announces this block's start: rank 0's shared memory is written only after every block of
  // the cluster has started (the matching wait is before the stores).
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  const i64 o = blockIdx.y, nv = count / V, per = (nv + ARGMAX_SPLIT - 1) / ARGMAX_SPLIT;
  const i64 lo = min(rank * per, nv), hi = min(lo + per, nv);
  const bool mx = op == R_ARGMAX;
  float bv;
  i64 bi;
  block_argmax<T>(x + o * count, lo, hi, rank == ARGMAX_SPLIT - 1, count, mx, last, sv, si, bv, bi);
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
  if (threadIdx.x == 0) {
    cl.map_shared_rank(cv, 0)[rank] = bv;
    cl.map_shared_rank(ci, 0)[rank] = bi;
  }
  cl.sync();
  if (rank == 0 && threadIdx.x == 0) {
    bv = cv[0], bi = ci[0];
    for (int r = 1; r < ARGMAX_SPLIT; r++)
      if (ci[r] >= 0 && betterf(mx, cv[r], ci[r], bv, bi, last)) bv = cv[r], bi = ci[r];
    out[o] = bi < 0 ? 0 : bi;
  }
}

}  // namespace

// carve_argmax_rows_<T>: ArgMax (op R_ARGMAX) or ArgMin (R_ARGMIN) over contiguous, 16-byte aligned
// rows (argmax_rows); blockDim.x a multiple of 32, at most 1024.
#define ARGMAX_ROWS(name, T)                                                                             \
  extern "C" __global__ void name(i64* out, const T* x, i64 nOut, i64 count, int op, int last) {     \
    argmax_rows<T>(out, x, nOut, count, op, last);                                                       \
  }
ARGMAX_ROWS(carve_argmax_rows_f32, float)
ARGMAX_ROWS(carve_argmax_rows_f16, __half)
ARGMAX_ROWS(carve_argmax_rows_bf16, bf16)

// carve_argmax_split_<T>: carve_argmax_rows' operation with a cluster of ARGMAX_SPLIT blocks a row
// (argmax_split); grid (ARGMAX_SPLIT, nOut).
#define ARGMAX_SPLIT_K(name, T)                                                                              \
  extern "C" __global__ void __cluster_dims__(ARGMAX_SPLIT, 1, 1) name(i64* out, const T* x, i64 count, int op, \
                                                                      int last) {                           \
    argmax_split<T>(out, x, count, op, last);                                                                \
  }
ARGMAX_SPLIT_K(carve_argmax_split_f32, float)
ARGMAX_SPLIT_K(carve_argmax_split_f16, __half)
ARGMAX_SPLIT_K(carve_argmax_split_bf16, bf16)

// carve_reduce_<T>: kept layout (k*: the output's dims with x's strides) and reduced layout
// (r*: the reduced dims with x's strides), each rank <= 6 with dims packed two per argument.
#define REDUCE(name, T)                                                                                     \
  extern "C" __global__ void name(void* out, const T* x, i64 nOut, i64 count, int op, int mode, int last,  \
                                  int krank, i64 k01, i64 k23, i64 k45, i64 ks0, i64 ks1, i64 ks2, i64 ks3, \
                                  i64 ks4, i64 ks5, int rrank, i64 r01, i64 r23, i64 r45, i64 rs0, i64 rs1, \
                                  i64 rs2, i64 rs3, i64 rs4, i64 rs5) {                                     \
    Layout K, R;                                                                                            \
    K.rank = krank;                                                                                         \
    K.dims[0] = lo32(k01); K.dims[1] = hi32(k01); K.dims[2] = lo32(k23);                                   \
    K.dims[3] = hi32(k23); K.dims[4] = lo32(k45); K.dims[5] = hi32(k45);                                   \
    K.st[0][0] = ks0; K.st[0][1] = ks1; K.st[0][2] = ks2; K.st[0][3] = ks3; K.st[0][4] = ks4;              \
    K.st[0][5] = ks5;                                                                                       \
    R.rank = rrank;                                                                                         \
    R.dims[0] = lo32(r01); R.dims[1] = hi32(r01); R.dims[2] = lo32(r23);                                   \
    R.dims[3] = hi32(r23); R.dims[4] = lo32(r45); R.dims[5] = hi32(r45);                                   \
    R.st[0][0] = rs0; R.st[0][1] = rs1; R.st[0][2] = rs2; R.st[0][3] = rs3; R.st[0][4] = rs4;              \
    R.st[0][5] = rs5;                                                                                       \
    for (int d = 0; d < MAXR; d++) K.st[1][d] = K.st[2][d] = R.st[1][d] = R.st[2][d] = 0;                  \
    reduce<T>(out, x, nOut, count, op, mode, last, K, R);                                                   \
  }
REDUCE(carve_reduce_f32, float)
REDUCE(carve_reduce_f16, __half)
REDUCE(carve_reduce_bf16, bf16)
REDUCE(carve_reduce_i64, i64)
REDUCE(carve_reduce_i32, int)
