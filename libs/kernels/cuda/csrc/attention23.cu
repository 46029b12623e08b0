// ONNX Attention (ai.onnx, opset 23): softmax(scale * Q K^T [+ mask]) V over strided Q, K, V and
// Y (4-D [B, H, S, D] or 3-D [B, S, H*D] are both strided views), grouped query heads, a bool or
// float mask broadcast to [B, Hq, S, T], is_causal (key j masked for query i when j > P + i, P
// the past length), carve's window_left / window_right (key j masked for query i when
// j < P + i - wl or j > P + i + wr, each when >= 0; the keys before the window are not read)
// and softcap; a row whose every key is masked gets zeros, as the CPU kernel
// (libs/kernels/cpu/attention23.go) gives. With A23_GQA the past is per batch, read from
// GroupQueryAttention's seqlens_k and total_sequence_length (A23::of): its prefill over the KV
// cache runs these cores too (gqa.go). Both kernels walk the keys once with an online softmax,
// so nothing of size S x T is ever stored.
//
//   - carve_a23_<T>_<DPL>: any type and head size (Dv <= 32*DPL): one warp per query row; lane l
//     scores key j0+l of a 32-key step against the row (staged as float in shared memory), the
//     warp keeps the running max and sum and accumulates p * V with lanes owning head dims
//     d = lane + 32e (the scheme of attention.cu's core, without its GQA cache and rotary parts).
//   - carve_a23rel_<T>_<DPL>: carve_a23_<T>_<DPL> with carve's relative bias (graph.AttnRelC2P):
//     the score of row i for key j gets c2p[b, h, i, c2pi[i - j + T - 1]] and
//     p2c[b, h, j, p2ci[i - j + T - 1]] (each where given) after the scale and the soft cap,
//     before the mask, as the CPU kernel adds them. An index entry below 0 counts from the end
//     of the row; one outside [-R, R), which the CPU kernel refuses, makes the score NaN (a
//     kernel cannot fail a run), so the row's output is NaN rather than a wrong number.
//   - carve_a23_mma{,fmask,bmask,gen}_<T>_<D>: float16 and bfloat16, D == Dv in {64, 128},
//     FlashAttention-2 style on tensor cores: a block of 4 warps takes 64 query rows (16 per
//     warp, Q fragments kept in registers), walks 64-key tiles of K and V double-buffered in
//     shared memory by cp.async (one barrier per tile), computes S = Q K^T and O += P V with
//     mma.sync m16n8k16 on ldmatrix fragments (16-bit inputs, float32 accumulation; P rounded
//     to the input type as FlashAttention does), the softmax state in registers per row and
//     every exponential one ex2. Four modes (A23_PLAIN, A23_FMASK, A23_BMASK, A23_GEN) leave
//     out what a node does not need: the plain kernel's score is the scaled dot, the masked
//     ones add the mask term, and only tiles that cross the causal diagonal or the last key
//     compare key indices; the general one applies a23_score to every score (softcap). Row
//     tiles start heaviest first over all heads, so the long causal rows do not trail.
//
// Hand-written rather than a library (cuDNN's fused attention / FlashAttention) because the
// backend loads only the CUDA driver and cuBLAS at run time, and carve's masks and causal
// offsets follow the ONNX reference.
#include <type_traits>

#include "common.cuh"

using namespace carve;

enum { A23_CAUSAL = 1, A23_GQA = 2 };
enum { A23_MASK_NONE = 0, A23_MASK_BOOL = 1, A23_MASK_FLOAT = 2 };

namespace {

// a23_score applies scale, softcap, causality, the key range and the mask to a raw dot product
// of query row i (of S) and key j (of T). mo is the mask's offset for the row.
// With REL, rel (the relative bias's terms) is added after the soft cap.
template <typename T, bool REL = false>
__device__ __forceinline__ float a23_score(float dot, int i, int j, int S, int T_, int P, int flags, int wl, int wr,
                                           float scale, float softcap, const void* mask, int mkind, int maskT, i64 mo,
                                           float rel = 0.f) {
  if (i >= S || j >= T_ || ((flags & A23_CAUSAL) && j > P + i)) return -INFINITY;
  if ((wl >= 0 && j < P + i - wl) || (wr >= 0 && j > P + i + wr)) return -INFINITY;
  float x = dot * scale;
  if (softcap > 0.f) x = softcap * tanhf(x / softcap);
  if (REL) x += rel;
  if (mkind != A23_MASK_NONE) {
    if (j >= maskT) return -INFINITY;
    if (mkind == A23_MASK_BOOL) {
      if (!((const unsigned char*)mask)[mo + j]) return -INFINITY;
    } else {
      x += tof(((const T*)mask)[mo + j]);
    }
  }
  return x;
}

// a23_geo unpacks the common parameters.
struct A23 {
  int B, Hq, Hkv, S, T, P, D, Dv, mkind, maskT, mh, ms, wl, wr;
  i64 msb;
  const int *seqlens, *totalp;  // GroupQueryAttention's seqlens_k and total_sequence_length (A23_GQA)
  __device__ __forceinline__ A23(i64 bh, i64 hs, i64 tp, i64 dims, i64 minfo, i64 msb_, i64 mhs, i64 win,
                                 const int* sl, const int* tot) {
    B = lo32(bh), Hq = hi32(bh), Hkv = lo32(hs), S = hi32(hs), T = lo32(tp), P = hi32(tp);
    D = lo32(dims), Dv = hi32(dims), mkind = lo32(minfo), maskT = hi32(minfo);
    msb = msb_, mh = lo32(mhs), ms = hi32(mhs), wl = lo32(win), wr = hi32(win);
    seqlens = sl, totalp = tot;
  }
  // of is the geometry batch b sees: with A23_GQA (a GroupQueryAttention prefill over its KV
  // cache of T positions) the past is batch b's own, seqlens_k[b] + 1 - S, and 0 on the first
  // prompt (S == total_sequence_length), where carve_kv_append wrote the new keys; the keys end
  // after them, so that no tile reads the cache's unwritten positions (which may hold NaNs).
  __device__ __forceinline__ A23 of(int b, int flags) const {
    A23 g = *this;
    if (flags & A23_GQA) {
      g.P = S == totalp[0] ? 0 : seqlens[b] + 1 - S;
      g.T = max(min(T, g.P + S), 0);
    }
    return g;
  }
  // first is the first key query row i sees by the window (0 without one).
  __device__ __forceinline__ int first(int i) const { return wl >= 0 ? max(0, P + i - wl) : 0; }
  // end bounds the keys row i sees by causality and window_right.
  __device__ __forceinline__ int end(int i, int flags) const {
    int e = (flags & A23_CAUSAL) ? min(T, P + i + 1) : T;
    return wr >= 0 ? min(e, P + i + wr + 1) : e;
  }
};

// A23Rel is the relative bias of carve_a23rel_*: per table (null when absent) its int32 index
// of S + T - 1 entries, its batch stride and head stride | terms per row (R), in elements.
template <typename T>
struct A23Rel {
  const T *c2p, *p2c;
  const int *c2pi, *p2ci;
  i64 csb, psb;
  int csh, cr, psh, pr;
  // term is table tab's term of row `row` (batch b, head h) by entry e of its index.
  __device__ __forceinline__ static float term(const T* tab, const int* idx, i64 sb, int sh, int r, int b, int h,
                                               int row, int e) {
    int x = idx[e];
    if (x < 0) x += r;
    if (x < 0 || x >= r) return NAN;
    return tof(tab[b * sb + (i64)h * sh + (i64)row * r + x]);
  }
  // at is the bias of query row i for key j of T (no past).
  __device__ __forceinline__ float at(int b, int h, int i, int j, int T_) const {
    const int e = i - j + T_ - 1;
    float x = 0.f;
    if (c2p) x += term(c2p, c2pi, csb, csh, cr, b, h, i, e);
    if (p2c) x += term(p2c, p2ci, psb, psh, pr, b, h, j, e);
    return x;
  }
};

template <typename T, int DPL, bool REL = false>
__device__ __forceinline__ void a23_rows(const T* q, const T* k, const T* v, T* out, const void* mask, i64 qsb,
                                         i64 qhs, i64 ksb, i64 khs, i64 vsb, i64 vhs, i64 osb, i64 ohs, const A23& g0,
                                         int flags, float scale, float softcap, const A23Rel<T>* rel = nullptr) {
  extern __shared__ float a23sm[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int i = blockIdx.x * (blockDim.x >> 5) + warp;
  if (i >= g0.S) return;  // no block-wide synchronization follows
  const int b = blockIdx.y / g0.Hq, h = blockIdx.y % g0.Hq, kh = h / (g0.Hq / g0.Hkv);
  const A23 g = g0.of(b, flags);
  const T* qr = q + b * qsb + (i64)h * lo32(qhs) + (i64)i * hi32(qhs);
  float* qs = a23sm + (i64)warp * g.D;
  for (int d = lane; d < g.D; d += 32) qs[d] = tof(qr[d]);
  __syncwarp();
  const T* kb = k + b * ksb + (i64)kh * lo32(khs);
  const T* vb = v + b * vsb + (i64)kh * lo32(vhs);
  const int kss = hi32(khs), vss = hi32(vhs);
  const i64 mo = b * g.msb + (i64)h * g.mh + (i64)i * g.ms;
  const int kend = g.end(i, flags);
  float m = -INFINITY, l = 0.f, acc[DPL];
#pragma unroll
  for (int e = 0; e < DPL; e++) acc[e] = 0.f;
  for (int j0 = g.first(i); j0 < kend; j0 += 32) {
    const int j = j0 + lane;
    float x = -INFINITY;
    if (j < kend) {
      const T* kr = kb + (i64)j * kss;
      float dot = 0.f;
      for (int d = 0; d < g.D; d++) dot = fmaf(qs[d], tof(kr[d]), dot);
      x = a23_score<T, REL>(dot, i, j, g.S, g.T, g.P, flags, g.wl, g.wr, scale, softcap, mask, g.mkind, g.maskT, mo,
                            REL ? rel->at(b, h, i, j, g.T) : 0.f);
    }
    const float mn = fmaxf(m, warp_max(x));
    if (mn == -INFINITY) continue;  // every key so far is masked out (warp-uniform)
    const float alpha = m == -INFINITY ? 0.f : expf(m - mn);
    const float p = x == -INFINITY ? 0.f : expf(x - mn);
    l = l * alpha + warp_sum(p);
    m = mn;
#pragma unroll
    for (int e = 0; e < DPL; e++) acc[e] *= alpha;
    const int nk = min(32, kend - j0);
    for (int jj = 0; jj < nk; jj++) {
      const float pj = __shfl_sync(0xffffffffu, p, jj);
      const T* vr = vb + (i64)(j0 + jj) * vss;
#pragma unroll
      for (int e = 0; e < DPL; e++) {
        const int d = lane + 32 * e;
        if (d < g.Dv) acc[e] = fmaf(pj, tof(vr[d]), acc[e]);
      }
    }
  }
  T* o = out + b * osb + (i64)h * lo32(ohs) + (i64)i * hi32(ohs);
#pragma unroll
  for (int e = 0; e < DPL; e++) {
    const int d = lane + 32 * e;
    if (d < g.Dv) o[d] = fromf<T>(l > 0.f ? acc[e] / l : 0.f);
  }
}

// ---------------------------------------------------------------- tiles

// a23_cp4 copies 4 bytes from global to shared memory asynchronously (cp.async), or writes
// zeros when !in (the source is not read).
__device__ __forceinline__ void a23_cp4(void* smem, const void* gmem, bool in) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(in ? 4 : 0));
}
__device__ __forceinline__ void a23_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void a23_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// carve_a23_tile_<T>_<D>: D == Dv in {32, 64, 128}, on the CUDA cores in float32: a block of
// 256 threads takes 64 query rows and walks 64-key tiles of K and V staged as float in shared
// memory; thread (ty, tx) of a 16 x 16 grid scores rows ty + 16r against keys tx + 16c (r, c < 4)
// and accumulates those rows' outputs at the head dims of its column group (a23_tcol), so each
// vector read from shared memory feeds four rows' products. The 16 threads of a row's half warp
// share its running maximum (a shuffle reduction per tile); each keeps its own part of the sum,
// added up at the end. Scores are kept in base 2 (times log2 e) so that each exponential is one
// exp2f. A block computes only the 16-row groups that hold a row below S and the 16-key groups
// that hold a key below the tile's end (uniform branches): at ViT's S = 197 the last row tile and
// the last key tile are mostly past the end, which the full 64 x 64 products would compute for
// nothing. A tile whose every score is plain (no mask, softcap or window, every key
// and row in range and, when causal, below the diagonal) takes the scaled dot; every other
// score goes through a23_score, so masks, causality, windows and softcap are the rows kernel's.
constexpr int TILE_ROWS = 64, TILE_KEYS = 64, TILE_THREADS = 256;

// a23_hmax and a23_hsum reduce over the 16 lanes of a half warp.
__device__ __forceinline__ float a23_hmax(float x) {
#pragma unroll
  for (int o = 8; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ __forceinline__ float a23_hsum(float x) {
#pragma unroll
  for (int o = 8; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// a23_tcol is the tiled kernel's output layout: column group tx (of 16) owns G groups of W
// contiguous head dims, group g at tx * W + 16 * W * g (W = 4, or 2 at D = 32).
template <int D>
struct a23_tcol {
  static constexpr int W = D >= 64 ? 4 : 2, G = D / (16 * W);
  __device__ static __forceinline__ int at(int tx, int g) { return tx * W + 16 * W * g; }
};

// A23_LOG2E is log2(e): the kernels keep scores in base 2, so that each exponential is one ex2.
constexpr float A23_LOG2E = 1.4426950408889634f;

// a23_base2 is a score in base 2 (times log2 e). A masked key's -inf stays -inf; a finite score
// stays finite, so that a row whose every key carries a float mask's most negative value (a
// padded row of an exporter's finfo.min mask) still weighs its keys equally, as in base e.
__device__ __forceinline__ float a23_base2(float x) {
  return x == -INFINITY ? x : fmaxf(x * A23_LOG2E, -3.402823466e38f);
}

template <typename T, int D>
__device__ __forceinline__ void a23_tile(const T* q, const T* k, const T* v, T* out, const void* mask, i64 qsb,
                                         i64 qhs, i64 ksb, i64 khs, i64 vsb, i64 vhs, i64 osb, i64 ohs, const A23& g0,
                                         int flags, float scale, float softcap) {
  constexpr int DP = D + 4, PP = TILE_KEYS + 4;  // row strides: float4 reads of 8 rows hit distinct banks
  using C = a23_tcol<D>;
  constexpr int E = C::W * C::G;  // head dims per thread
  extern __shared__ __align__(16) float a23tsm[];
  // float K and V tiles are double-buffered, copied by cp.async while the last one is used; the
  // 16-bit ones are converted on the way in, one buffer.
  constexpr int NB = std::is_same<T, float>::value ? 2 : 1;
  float* qs = a23tsm;                    // [TILE_ROWS][DP]
  float* ks0 = qs + TILE_ROWS * DP;      // [NB][TILE_KEYS][DP]
  float* vs0 = ks0 + NB * TILE_KEYS * DP;  // [NB][TILE_KEYS][DP]
  float* ps = vs0 + NB * TILE_KEYS * DP;   // [TILE_ROWS][PP]
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  // Causal row tiles see more keys the later they start: the heaviest start first.
  const int tile = (flags & A23_CAUSAL) ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int i0 = tile * TILE_ROWS;
  const int b = blockIdx.y / g0.Hq, h = blockIdx.y % g0.Hq, kh = h / (g0.Hq / g0.Hkv);
  const A23 g = g0.of(b, flags);
  const T* qb = q + b * qsb + (i64)h * lo32(qhs);
  const T* kb = k + b * ksb + (i64)kh * lo32(khs);
  const T* vb = v + b * vsb + (i64)kh * lo32(vhs);
  const int qss = hi32(qhs), kss = hi32(khs), vss = hi32(vhs);
  for (int e = tid; e < TILE_ROWS * D; e += TILE_THREADS) {
    const int r = e / D, d = e % D, i = i0 + r;
    qs[r * DP + d] = i < g.S ? tof(qb[(i64)i * qss + d]) : 0.f;
  }
  const int kfirst = g.first(i0), kend = g.end(min(i0 + TILE_ROWS, g.S) - 1, flags);
  const bool plain = g.mkind == A23_MASK_NONE && !(softcap > 0.f) && g.wl < 0 && g.wr < 0 && i0 + TILE_ROWS <= g.S;
  const int rmax = min(4, (g.S - i0 + 15) / 16);  // row groups r < rmax hold a row below S
  const float scale2 = scale * A23_LOG2E;
  float m[4], l[4], acc[4][E];
  // the mask row of row i0 + ty; row group r reads 16 r rows further
  const i64 mo0 = b * g.msb + (i64)h * g.mh + (i64)(i0 + ty) * g.ms;
#pragma unroll
  for (int r = 0; r < 4; r++) {
    m[r] = -INFINITY, l[r] = 0.f;
#pragma unroll
    for (int e = 0; e < E; e++) acc[r][e] = 0.f;
  }
  // load stages the key tile at j0 into buffer buf: keys past kend are zeros.
  auto load = [&](int buf, int j0) {
    float* kd = ks0 + buf * TILE_KEYS * DP;
    float* vd = vs0 + buf * TILE_KEYS * DP;
    for (int e = tid; e < TILE_KEYS * D; e += TILE_THREADS) {
      const int r = e / D, d = e % D, j = j0 + r;
      const bool in = j < kend;
      if constexpr (NB == 2) {
        a23_cp4(&kd[r * DP + d], in ? kb + (i64)j * kss + d : kb, in);
        a23_cp4(&vd[r * DP + d], in ? vb + (i64)j * vss + d : vb, in);
      } else {
        kd[r * DP + d] = in ? tof(kb[(i64)j * kss + d]) : 0.f;
        vd[r * DP + d] = in ? tof(vb[(i64)j * vss + d]) : 0.f;
      }
    }
  };
  if constexpr (NB == 2) {
    if (kfirst < kend) load(0, kfirst);
    a23_commit();
  }
  for (int j0 = kfirst, it = 0; j0 < kend; j0 += TILE_KEYS, it++) {
    const float* ks = ks0 + (it % NB) * TILE_KEYS * DP;
    const float* vs = vs0 + (it % NB) * TILE_KEYS * DP;
    if constexpr (NB == 2) {
      // The other buffer's readers finished at the last iteration's closing barrier.
      if (j0 + TILE_KEYS < kend) load((it + 1) % NB, j0 + TILE_KEYS);
      a23_commit();
      a23_wait<1>();  // this tile's copies are done, the next one's may still run
    } else {
      load(0, j0);
    }
    __syncthreads();
    const int nk = min(TILE_KEYS, kend - j0);  // keys past it have p = 0 and V = 0
    const int cmax = (nk + 15) / 16;           // key groups c < cmax hold a key below kend
    float s[4][4];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
      for (int c = 0; c < 4; c++) s[r][c] = 0.f;
    if (rmax == 4 && cmax == 4) {
#pragma unroll 4
      for (int d = 0; d < D; d += 4) {
        float4 qv[4], kv[4];
#pragma unroll
        for (int r = 0; r < 4; r++) qv[r] = *(const float4*)&qs[(ty + 16 * r) * DP + d];
#pragma unroll
        for (int c = 0; c < 4; c++) kv[c] = *(const float4*)&ks[(tx + 16 * c) * DP + d];
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
          for (int c = 0; c < 4; c++) {
            s[r][c] = fmaf(qv[r].x, kv[c].x, s[r][c]);
            s[r][c] = fmaf(qv[r].y, kv[c].y, s[r][c]);
            s[r][c] = fmaf(qv[r].z, kv[c].z, s[r][c]);
            s[r][c] = fmaf(qv[r].w, kv[c].w, s[r][c]);
          }
      }
    } else {
      // an edge tile: only the groups that hold rows below S and keys below kend
#pragma unroll 2
      for (int d = 0; d < D; d += 4) {
#pragma unroll
        for (int r = 0; r < 4; r++) {
          if (r >= rmax) break;
          const float4 qv = *(const float4*)&qs[(ty + 16 * r) * DP + d];
#pragma unroll
          for (int c = 0; c < 4; c++) {
            if (c >= cmax) break;
            const float4 kv = *(const float4*)&ks[(tx + 16 * c) * DP + d];
            s[r][c] = fmaf(qv.x, kv.x, s[r][c]);
            s[r][c] = fmaf(qv.y, kv.y, s[r][c]);
            s[r][c] = fmaf(qv.z, kv.z, s[r][c]);
            s[r][c] = fmaf(qv.w, kv.w, s[r][c]);
          }
        }
      }
    }
    // Plain: every key of the tile is in range and, when causal, seen by the block's first row.
    const bool fast = plain && j0 + TILE_KEYS <= kend && (!(flags & A23_CAUSAL) || j0 + TILE_KEYS - 1 <= g.P + i0);
#pragma unroll
    for (int r = 0; r < 4; r++) {
      const int i = i0 + ty + 16 * r;
      float mx = -INFINITY;
#pragma unroll
      for (int c = 0; c < 4; c++) {
        const int j = j0 + tx + 16 * c;
        if (fast) {
          s[r][c] *= scale2;
        } else {
          s[r][c] = j < kend ? a23_base2(a23_score<T>(s[r][c], i, j, g.S, g.T, g.P, flags, g.wl, g.wr, scale, softcap,
                                                      mask, g.mkind, g.maskT, mo0 + (i64)(16 * r) * g.ms))
                             : -INFINITY;
        }
        mx = fmaxf(mx, s[r][c]);
      }
      const float mn = fmaxf(m[r], a23_hmax(mx));
      float alpha = 1.f, psum = 0.f;
      if (mn != -INFINITY) {
        alpha = m[r] == -INFINITY ? 0.f : exp2f(m[r] - mn);
#pragma unroll
        for (int c = 0; c < 4; c++) {
          s[r][c] = s[r][c] == -INFINITY ? 0.f : exp2f(s[r][c] - mn);
          psum += s[r][c];
        }
      } else {
#pragma unroll
        for (int c = 0; c < 4; c++) s[r][c] = 0.f;
      }
      m[r] = mn;
      l[r] = l[r] * alpha + psum;
#pragma unroll
      for (int e = 0; e < E; e++) acc[r][e] *= alpha;
#pragma unroll
      for (int c = 0; c < 4; c++) ps[(ty + 16 * r) * PP + tx + 16 * c] = s[r][c];
    }
    __syncthreads();
    // O += P V over the row groups below S (all four but in the last row tile)
    auto pv = [&](auto all) {
      constexpr bool ALL = decltype(all)::value;
      for (int jj = 0; jj < nk; jj += 4) {
        float4 p[4];
#pragma unroll
        for (int r = 0; r < 4; r++) {
          if (!ALL && r >= rmax) break;
          p[r] = *(const float4*)&ps[(ty + 16 * r) * PP + jj];
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
          const float* vr = vs + (jj + u) * DP;
#pragma unroll
          for (int gi = 0; gi < C::G; gi++) {
            float vv[C::W];
            if constexpr (C::W == 4) {
              const float4 x = *(const float4*)&vr[C::at(tx, gi)];
              vv[0] = x.x, vv[1] = x.y, vv[2] = x.z, vv[3] = x.w;
            } else {
              const float2 x = *(const float2*)&vr[C::at(tx, gi)];
              vv[0] = x.x, vv[1] = x.y;
            }
#pragma unroll
            for (int r = 0; r < 4; r++) {
              if (!ALL && r >= rmax) break;
              const float pu = u == 0 ? p[r].x : u == 1 ? p[r].y : u == 2 ? p[r].z : p[r].w;
#pragma unroll
              for (int w = 0; w < C::W; w++) acc[r][gi * C::W + w] = fmaf(pu, vv[w], acc[r][gi * C::W + w]);
            }
          }
        }
      }
    };
    if (rmax == 4) {
      pv(std::true_type{});
    } else {
      pv(std::false_type{});
    }
    __syncthreads();  // this tile's K, V and P are read: the next iteration may overwrite them
  }
#pragma unroll
  for (int r = 0; r < 4; r++) {
    const float lt = a23_hsum(l[r]);
    const int i = i0 + ty + 16 * r;
    if (i >= g.S) continue;
    T* o = out + b * osb + (i64)h * lo32(ohs) + (i64)i * hi32(ohs);
#pragma unroll
    for (int gi = 0; gi < C::G; gi++)
#pragma unroll
      for (int w = 0; w < C::W; w++)
        o[C::at(tx, gi) + w] = fromf<T>(lt > 0.f ? acc[r][gi * C::W + w] / lt : 0.f);
  }
}

// ---------------------------------------------------------------- tensor cores

__device__ __forceinline__ void a23_cp16(void* smem, const void* gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

template <typename T> __device__ __forceinline__ void mma16816(float* c, const unsigned* a, unsigned b0, unsigned b1);
template <> __device__ __forceinline__ void mma16816<__half>(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <> __device__ __forceinline__ void mma16816<bf16>(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// pack2 packs two floats into a 16-bit pair, lo in the low half.
template <typename T> __device__ __forceinline__ unsigned pack2(float lo, float hi);
template <> __device__ __forceinline__ unsigned pack2<__half>(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *(unsigned*)&h;
}
template <> __device__ __forceinline__ unsigned pack2<bf16>(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *(unsigned*)&h;
}

__device__ __forceinline__ void ldsm_x4_trans(unsigned* r, const void* smem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

__device__ __forceinline__ void ldsm_x4(unsigned* r, const void* smem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

// a23_ex2 is 2^x by the SFU (ex2.approx, relative error about 2^-22; 2^-inf = 0): exp2f adds a
// range reduction the softmax does not need.
__device__ __forceinline__ float a23_ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

constexpr int MMA_BR = 64, MMA_BC = 64, MMA_THREADS = 128;  // 4 warps of 16 rows

// The tensor-core kernel's modes: A23_PLAIN takes no mask, no softcap and a positive scale;
// A23_FMASK and A23_BMASK a float or bool mask and any scale; A23_GEN anything (softcap).
enum { A23_PLAIN = 0, A23_FMASK = 1, A23_BMASK = 2, A23_GEN = 3 };

// a23_maskterm is what mask (A23_FMASK: float, A23_BMASK: bool) adds to the score of key j in
// the row at offset mo: the float, 0 or -inf, -inf for keys past maskT; 0 for a row past S
// (ok false), whose offset may lie past the mask and whose output is not written.
template <typename T, int MODE>
__device__ __forceinline__ float a23_maskterm(const void* mask, i64 mo, int j, int maskT, bool ok) {
  if (!ok) return 0.f;
  if (j >= maskT) return -INFINITY;
  if (MODE == A23_BMASK) return ((const unsigned char*)mask)[mo + j] ? 0.f : -INFINITY;
  return tof(((const T*)mask)[mo + j]);
}

template <typename T, int D, int MODE>
__device__ __forceinline__ void a23_mma(const T* q, const T* k, const T* v, T* out, const void* mask, i64 qsb,
                                        i64 qhs, i64 ksb, i64 khs, i64 vsb, i64 vhs, i64 osb, i64 ohs, const A23& g0,
                                        int flags, float scale, float softcap) {
  constexpr int DP = D + 8;  // shared row stride: 16 bytes of padding keep ldmatrix conflict-free
  constexpr int KT = D / 16, NT = MMA_BC / 8, OT = D / 8;
  constexpr bool MASKED = MODE == A23_FMASK || MODE == A23_BMASK;
  extern __shared__ __align__(16) unsigned char a23raw[];
  T* Ks = (T*)a23raw;           // [2][MMA_BC][DP]
  T* Vs = Ks + 2 * MMA_BC * DP;  // [2][MMA_BC][DP]
  float* Ms = (float*)(Vs + 2 * MMA_BC * DP);  // [2][MMA_BC] mask terms of a row-broadcast mask
  // Blocks start in the order of their linear index; the row tile is its slow part, so the
  // heaviest (causal) row tiles of every head start first, the light ones fill in behind.
  const int lin = blockIdx.x + blockIdx.y * gridDim.x;
  const int tile = gridDim.x - 1 - lin / gridDim.y, bh = lin % gridDim.y;
  const int b = bh / g0.Hq, h = bh % g0.Hq, kh = h / (g0.Hq / g0.Hkv);
  const A23 g = g0.of(b, flags);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int gr = lane >> 2, gc = (lane & 3) * 2;
  const int r0 = tile * MMA_BR + warp * 16;
  const int ra = r0 + gr, rb = ra + 8;  // this thread's two query rows

  unsigned qf[KT][4];
  {
    const T* qb = q + b * qsb + (i64)h * lo32(qhs);
    const int qss = hi32(qhs);
#pragma unroll
    for (int kk = 0; kk < KT; kk++) {
      const int c = kk * 16 + gc;
      qf[kk][0] = ra < g.S ? *(const unsigned*)(qb + (i64)ra * qss + c) : 0u;
      qf[kk][1] = rb < g.S ? *(const unsigned*)(qb + (i64)rb * qss + c) : 0u;
      qf[kk][2] = ra < g.S ? *(const unsigned*)(qb + (i64)ra * qss + c + 8) : 0u;
      qf[kk][3] = rb < g.S ? *(const unsigned*)(qb + (i64)rb * qss + c + 8) : 0u;
    }
  }
  const int kss = hi32(khs), vss = hi32(vhs);
  const i64 moa = b * g.msb + (i64)h * g.mh + (i64)ra * g.ms, mob = moa + 8 * (i64)g.ms;

  // The key tiles [it0, ntiles) hold every key a row of the block sees (a window starts later;
  // only A23_GEN takes one, applying it by index in a23_score).
  const int kend = g.end(min(g.S - 1, tile * MMA_BR + MMA_BR - 1), flags);
  const int ntiles = (kend + MMA_BC - 1) / MMA_BC, it0 = MODE == A23_GEN ? g.first(tile * MMA_BR) / MMA_BC : 0;
  // Short of A23_GEN, keys past T or past the causal diagonal get -inf by index: row ra takes
  // keys below enda, and every row of this warp those below plainEnd, whose tiles skip the
  // comparisons.
  const bool causal = flags & A23_CAUSAL;
  const int enda = causal ? min(g.T, g.P + ra + 1) : g.T, endb = causal ? min(g.T, g.P + rb + 1) : g.T;
  const int plainEnd = causal ? min(g.T, g.P + r0 + 1) : g.T;

  // Each thread copies one 16-byte column chunk ct of rows rt, rt + RPI, ... of a key tile.
  constexpr int CH = D / 8, RPI = MMA_THREADS / CH;  // 16-byte chunks per row, rows per pass
  const int rt = threadIdx.x / CH, ct = (threadIdx.x % CH) * 8;
  const T* kq = k + b * ksb + (i64)kh * lo32(khs) + (i64)rt * kss + ct;
  const T* vq = v + b * vsb + (i64)kh * lo32(vhs) + (i64)rt * vss + ct;
  const i64 kstep = (i64)RPI * kss, vstep = (i64)RPI * vss;
  auto load = [&](int it, int buf) {
    const int j0 = it * MMA_BC;
    const T* kg = kq + (i64)j0 * kss;
    const T* vg = vq + (i64)j0 * vss;
    T* kd = Ks + buf * MMA_BC * DP + rt * DP + ct;
    T* vd = Vs + buf * MMA_BC * DP + rt * DP + ct;
    if (j0 + MMA_BC <= g.T) {
#pragma unroll
      for (int i = 0; i < MMA_BC / RPI; i++, kg += kstep, vg += vstep) {
        a23_cp16(kd + i * RPI * DP, kg);
        a23_cp16(vd + i * RPI * DP, vg);
      }
    } else {
#pragma unroll 1
      for (int i = 0; i < MMA_BC / RPI; i++, kg += kstep, vg += vstep) {
        if (j0 + rt + i * RPI < g.T) {
          a23_cp16(kd + i * RPI * DP, kg);
          a23_cp16(vd + i * RPI * DP, vg);
        } else {
          // keys past T must read as finite zeros: p is 0 there but 0 * NaN is not
          *(uint4*)(kd + i * RPI * DP) = make_uint4(0, 0, 0, 0);
          *(uint4*)(vd + i * RPI * DP) = make_uint4(0, 0, 0, 0);
        }
      }
    }
  };

  float o[OT][4];
#pragma unroll
  for (int t = 0; t < OT; t++) o[t][0] = o[t][1] = o[t][2] = o[t][3] = 0.f;
  // the running maxima, of the scores (A23_PLAIN: times log2(e))
  float ma = -INFINITY, mb = -INFINITY, la = 0.f, lb = 0.f;
  const float sl2 = scale * A23_LOG2E;

  // A mask broadcast over the rows (padding, [B, 1, 1, T]) has one term per key: threads
  // 0-63 load those of the next key tile with its K and V and store them in Ms before the
  // barrier that opens it (Ms[it & 1] was last read at tile it - 2, before the barrier of
  // it - 1), so that every thread reads its 16 as 8 float2 from shared memory.
  const bool rowb = MASKED && g.ms == 0;
  const bool mloader = rowb && threadIdx.x < MMA_BC;
  const i64 mo0 = b * g.msb + (i64)h * g.mh;
  float mnext = 0.f;
  if (it0 < ntiles) {
    load(it0, it0 & 1);
    a23_commit();
    if (mloader) Ms[(it0 & 1) * MMA_BC + threadIdx.x] = a23_maskterm<T, MODE>(mask, mo0, it0 * MMA_BC + threadIdx.x, g.maskT, true);
  }
  // ldmatrix addresses: K (not transposed) as B of S = Q K^T, keys n*8 + 0..15 by lanes 0-7 and
  // 16-23, their dims +8 by lanes 8-15 and 24-31; V transposed as B of O = P V.
  const int koff = ((lane & 7) + ((lane >> 4) << 3)) * DP + ((lane >> 3) & 1) * 8;
  const int voff = (lane & 15) * DP + (lane >> 4) * 8;
  for (int it = it0; it < ntiles; it++) {
    // Tile it has landed for every thread, and every warp is done with tile it - 1, whose
    // buffer the prefetch of tile it + 1 then takes: one barrier per tile.
    a23_wait<0>();
    if (mloader && it > it0) Ms[(it & 1) * MMA_BC + threadIdx.x] = mnext;
    __syncthreads();
    if (it + 1 < ntiles) {
      load(it + 1, (it + 1) & 1);
      a23_commit();
      if (mloader) mnext = a23_maskterm<T, MODE>(mask, mo0, (it + 1) * MMA_BC + threadIdx.x, g.maskT, true);
    }
    const T* kt = Ks + (it & 1) * MMA_BC * DP;
    const T* vt = Vs + (it & 1) * MMA_BC * DP;
    const int j0 = it * MMA_BC;
    // A masked kernel's mask terms of this thread's keys, loaded before the product hides
    // their latency.
    float mka[MASKED ? NT : 1][2], mkb[MASKED ? NT : 1][2];
    if (rowb) {
#pragma unroll
      for (int n = 0; n < NT; n++) {
        const float2 m2 = *(const float2*)(Ms + (it & 1) * MMA_BC + n * 8 + gc);
        mka[n][0] = mkb[n][0] = m2.x;
        mka[n][1] = mkb[n][1] = m2.y;
      }
    } else if (MASKED) {
#pragma unroll
      for (int n = 0; n < NT; n++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
          const int j = j0 + n * 8 + gc + e;
          mka[n][e] = a23_maskterm<T, MODE>(mask, moa, j, g.maskT, ra < g.S);
          mkb[n][e] = a23_maskterm<T, MODE>(mask, mob, j, g.maskT, rb < g.S);
        }
      }
    }
    float s[NT][4];
#pragma unroll
    for (int n = 0; n < NT; n++) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KT; kk++) {
#pragma unroll
      for (int n = 0; n < NT; n += 2) {
        unsigned bk[4];
        ldsm_x4(bk, kt + n * 8 * DP + kk * 16 + koff);
        mma16816<T>(s[n], qf[kk], bk[0], bk[1]);
        mma16816<T>(s[n + 1], qf[kk], bk[2], bk[3]);
      }
    }
    // The scores: A23_GEN's by a23_score, a masked kernel's scale * dot + mask term, then -inf
    // past the causal diagonal and the last key on the tiles that cross them. A23_PLAIN keeps
    // the dots: as the scale is positive (the Go side sends the rest elsewhere), the row
    // maximum of the dots times scale * log2(e) is that of the scores in base 2, and
    // 2^(dot * sl2 - m) is one FFMA and one ex2. The others keep natural units and take
    // 2^((x - m) * log2(e)): a mask's large finite fill (the float minimum) times log2(e)
    // would overflow to -inf, and a row with every key at the fill must stay uniform.
    if (MODE == A23_GEN) {
#pragma unroll
      for (int n = 0; n < NT; n++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
          const int j = j0 + n * 8 + gc + e;
          s[n][e] = a23_score<T>(s[n][e], ra, j, g.S, g.T, g.P, flags, g.wl, g.wr, scale, softcap, mask, g.mkind,
                                 g.maskT, moa);
          s[n][2 + e] = a23_score<T>(s[n][2 + e], rb, j, g.S, g.T, g.P, flags, g.wl, g.wr, scale, softcap, mask,
                                     g.mkind, g.maskT, mob);
        }
      }
    } else {
      if (MASKED) {
#pragma unroll
        for (int n = 0; n < NT; n++) {
#pragma unroll
          for (int e = 0; e < 2; e++) {
            s[n][e] = fmaf(s[n][e], scale, mka[n][e]);
            s[n][2 + e] = fmaf(s[n][2 + e], scale, mkb[n][e]);
          }
        }
      }
      if (j0 + MMA_BC > plainEnd) {
#pragma unroll
        for (int n = 0; n < NT; n++) {
#pragma unroll
          for (int e = 0; e < 2; e++) {
            const int j = j0 + n * 8 + gc + e;
            if (j >= enda) s[n][e] = -INFINITY;
            if (j >= endb) s[n][2 + e] = -INFINITY;
          }
        }
      }
    }
    float xa = s[0][0], xb = s[0][2];
#pragma unroll
    for (int n = 0; n < NT; n++) {
      xa = fmaxf(xa, fmaxf(s[n][0], s[n][1]));
      xb = fmaxf(xb, fmaxf(s[n][2], s[n][3]));
    }
    xa = fmaxf(xa, __shfl_xor_sync(0xffffffffu, xa, 1));
    xa = fmaxf(xa, __shfl_xor_sync(0xffffffffu, xa, 2));
    xb = fmaxf(xb, __shfl_xor_sync(0xffffffffu, xb, 1));
    xb = fmaxf(xb, __shfl_xor_sync(0xffffffffu, xb, 2));
    // A row masked so far keeps the maximum -inf; subtracting 0 instead gives p = 2^-inf = 0
    // for its masked scores and alpha = 0 rather than NaN.
    const float na = fmaxf(ma, MODE == A23_PLAIN ? xa * sl2 : xa), nb = fmaxf(mb, MODE == A23_PLAIN ? xb * sl2 : xb);
    const float ba = na == -INFINITY ? 0.f : na, bb = nb == -INFINITY ? 0.f : nb;
    float aa, ab, sa = 0.f, sb = 0.f;
    if (MODE == A23_PLAIN) {
      aa = a23_ex2(ma - ba), ab = a23_ex2(mb - bb);
#pragma unroll
      for (int n = 0; n < NT; n++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
          s[n][e] = a23_ex2(fmaf(s[n][e], sl2, -ba));
          s[n][2 + e] = a23_ex2(fmaf(s[n][2 + e], sl2, -bb));
          sa += s[n][e], sb += s[n][2 + e];
        }
      }
    } else {
      aa = a23_ex2((ma - ba) * A23_LOG2E), ab = a23_ex2((mb - bb) * A23_LOG2E);
#pragma unroll
      for (int n = 0; n < NT; n++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
          s[n][e] = a23_ex2((s[n][e] - ba) * A23_LOG2E);
          s[n][2 + e] = a23_ex2((s[n][2 + e] - bb) * A23_LOG2E);
          sa += s[n][e], sb += s[n][2 + e];
        }
      }
    }
    ma = na, mb = nb;
    la = la * aa + sa;
    lb = lb * ab + sb;
    // Once the maxima settle, alpha is exactly 1 (2^0) for every row of the warp most tiles.
    if (__any_sync(0xffffffffu, aa != 1.f || ab != 1.f)) {
#pragma unroll
      for (int t = 0; t < OT; t++) o[t][0] *= aa, o[t][1] *= aa, o[t][2] *= ab, o[t][3] *= ab;
    }
    // O += P V: P's accumulator layout is the A fragment layout of the next product
#pragma unroll
    for (int kk = 0; kk < MMA_BC / 16; kk++) {
      unsigned a[4];
      a[0] = pack2<T>(s[2 * kk][0], s[2 * kk][1]);
      a[1] = pack2<T>(s[2 * kk][2], s[2 * kk][3]);
      a[2] = pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      a[3] = pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
      for (int nd = 0; nd < D / 16; nd++) {
        unsigned bv[4];
        ldsm_x4_trans(bv, vt + kk * 16 * DP + nd * 16 + voff);
        mma16816<T>(o[2 * nd], a, bv[0], bv[1]);
        mma16816<T>(o[2 * nd + 1], a, bv[2], bv[3]);
      }
    }
  }
  la += __shfl_xor_sync(0xffffffffu, la, 1);
  la += __shfl_xor_sync(0xffffffffu, la, 2);
  lb += __shfl_xor_sync(0xffffffffu, lb, 1);
  lb += __shfl_xor_sync(0xffffffffu, lb, 2);
  const float ia = la > 0.f ? 1.f / la : 0.f, ib = lb > 0.f ? 1.f / lb : 0.f;
  T* ob = out + b * osb + (i64)h * lo32(ohs);
  const int oss = hi32(ohs);
#pragma unroll
  for (int t = 0; t < OT; t++) {
    const int c = t * 8 + gc;
    if (ra < g.S) *(unsigned*)(ob + (i64)ra * oss + c) = pack2<T>(o[t][0] * ia, o[t][1] * ia);
    if (rb < g.S) *(unsigned*)(ob + (i64)rb * oss + c) = pack2<T>(o[t][2] * ib, o[t][3] * ib);
  }
}

}  // namespace

// Parameters of both kernels: q, k, v, out, mask; per operand a batch stride and head|row
// strides (elements; 3-D and 4-D layouts are both strided views); bh = B|Hq, hs = Hkv|S,
// tp = T|P (keys, past length), dims = D|Dv, minfo = mask kind|mask T, msb and mhs = the mask's
// batch stride and head|row strides (0 where broadcast), win = window_left|window_right (-1: none).
#define A23_PARAMS(T)                                                                                       \
  const T *q, const T *k, const T *v, T *out, const void *mask, i64 qsb, i64 qhs, i64 ksb, i64 khs, i64 vsb, \
      i64 vhs, i64 osb, i64 ohs, i64 bh, i64 hs, i64 tp, i64 dims, i64 minfo, i64 msb, i64 mhs, int flags,   \
      float scale, float softcap, i64 win, const int *seqlens, const int *totalp
#define A23_ARGS q, k, v, out, mask, qsb, qhs, ksb, khs, vsb, vhs, osb, ohs,                 \
                 A23(bh, hs, tp, dims, minfo, msb, mhs, win, seqlens, totalp), flags, scale, softcap

#define A23_ROWS(name, T, DPL)                                                            \
  extern "C" __global__ void __launch_bounds__(128) name(A23_PARAMS(T)) { a23_rows<T, DPL>(A23_ARGS); }
A23_ROWS(carve_a23_f32_1, float, 1)
A23_ROWS(carve_a23_f32_2, float, 2)
A23_ROWS(carve_a23_f32_4, float, 4)
A23_ROWS(carve_a23_f32_8, float, 8)
A23_ROWS(carve_a23_f16_1, __half, 1)
A23_ROWS(carve_a23_f16_2, __half, 2)
A23_ROWS(carve_a23_f16_4, __half, 4)
A23_ROWS(carve_a23_f16_8, __half, 8)
A23_ROWS(carve_a23_bf16_1, bf16, 1)
A23_ROWS(carve_a23_bf16_2, bf16, 2)
A23_ROWS(carve_a23_bf16_4, bf16, 4)
A23_ROWS(carve_a23_bf16_8, bf16, 8)

// Two blocks per SM where two fit in shared memory (D <= 64; at most 128 registers a thread):
// one block of 8 warps alone leaves the SM's schedulers waiting on shared memory and the
// exponentials. At D = 128 one block takes most of the SM's shared memory, and the bound would
// only spill registers.
#define A23_TILE(name, T, D) \
  extern "C" __global__ void __launch_bounds__(TILE_THREADS, (D) <= 64 ? 2 : 1) name(A23_PARAMS(T)) { a23_tile<T, D>(A23_ARGS); }
A23_TILE(carve_a23_tile_f32_32, float, 32)
A23_TILE(carve_a23_tile_f32_64, float, 64)
A23_TILE(carve_a23_tile_f32_128, float, 128)
A23_TILE(carve_a23_tile_f16_32, __half, 32)
A23_TILE(carve_a23_tile_bf16_32, bf16, 32)

// carve_a23rel_*: the rows kernel with the relative bias; after A23_PARAMS, per table (c2p,
// then p2c) its pointer, its index, its batch stride and its head stride | R (lo | hi).
#define A23_ROWS_REL(name, T, DPL)                                                                          \
  extern "C" __global__ void __launch_bounds__(128)                                                        \
      name(A23_PARAMS(T), const T *c2p, const int *c2pi, i64 csb, i64 cshr, const T *p2c, const int *p2ci, \
           i64 psb, i64 pshr) {                                                                            \
    const A23Rel<T> rel{c2p, p2c, c2pi, p2ci, csb, psb, lo32(cshr), hi32(cshr), lo32(pshr), hi32(pshr)};   \
    a23_rows<T, DPL, true>(A23_ARGS, &rel);                                                                \
  }
A23_ROWS_REL(carve_a23rel_f32_1, float, 1)
A23_ROWS_REL(carve_a23rel_f32_2, float, 2)
A23_ROWS_REL(carve_a23rel_f32_4, float, 4)
A23_ROWS_REL(carve_a23rel_f32_8, float, 8)
A23_ROWS_REL(carve_a23rel_f16_1, __half, 1)
A23_ROWS_REL(carve_a23rel_f16_2, __half, 2)
A23_ROWS_REL(carve_a23rel_f16_4, __half, 4)
A23_ROWS_REL(carve_a23rel_f16_8, __half, 8)
A23_ROWS_REL(carve_a23rel_bf16_1, bf16, 1)
A23_ROWS_REL(carve_a23rel_bf16_2, bf16, 2)
A23_ROWS_REL(carve_a23rel_bf16_4, bf16, 4)
A23_ROWS_REL(carve_a23rel_bf16_8, bf16, 8)

// At head size 128 a thread takes about 175 registers (234 with a mask), so two blocks share an
// SM. A third (__launch_bounds__(128, 3): 168 registers, a few bytes spilled) measured slower
// on the H200 at every benchmarked shape but the one-wave (1, 2048) without a mask: the
// heaviest-first order balances the causal rows only as blocks finish and others start.
#define A23_MMA(name, T, D, MODE) \
  extern "C" __global__ void __launch_bounds__(MMA_THREADS) name(A23_PARAMS(T)) { a23_mma<T, D, MODE>(A23_ARGS); }
#define A23_MMA_MODES(T, tn, D)                             \
  A23_MMA(carve_a23_mma_##tn##_##D, T, D, A23_PLAIN)        \
  A23_MMA(carve_a23_mmafmask_##tn##_##D, T, D, A23_FMASK)   \
  A23_MMA(carve_a23_mmabmask_##tn##_##D, T, D, A23_BMASK)   \
  A23_MMA(carve_a23_mmagen_##tn##_##D, T, D, A23_GEN)
A23_MMA_MODES(__half, f16, 64)
A23_MMA_MODES(__half, f16, 128)
A23_MMA_MODES(bf16, bf16, 64)
A23_MMA_MODES(bf16, bf16, 128)

// carve_a23_concat_<T>: dst [B, H, T, W] = past [B, H, P, W] followed by the new rows of cur
// (batch stride csb, head|row strides chs): the present_key / present_value outputs.
// bh = B|H, tp = T|P.
#define A23_CONCAT(name, T)                                                                             \
  extern "C" __global__ void name(T* dst, const T* past, const T* cur, i64 bh, i64 tp, i64 w, i64 csb,    \
                                  i64 chs) {                                                            \
    const int B = lo32(bh), H = hi32(bh), Tn = lo32(tp), P = hi32(tp);                                  \
    const i64 n = (i64)B * H * Tn * w;                                                                  \
    GRID_STRIDE(x, n) {                                                                                 \
      const i64 d = x % w, r = x / w;                                                                   \
      const int t = (int)(r % Tn), bhi = (int)(r / Tn), b = bhi / H, hh = bhi % H;                      \
      dst[x] = t < P ? past[((i64)bhi * P + t) * w + d]                                                 \
                     : cur[b * csb + (i64)hh * lo32(chs) + (i64)(t - P) * hi32(chs) + d];               \
    }                                                                                                   \
  }
A23_CONCAT(carve_a23_concat_f32, float)
A23_CONCAT(carve_a23_concat_f16, __half)
A23_CONCAT(carve_a23_concat_bf16, bf16)
