// Convolution kernels of our own: the "own" tactic of Conv and ConvTranspose (conv.go), which
// needs no library and no workspace, and which the "cudnn" tactic falls back to when cuDNN is
// not loaded or has no algorithm within the workspace it is carved. 2-D only: a 1-D
// convolution arrives with height 1.
//
//   - carve_conv_simt_f32 / carve_convt_simt_f32: an implicit GEMM per group, Y_g (M/g x P) =
//     W_g (M/g x K) * col (K x P), K = C/g * KH * KW and P = N * OH * OW (the batch folded into
//     the columns). col is never built: each 64 x 64 output tile walks K in slices of 16, its
//     256 threads gathering the slice of W and of col (the input at the tap's position, 0 in the
//     padding) into shared memory and accumulating a 4 x 4 block each in float32 FMAs.
//   - carve_conv_wmma_{f16,bf16} / carve_convt_wmma_*: the same product on tensor cores (wmma
//     16x16x16 fragments of the 16-bit type, float32 accumulation), a 64 x 64 tile per 4 warps,
//     K in slices of 32; the accumulators go through shared memory to add the bias and round
//     once to the output's type.
//   - ConvTranspose is the same product with W read as [C, M/g, KH, KW] (K = C/g * KH * KW over
//     the input's channels) and col the gather of the input position each output position
//     receives under a tap: ((oy + pad - ky*dil) / stride), where that divides and lies inside.
//   - carve_conv_dw_*: group == C (depthwise, any channel multiplier): one thread per output
//     element, a direct loop over the taps.
//   - carve_conv_epilogue_*: after a cuDNN convolution, y[n, m, ...] += b[m] (when a bias is
//     given), += z[same index] (com.microsoft.FusedConv's Z, when given), then Relu (when
//     asked), in float32 and rounded once to T.
//
// The epilogue (bias, FusedConv's Z, Relu: v < 0 ? 0 : v, which keeps NaN and -0 as the CPU's
// does) is fused into every kernel of ours (the sum in float32, one rounding to the output's
// type). Index arithmetic is 32-bit within one image and 64-bit across images: Select checks
// that an image of the input and of the output, the weights and N * OH * OW stay below 2^31.
#include <mma.h>

#include "common.cuh"

using namespace carve;

namespace {

// Geo is a convolution's geometry; for ConvTranspose C and IH x IW are its input's, M and
// OH x OW its output's, as for Conv.
struct Geo {
  i64 N;
  int C, M, IH, IW, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, cg, mg;
  bool relu;  // FusedConv's activation "Relu", applied last
};

// Epi is the store's epilogue operands: the bias b [M] and FusedConv's z (the output's shape),
// each null when absent. z may be y itself (FusedConv's Z in place, kernels.InPlace): each
// output element is stored once, by the thread that has just read its z, so neither z nor y is
// __restrict__.
template <typename T>
struct Epi {
  const T* __restrict__ b;
  const T* z;
};

// epilogue finishes output element i (channel oc) from its float32 sum v: bias, z, Relu (a
// comparison that keeps NaN and -0), one rounding to T.
template <typename T>
__device__ __forceinline__ T epilogue(float v, Epi<T> e, bool relu, i64 i, int oc) {
  if (e.b) v += tof(e.b[oc]);
  if (e.z) v += tof(e.z[i]);
  if (relu) v = v < 0.f ? 0.f : v;
  return fromf<T>(v);
}

// CONV_PARAMS are the geometry's kernel parameters, two values in each long long (pack32).
#define CONV_PARAMS \
  i64 nimg, i64 chans, i64 in_hw, i64 out_hw, i64 kern, i64 stride, i64 pad, i64 dil, i64 grp, int relu
#define CONV_GEO(g)                                    \
  Geo g;                                               \
  g.N = nimg;                                          \
  g.C = lo32(chans), g.M = hi32(chans);                \
  g.IH = lo32(in_hw), g.IW = hi32(in_hw);              \
  g.OH = lo32(out_hw), g.OW = hi32(out_hw);            \
  g.KH = lo32(kern), g.KW = hi32(kern);                \
  g.sh = lo32(stride), g.sw = hi32(stride);            \
  g.ph = lo32(pad), g.pw = hi32(pad);                  \
  g.dh = lo32(dil), g.dw = hi32(dil);                  \
  g.cg = lo32(grp), g.mg = hi32(grp);              \
  g.relu = relu != 0;

// tap is element (k, column) of the group's im2col matrix: the input (xg, the group's first
// channel of the column's image) at output position (oy, ox) under tap k = (c, ky, kx), 0 in the
// padding. TR: the ConvTranspose gather (the input position that sends to (oy, ox) under k).
template <typename T, bool TR>
__device__ __forceinline__ T tap(const T* __restrict__ xg, const Geo& g, int k, int oy, int ox, T zero) {
  const int khw = g.KH * g.KW;
  const int c = k / khw, r = k - c * khw;
  const int ky = r / g.KW, kx = r - ky * g.KW;
  int iy, ix;
  if (!TR) {
    iy = oy * g.sh - g.ph + ky * g.dh;
    ix = ox * g.sw - g.pw + kx * g.dw;
  } else {
    const int ty = oy + g.ph - ky * g.dh, tx = ox + g.pw - kx * g.dw;
    if (ty < 0 || tx < 0 || ty % g.sh != 0 || tx % g.sw != 0) return zero;
    iy = ty / g.sh;
    ix = tx / g.sw;
  }
  if ((unsigned)iy >= (unsigned)g.IH || (unsigned)ix >= (unsigned)g.IW) return zero;
  return xg[(c * g.IH + iy) * g.IW + ix];
}

// wt is element (m, k) of group grp's weight matrix: W [M, C/g, KH, KW] row m of the group, or
// for ConvTranspose W [C, M/g, KH, KW] at input channel c of the group, output channel m.
template <typename T, bool TR>
__device__ __forceinline__ T wt(const T* __restrict__ w, const Geo& g, int grp, int m, int k) {
  const int khw = g.KH * g.KW;
  if (!TR) return w[(i64)(grp * g.mg + m) * (g.cg * khw) + k];
  const int c = k / khw, r = k - c * khw;
  return w[((i64)(grp * g.cg + c) * g.mg + m) * khw + r];
}

// column is where output column p (of N * OH * OW) lies: its image and position.
struct Column {
  int n, oy, ox, rem;  // rem = oy * OW + ox
};

__device__ __forceinline__ Column column(const Geo& g, int p) {
  Column c;
  const int ohw = g.OH * g.OW;
  c.n = p / ohw;
  c.rem = p - c.n * ohw;
  c.oy = c.rem / g.OW;
  c.ox = c.rem - c.oy * g.OW;
  return c;
}

// store writes output (m, column p) of group grp: v through the epilogue, rounded to T.
template <typename T>
__device__ __forceinline__ void store(T* y, Epi<T> e, const Geo& g, int grp, int m, int p, float v) {
  const Column c = column(g, p);
  const int oc = grp * g.mg + m;
  const i64 i = ((i64)c.n * g.M + oc) * (g.OH * g.OW) + c.rem;
  y[i] = epilogue(v, e, g.relu, i, oc);
}

constexpr int S_BM = 64, S_BN = 64, S_BK = 16, S_THREADS = 256;

// conv_simt is the float32 implicit GEMM: block (column tile, row tile, group), 256 threads.
template <typename T, bool TR>
__device__ __forceinline__ void conv_simt(const T* __restrict__ x, const T* __restrict__ w, Epi<T> e,
                                          T* y, const Geo& g) {
  __shared__ float As[S_BK][S_BM + 4];  // As[k][m]: the weight slice, k-major
  __shared__ float Bs[S_BK][S_BN + 4];  // Bs[k][p]: the im2col slice
  const int tid = threadIdx.x, grp = blockIdx.z;
  const int m0 = blockIdx.y * S_BM, p0 = blockIdx.x * S_BN;
  const int K = g.cg * g.KH * g.KW, P = (int)(g.N * g.OH * g.OW);
  const T zero = fromf<T>(0.f);
  // loading: a thread gathers 4 weights of row am and 4 taps of column bp
  const int am = tid >> 2, ak = (tid & 3) * 4;
  const int bp = tid & 63, bk = tid >> 6;
  const bool rowIn = m0 + am < g.mg, colIn = p0 + bp < P;
  const Column bc = column(g, colIn ? p0 + bp : 0);
  const T* xg = x + ((i64)bc.n * g.C + (i64)grp * g.cg) * g.IH * g.IW;
  // computing: a thread owns rows ty*4.. and columns tx*4.. of the tile
  const int tx = tid & 15, ty = tid >> 4;
  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 4; j++) acc[i][j] = 0.f;
  for (int k0 = 0; k0 < K; k0 += S_BK) {
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const int k = k0 + ak + j;
      As[ak + j][am] = rowIn && k < K ? tof(wt<T, TR>(w, g, grp, m0 + am, k)) : 0.f;
    }
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const int kk = bk + 4 * j, k = k0 + kk;
      Bs[kk][bp] = colIn && k < K ? tof(tap<T, TR>(xg, g, k, bc.oy, bc.ox, zero)) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < S_BK; kk++) {
      float a[4], v[4];
#pragma unroll
      for (int i = 0; i < 4; i++) a[i] = As[kk][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; j++) v[j] = Bs[kk][tx * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j] = fmaf(a[i], v[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int m = m0 + ty * 4 + i;
    if (m >= g.mg) continue;
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const int p = p0 + tx * 4 + j;
      if (p < P) store(y, e, g, grp, m, p, acc[i][j]);
    }
  }
}

constexpr int W_BM = 64, W_BN = 64, W_BK = 32, W_THREADS = 128;

// conv_wmma is the 16-bit implicit GEMM on tensor cores: block (column tile, row tile, group),
// 4 warps, each a 32 x 32 quarter of the tile as 2 x 2 accumulator fragments. The shared tiles'
// leading dimensions (40 and 72 elements, 68 floats) keep every fragment's first element 32-byte
// aligned, as load_matrix_sync and store_matrix_sync require.
template <typename T, bool TR>
__device__ __forceinline__ void conv_wmma(const T* __restrict__ x, const T* __restrict__ w, Epi<T> e,
                                          T* y, const Geo& g) {
  using namespace nvcuda;
  __shared__ __align__(32) T As[W_BM][W_BK + 8];     // As[m][k]
  __shared__ __align__(32) T Bs[W_BK][W_BN + 8];     // Bs[k][p]
  __shared__ __align__(32) float Cs[W_BM][W_BN + 4];  // the accumulated tile
  const int tid = threadIdx.x, warp = tid >> 5, grp = blockIdx.z;
  const int m0 = blockIdx.y * W_BM, p0 = blockIdx.x * W_BN;
  const int K = g.cg * g.KH * g.KW, P = (int)(g.N * g.OH * g.OW);
  const T zero = fromf<T>(0.f);
  // loading: a thread gathers 16 weights of row am and 16 taps of column bp
  const int am = tid >> 1, ak = (tid & 1) * 16;
  const int bp = tid & 63, bk = tid >> 6;
  const bool rowIn = m0 + am < g.mg, colIn = p0 + bp < P;
  const Column bc = column(g, colIn ? p0 + bp : 0);
  const T* xg = x + ((i64)bc.n * g.C + (i64)grp * g.cg) * g.IH * g.IW;
  const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.f);
  for (int k0 = 0; k0 < K; k0 += W_BK) {
#pragma unroll
    for (int j = 0; j < 16; j++) {
      const int k = k0 + ak + j;
      As[am][ak + j] = rowIn && k < K ? wt<T, TR>(w, g, grp, m0 + am, k) : zero;
    }
#pragma unroll
    for (int j = 0; j < 16; j++) {
      const int kk = bk + 2 * j, k = k0 + kk;
      Bs[kk][bp] = colIn && k < K ? tap<T, TR>(xg, g, k, bc.oy, bc.ox, zero) : zero;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < W_BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb[2];
#pragma unroll
      for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], &As[wm + i * 16][kk], W_BK + 8);
#pragma unroll
      for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], &Bs[kk][wn + j * 16], W_BN + 8);
#pragma unroll
      for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < 2; j++)
      wmma::store_matrix_sync(&Cs[wm + i * 16][wn + j * 16], acc[i][j], W_BN + 4, wmma::mem_row_major);
  __syncthreads();
  for (int t = tid; t < W_BM * W_BN; t += W_THREADS) {
    const int r = t / W_BN, c = t - r * W_BN;
    const int m = m0 + r, p = p0 + c;
    if (m < g.mg && p < P) store(y, e, g, grp, m, p, Cs[r][c]);
  }
}

// conv_dw is a depthwise Conv (group == C, M = C * mult): one thread per output element.
template <typename T>
__device__ __forceinline__ void conv_dw(const T* __restrict__ x, const T* __restrict__ w, Epi<T> e,
                                        T* y, const Geo& g) {
  const int mult = g.mg, ohw = g.OH * g.OW, khw = g.KH * g.KW;
  GRID_STRIDE(i, g.N * g.M * ohw) {
    const int rem = (int)(i % ohw);
    const i64 t = i / ohw;
    const int oc = (int)(t % g.M);
    const i64 n = t / g.M;
    const int oy = rem / g.OW, ox = rem - oy * g.OW;
    const T* xc = x + (n * g.C + oc / mult) * g.IH * g.IW;
    const T* wk = w + (i64)oc * khw;
    float s = 0.f;
    for (int ky = 0; ky < g.KH; ky++) {
      const int iy = oy * g.sh - g.ph + ky * g.dh;
      if ((unsigned)iy >= (unsigned)g.IH) continue;
      for (int kx = 0; kx < g.KW; kx++) {
        const int ix = ox * g.sw - g.pw + kx * g.dw;
        if ((unsigned)ix < (unsigned)g.IW) s += tof(wk[ky * g.KW + kx]) * tof(xc[iy * g.IW + ix]);
      }
    }
    y[i] = epilogue(s, e, g.relu, i, oc);
  }
}

}  // namespace

// A kernel's pointers: input x, weights w, bias b (or null), FusedConv's z (or null), output y.
#define CONV_ONE(name, body, T, threads)                                                             \
  extern "C" __global__ void __launch_bounds__(threads)                                              \
      name(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,                \
           const T* z, T* y, CONV_PARAMS) {                                                          \
    CONV_GEO(g);                                                                                     \
    const Epi<T> e{b, z};                                                                            \
    body;                                                                                            \
  }

CONV_ONE(carve_conv_simt_f32, (conv_simt<float, false>(x, w, e, y, g)), float, S_THREADS)
CONV_ONE(carve_convt_simt_f32, (conv_simt<float, true>(x, w, e, y, g)), float, S_THREADS)
CONV_ONE(carve_conv_wmma_f16, (conv_wmma<__half, false>(x, w, e, y, g)), __half, W_THREADS)
CONV_ONE(carve_convt_wmma_f16, (conv_wmma<__half, true>(x, w, e, y, g)), __half, W_THREADS)
CONV_ONE(carve_conv_wmma_bf16, (conv_wmma<bf16, false>(x, w, e, y, g)), bf16, W_THREADS)
CONV_ONE(carve_convt_wmma_bf16, (conv_wmma<bf16, true>(x, w, e, y, g)), bf16, W_THREADS)
CONV_ONE(carve_conv_dw_f32, (conv_dw<float>(x, w, e, y, g)), float, 256)
CONV_ONE(carve_conv_dw_f16, (conv_dw<__half>(x, w, e, y, g)), __half, 256)
CONV_ONE(carve_conv_dw_bf16, (conv_dw<bf16>(x, w, e, y, g)), bf16, 256)

// carve_conv_epilogue_*: y [N, M, hw] after cuDNN: + b[m] (b not null), + z[i] (z not null),
// then Relu (relu != 0), rounded once to T.
#define CONV_EPILOGUE(name, T)                                                                       \
  extern "C" __global__ void name(T* y, const T* __restrict__ b, const T* z,                           \
                                  i64 total, i64 m, i64 hw, int relu) {                               \
    const Epi<T> e{b, z};                                                                            \
    GRID_STRIDE(i, total) y[i] = epilogue(tof(y[i]), e, relu != 0, i, (int)((i / hw) % m));          \
  }
CONV_EPILOGUE(carve_conv_epilogue_f32, float)
CONV_EPILOGUE(carve_conv_epilogue_f16, __half)
CONV_EPILOGUE(carve_conv_epilogue_bf16, bf16)
