// Attention core for com.microsoft GroupQueryAttention and MultiHeadAttention, and the GQA
// key/value cache kernels.
//
// One block (4 warps) takes one batch, one key/value head, a tile of query rows (rows are
// (token s, grouped head g) pairs, so a decode step's grouped heads share every key and value
// read) and one chunk of the keys. Each warp walks 32-key tiles of the chunk: it copies the tile's
// keys and values into its shared memory with asynchronous 16-byte copies (all in flight at once),
// lane l scores key j0+l against every row (queries staged in shared memory as float32), the warp
// keeps an online softmax per row (running max, per-lane running sums) and accumulates p * V with
// lanes owning head dims d = lane + 32e. The warps then merge through shared memory. With one chunk (tactic
// "fused") the block writes the normalized output; with several (tactic "split-kv", the
// flash-decoding split) it writes its unnormalized output, max and sum to the workspace
// partials and carve_attn_combine merges the chunks.
//
// Key validity follows the CPU kernels: GQA mode (ATT_GQA) excludes keys outside [lo, hi) from
// seqlens_k, total_sequence_length, causality and the local window; MHA mode adds
// mask_filter_value for masked and (unidirectional) future keys and adds attention_bias.
#include "common.cuh"

using namespace carve;

enum {
  ATT_GQA = 1,          // key ranges from seqlens_k / total_sequence_length
  ATT_CAUSAL_EXCL = 2,  // GQA causal: future keys excluded
  ATT_CAUSAL_ADD = 4,   // MHA unidirectional: future keys get mask_filter_value
  ATT_INTERLEAVED = 8,  // rotary in interleaved pairs
  ATT_POS_IDS = 16,     // rotary positions from position_ids
  ATT_ROTARY = 32,      // rotate the queries (GQA do_rotary)
};

enum { MASK_NONE = 0, MASK_LENGTHS = 1, MASK_STARTEND = 2, MASK_RAW2 = 3, MASK_RAW3 = 4 };

#define ATT_WARPS 4  // the most warps a block has (launch bounds); blockDim.x / 32 says how many

namespace {

// cp_async16 queues a 16-byte copy from global to shared memory (sm_80+), completed by
// cp_async_wait_all.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}

// gqa_position is the rotary position of token s of batch b.
__device__ __forceinline__ i64 gqa_position(const int* seqlens, const i64* pos, int flags, bool first, int b, int S,
                                            int s) {
  if (flags & ATT_POS_IDS) return pos[(i64)b * S + s];
  if (first) return s;
  return (i64)seqlens[b] + 1 - S + s;
}

// att_scores adds to sc[r], for the rows r < rows, the dot product of the key at kr (D elements)
// with query row r at q (rows of D floats in shared memory); with tvec the key is read in
// 16-byte vectors (D a multiple of them, kr aligned).
template <typename T, int RMAX>
__device__ __forceinline__ void att_scores(float (&sc)[RMAX], const T* kr, const float* q, int rows, int D, bool tvec) {
  constexpr int VE = 16 / sizeof(T);
  if (tvec) {
    for (int d0 = 0; d0 < D; d0 += VE) {
      union {
        uint4 u;
        T e[VE];
      } kv;
      kv.u = *(const uint4*)(kr + d0);
      float kf[VE];
#pragma unroll
      for (int e = 0; e < VE; e++) kf[e] = tof(kv.e[e]);
#pragma unroll
      for (int r = 0; r < RMAX; r++) {
        if (r < rows) {
          const float4* qr = (const float4*)(q + r * D + d0);
          float s = sc[r];
#pragma unroll
          for (int e4 = 0; e4 < VE / 4; e4++) {
            const float4 qv = qr[e4];
            s = fmaf(qv.x, kf[4 * e4], s);
            s = fmaf(qv.y, kf[4 * e4 + 1], s);
            s = fmaf(qv.z, kf[4 * e4 + 2], s);
            s = fmaf(qv.w, kf[4 * e4 + 3], s);
          }
          sc[r] = s;
        }
      }
    }
    return;
  }
  for (int d = 0; d < D; d++) {
    const float kf = tof(kr[d]);
#pragma unroll
    for (int r = 0; r < RMAX; r++)
      if (r < rows) sc[r] = fmaf(q[r * D + d], kf, sc[r]);
  }
}

// att_accumulate adds p_j V_j to acc[r] for the rows r < rows and the nk keys of a tile whose
// values are rows of Dv elements at v: lane j holds p[r] of key j, and lane l owns the head dims
// d = l + 32e.
template <typename T, int RMAX, int DPL>
__device__ __forceinline__ void att_accumulate(float (&acc)[RMAX][DPL], const float (&p)[RMAX], const T* v, int Dv, int nk,
                                               int rows, int lane) {
  for (int jj = 0; jj < nk; jj++) {
    const T* vr = v + jj * Dv;
    float vf[DPL];
#pragma unroll
    for (int e = 0; e < DPL; e++) {
      const int d = lane + 32 * e;
      vf[e] = d < Dv ? tof(vr[d]) : 0.f;
    }
#pragma unroll
    for (int r = 0; r < RMAX; r++) {
      if (r < rows) {
        const float pj = __shfl_sync(0xffffffffu, p[r], jj);
#pragma unroll
        for (int e = 0; e < DPL; e++) acc[r][e] = fmaf(pj, vf[e], acc[r][e]);
      }
    }
  }
}

__device__ __forceinline__ bool masked(const int* mask, int kind, int maskT, int B, int S, int b, int i, int j) {
  switch (kind) {
    case MASK_LENGTHS: return j >= mask[b];
    case MASK_STARTEND: return j >= mask[b] || j < mask[B + b];
    case MASK_RAW2: return j >= maskT || mask[(i64)b * maskT + j] == 0;
    case MASK_RAW3: return j >= maskT || mask[((i64)b * S + i) * maskT + j] == 0;
  }
  return false;
}

template <typename T, int DPL>
__device__ __forceinline__ void attn(const T* q, const T* k, const T* v, T* out, float* part, const int* seqlens,
                                     const int* totalp, const int* mask, const T* bias, const T* cosc, const T* sinc,
                                     const i64* pos, i64 bs, i64 heads, i64 dims, i64 tt, i64 qstr, i64 ksb,
                                     i64 kstr, i64 vsb, i64 vstr, i64 maskInfo, i64 biasStr, i64 biasTRot,
                                     i64 chunk, int flags, float scale, float softcap, float filter, int window,
                                     int maxPos) {
  constexpr int RBM = DPL >= 4 ? 8 : 16;
  const int B = lo32(bs), S = hi32(bs), N = lo32(heads), Nkv = hi32(heads), D = lo32(dims), Dv = hi32(dims);
  const int T_ = lo32(tt), pastLen = hi32(tt);
  const int qss = lo32(qstr), qsh = hi32(qstr), ksh = lo32(kstr), kst = hi32(kstr), vsh = lo32(vstr),
            vst = hi32(vstr);
  const int maskKind = lo32(maskInfo), maskT = hi32(maskInfo), biasSB = lo32(biasStr), biasSH = hi32(biasStr);
  const int biasT = lo32(biasTRot), rot = hi32(biasTRot), chunkLen = lo32(chunk), rowsPer = hi32(chunk);
  const int G = N / Nkv;
  const int b = blockIdx.y / Nkv, kh = blockIdx.y % Nkv;
  const int row0 = blockIdx.x * rowsPer;
  const int nrows = min(rowsPer, S * G - row0);
  const int c = blockIdx.z;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

  const int nw = blockDim.x >> 5;
  constexpr int VE = 16 / sizeof(T);
  const int Dp = D + VE;  // K tile row stride: 16 bytes of padding keep lane-per-row reads conflict-free

  extern __shared__ float sm[];
  float* qs = sm;                                             // [rowsPer][D] float
  T* tiles = (T*)(sm + (i64)rowsPer * D);                      // per warp: K [32][Dp], V [32][Dv]
  T* ks = tiles + (i64)warp * 32 * (Dp + Dv);
  T* vsm = ks + 32 * Dp;
  float* merge = sm + (i64)rowsPer * D;                       // [nw][rowsPer][Dv + 2], after the tiles are done
  __shared__ int lo_s[RBM], hi_s[RBM];

  // first prompt: past lengths are 0 (GQA)
  const int total = (flags & ATT_GQA) ? totalp[0] : 0;
  const bool first = S == total;
  if (threadIdx.x < nrows) {
    int r = threadIdx.x, s = (row0 + r) / G;
    int lo = 0, hi = T_;
    if (flags & ATT_GQA) {
      int totb = seqlens[b] + 1;
      int pastb = first ? 0 : totb - S;
      hi = min(T_, totb);
      if (flags & ATT_CAUSAL_EXCL) {
        hi = min(pastb + s + 1, T_);
        if (window > 0 && hi > window) lo = hi - window;
      }
    }
    lo_s[r] = lo;
    hi_s[r] = hi;
  }
  // stage the query rows as float (rotated when asked)
  for (int e = threadIdx.x; e < nrows * D; e += blockDim.x) {
    int r = e / D, d = e % D, row = row0 + r, s = row / G, g = row % G, n = kh * G + g;
    qs[r * D + d] = tof(q[(i64)b * S * qss + (i64)s * qss + (i64)n * qsh + d]);
  }
  __syncthreads();
  if (flags & ATT_ROTARY) {
    const int half = rot / 2;
    for (int e = threadIdx.x; e < nrows * half; e += blockDim.x) {
      int r = e / half, kk = e % half, s = (row0 + r) / G;
      i64 p = gqa_position(seqlens, pos, flags, first, b, S, s);
      p = p < 0 ? 0 : (p >= maxPos ? maxPos - 1 : p);
      float cs = tof(cosc[p * half + kk]), sn = tof(sinc[p * half + kk]);
      int i0 = (flags & ATT_INTERLEAVED) ? 2 * kk : kk, i1 = (flags & ATT_INTERLEAVED) ? 2 * kk + 1 : kk + half;
      float x0 = qs[r * D + i0], x1 = qs[r * D + i1];
      qs[r * D + i0] = x0 * cs - x1 * sn;
      qs[r * D + i1] = x1 * cs + x0 * sn;
    }
    __syncthreads();
  }

  // the block's keys: its chunk, cut to the rows' union of valid ranges
  int kbeg = c * chunkLen, kend = min(T_, kbeg + chunkLen);
  {
    int mlo = T_, mhi = 0;
    for (int r = 0; r < nrows; r++) mlo = min(mlo, lo_s[r]), mhi = max(mhi, hi_s[r]);
    kbeg = max(kbeg, mlo);
    kend = min(kend, mhi);
  }

  float m[RBM], l[RBM], acc[RBM][DPL];
#pragma unroll
  for (int r = 0; r < RBM; r++) {
    m[r] = -INFINITY;
    l[r] = 0.f;
#pragma unroll
    for (int e = 0; e < DPL; e++) acc[r][e] = 0.f;
  }
  const T* kb = k + (i64)b * ksb + (i64)kh * ksh;
  const T* vb = v + (i64)b * vsb + (i64)kh * vsh;
  // 16-byte asynchronous copies of whole tiles when every row is 16-byte aligned
  const bool tvec = D % VE == 0 && Dv % VE == 0 && kst % VE == 0 && vst % VE == 0 &&
                    ((uintptr_t)kb & 15) == 0 && ((uintptr_t)vb & 15) == 0 && (((uintptr_t)ks) & 15) == 0;

  for (int j0 = kbeg + warp * 32; j0 < kend; j0 += nw * 32) {
    const int nk = min(32, kend - j0);
    // stage the tile's keys and values in the warp's shared memory: every copy is issued before
    // any is waited for
    __syncwarp();
    if (tvec) {
      const int cpk = D / VE, cpv = Dv / VE;
      for (int u = lane; u < nk * cpk; u += 32) {
        const int row = u / cpk, cc = u - row * cpk;
        cp_async16(ks + row * Dp + cc * VE, kb + (i64)(j0 + row) * kst + cc * VE);
      }
      for (int u = lane; u < nk * cpv; u += 32) {
        const int row = u / cpv, cc = u - row * cpv;
        cp_async16(vsm + row * Dv + cc * VE, vb + (i64)(j0 + row) * vst + cc * VE);
      }
      cp_async_wait_all();
    } else {
      for (int u = lane; u < nk * D; u += 32) {
        const int row = u / D, cc = u - row * D;
        ks[row * Dp + cc] = kb[(i64)(j0 + row) * kst + cc];
      }
      for (int u = lane; u < nk * Dv; u += 32) {
        const int row = u / Dv, cc = u - row * Dv;
        vsm[row * Dv + cc] = vb[(i64)(j0 + row) * vst + cc];
      }
    }
    __syncwarp();
    const int j = j0 + lane;
    const bool live = lane < nk;
    float sc[RBM];
#pragma unroll
    for (int r = 0; r < RBM; r++) sc[r] = 0.f;
    if (live) att_scores<T, RBM>(sc, ks + lane * Dp, qs, nrows, D, tvec);
    float p[RBM];
#pragma unroll
    for (int r = 0; r < RBM; r++) {
      if (r >= nrows) {
        p[r] = 0.f;
        continue;
      }
      const int row = row0 + r, s = row / G, n = kh * G + row % G;
      float x = -INFINITY;
      if (live && j >= lo_s[r] && j < hi_s[r]) {
        x = scale * sc[r];
        if (softcap > 0.f) x = softcap * tanhf(x / softcap);
        if (bias && j < biasT) x += tof(bias[(i64)b * biasSB + (i64)n * biasSH + (i64)s * biasT + j]);
        if ((flags & ATT_CAUSAL_ADD) && j > pastLen + s) x += filter;
        if (maskKind && masked(mask, maskKind, maskT, B, S, b, s, j)) x += filter;
      }
      const float mn = fmaxf(m[r], warp_max(x));
      float alpha = 1.f, pr = 0.f;
      if (mn != -INFINITY) {
        alpha = expf(m[r] - mn);
        pr = expf(x - mn);
      }
      m[r] = mn;
      l[r] = l[r] * alpha + pr;
#pragma unroll
      for (int e = 0; e < DPL; e++) acc[r][e] *= alpha;
      p[r] = pr;
    }
    att_accumulate<T, RBM, DPL>(acc, p, vsm, Dv, nk, nrows, lane);
  }
  __syncthreads();  // the tiles' shared memory becomes the merge area

  // merge the warps
  const int stride = Dv + 2;
#pragma unroll
  for (int r = 0; r < RBM; r++) {
    if (r < nrows) {
      float ls = warp_sum(l[r]);
      float* mr = merge + ((i64)warp * rowsPer + r) * stride;
      if (lane == 0) mr[Dv] = m[r], mr[Dv + 1] = ls;
#pragma unroll
      for (int e = 0; e < DPL; e++) {
        int d = lane + 32 * e;
        if (d < Dv) mr[d] = acc[r][e];
      }
    }
  }
  __syncthreads();
  const int chunks = gridDim.z;
  const i64 rowsTotal = (i64)B * N * S;
  for (int e = threadIdx.x; e < nrows * Dv; e += blockDim.x) {
    const int r = e / Dv, d = e % Dv, row = row0 + r, s = row / G, n = kh * G + row % G;
    float M = -INFINITY;
    for (int w = 0; w < nw; w++) M = fmaxf(M, merge[((i64)w * rowsPer + r) * stride + Dv]);
    float L = 0.f, A = 0.f;
    if (M != -INFINITY) {
      for (int w = 0; w < nw; w++) {
        const float* mr = merge + ((i64)w * rowsPer + r) * stride;
        float f = expf(mr[Dv] - M);
        L += mr[Dv + 1] * f;
        A += mr[d] * f;
      }
    }
    if (chunks == 1) {
      out[(((i64)b * S + s) * N + n) * Dv + d] = fromf<T>(L > 0.f ? A / L : 0.f);
    } else {
      const i64 prow = ((i64)b * N + n) * S + s;
      part[((i64)c * rowsTotal + prow) * Dv + d] = A;
      if (d == 0) {
        float* pm = part + (i64)chunks * rowsTotal * Dv;
        pm[(i64)c * rowsTotal + prow] = M;
        pm[(i64)chunks * rowsTotal + (i64)c * rowsTotal + prow] = L;
      }
    }
  }
}

}  // namespace

// carve_attn_<T>_<DPL>: the attention core; see the file comment. Packed parameters:
// bs = B|S, heads = N|Nkv, dims = D|Dv, tt = T|pastLen, qstr = row stride|head stride of Q,
// kstr and vstr = head stride|position stride (ksb, vsb: batch strides), maskInfo = kind|T,
// biasStr = batch|head stride, biasTRot = bias T|rotary dim, chunk = keys per chunk|rows per block.
#define ATTN(name, T, DPL)                                                                                        \
  extern "C" __global__ void __launch_bounds__(ATT_WARPS * 32)                                                    \
      name(const T* q, const T* k, const T* v, T* out, float* part, const int* seqlens, const int* total,         \
           const int* mask, const T* bias, const T* cosc, const T* sinc, const i64* pos, i64 bs, i64 heads,       \
           i64 dims, i64 tt, i64 qstr, i64 ksb, i64 kstr, i64 vsb, i64 vstr, i64 maskInfo, i64 biasStr,           \
           i64 biasTRot, i64 chunk, int flags, float scale, float softcap, float filter, int window, int maxPos) { \
    attn<T, DPL>(q, k, v, out, part, seqlens, total, mask, bias, cosc, sinc, pos, bs, heads, dims, tt, qstr, ksb, \
                 kstr, vsb, vstr, maskInfo, biasStr, biasTRot, chunk, flags, scale, softcap, filter, window,      \
                 maxPos);                                                                                         \
  }
ATTN(carve_attn_f32_1, float, 1)
ATTN(carve_attn_f32_2, float, 2)
ATTN(carve_attn_f32_4, float, 4)
ATTN(carve_attn_f32_8, float, 8)
ATTN(carve_attn_f16_1, __half, 1)
ATTN(carve_attn_f16_2, __half, 2)
ATTN(carve_attn_f16_4, __half, 4)
ATTN(carve_attn_f16_8, __half, 8)
ATTN(carve_attn_bf16_1, bf16, 1)
ATTN(carve_attn_bf16_2, bf16, 2)
ATTN(carve_attn_bf16_4, bf16, 4)
ATTN(carve_attn_bf16_8, bf16, 8)

// carve_attn_combine_<T>: merges the split-kv partials of every row (b, n, s): one block per
// row. The chunks' weights exp(max_c - max) go to shared memory (chunks floats, the dynamic
// size), then each thread sums one head dim over the chunks, loads independent of each other.
// Rows whose chunks all saw no key get zeros.
#define COMBINE(name, T)                                                                                 \
  extern "C" __global__ void name(T* out, const float* part, i64 rowsTotal, int Dv, int chunks, i64 ns) { \
    extern __shared__ float wts[];                                                                       \
    __shared__ float red[32];                                                                            \
    const int N = lo32(ns), S = hi32(ns);                                                                \
    const i64 row = blockIdx.x;                                                                          \
    const float* pm = part + (i64)chunks * rowsTotal * Dv;                                               \
    const float* pl = pm + (i64)chunks * rowsTotal;                                                      \
    float mx = -INFINITY;                                                                                \
    for (int c = threadIdx.x; c < chunks; c += blockDim.x)                                               \
      if (pl[(i64)c * rowsTotal + row] > 0.f) mx = fmaxf(mx, pm[(i64)c * rowsTotal + row]);             \
    const float M = block_max(mx, red);                                                                  \
    float l = 0.f;                                                                                       \
    for (int c = threadIdx.x; c < chunks; c += blockDim.x) {                                             \
      const float lc = pl[(i64)c * rowsTotal + row];                                                     \
      const float w = (lc > 0.f && M != -INFINITY) ? expf(pm[(i64)c * rowsTotal + row] - M) : 0.f;      \
      wts[c] = w;                                                                                        \
      l += lc > 0.f ? lc * w : 0.f;                                                                      \
    }                                                                                                    \
    const float L = block_sum(l, red);                                                                   \
    const i64 s = row % S, n = (row / S) % N, b = row / ((i64)S * N);                                    \
    T* o = out + ((b * S + s) * N + n) * Dv;                                                             \
    for (int d = threadIdx.x; d < Dv; d += blockDim.x) {                                                 \
      float A = 0.f;                                                                                     \
      _Pragma("unroll 8") for (int c = 0; c < chunks; c++) A += wts[c] * part[((i64)c * rowsTotal + row) * Dv + d]; \
      o[d] = fromf<T>(L > 0.f ? A / L : 0.f);                                                            \
    }                                                                                                    \
  }
COMBINE(carve_attn_combine_f32, float)
COMBINE(carve_attn_combine_f16, __half)
COMBINE(carve_attn_combine_bf16, bf16)

// ---------------------------------------------------------------- GQA decode

// carve_gqa_dec_<T>_<DL>_<R>: the core of one GroupQueryAttention decode step (one new token
// per batch), spread over many blocks so that no multiprocessor streams much of the cache: block
// (c, b * Nkv + kh) of a C-wide grid takes the c-th of C equal slices of batch b's valid keys
// [lo, hi) (read from seqlens_k and total_sequence_length on the device, so a captured graph
// replays at any length) for the G query heads of key/value head kh. Each block
//   - waits for the kernel ahead when launched dependent, then issues the loads of its first
//     keys and values before anything else;
//   - stages the G query rows as float32 (rotated when ATT_ROTARY) and the new key (rotated)
//     and value rounded to T, exactly as carve_kv_append stores them; block 0 writes them into
//     the caches at position past_b, and whoever scores that position takes them from shared
//     memory instead of the cache;
//   - scores its keys with the head dims split across lanes: L lanes (a power of two, at most
//     32, L * DL >= D) form a key processor, lane i holding dims [i * DL, i * DL + DL), so a
//     key's score is DL fused multiply-adds per row and a butterfly over the lanes, and p * V
//     needs no communication (a lane accumulates its own dims). A warp holds 32 / L processors;
//     each takes U = DEC_KEYS keys at a time (half that at DL 8), the next batch's loads issued
//     before the current batch is scored. R rows are computed (R >= G; rows past G on copies
//     of row G - 1, dropped) so that no row's work waits behind a branch, and the rows'
//     butterflies overlap. Scores are kept in base 2;
//   - merges its processors and writes per row its unnormalized output, max (base e) and sum to
//     the partials (the split-kv layout), or, when C is 1, the normalized output.
// carve_gqa_decode_combine_<T> then merges the C slices of every row; it is launched dependent
// (programmatic dependent launch), and the core lets it be scheduled at once.
// Packed parameters: bn = B|N, hd = Nkv|D, tr = Tcap|rotary dim, strides = query row stride|new
// key and value row stride. The caches are [B, Nkv, Tcap, D].
enum {
  DEC_ROWS = 8,   // the most grouped query heads per key/value head
  DEC_WARPS = 8,  // the most warps a block has
  DEC_STAGE = 8,  // query, key and value elements a thread loads at once (unaligned staging)
  DEC_KEYS = 4,   // keys a processor scores at once
};

namespace {

// ld_dl loads n = DL elements at p: in one or two vector loads when vec (p aligned to their
// size, at most 16 bytes), else element by element, the first nvalid of them (zeros after).
template <typename T, int DL>
__device__ __forceinline__ void ld_dl(const T* p, T (&e)[DL], bool vec, int nvalid) {
  constexpr int BY = DL * (int)sizeof(T);
  if (vec) {
    if constexpr (BY >= 16) {
#pragma unroll
      for (int i = 0; i < BY / 16; i++) {
        const uint4 u = ((const uint4*)p)[i];
        memcpy(&e[i * 16 / sizeof(T)], &u, 16);
      }
      return;
    } else if constexpr (BY == 8) {
      const uint2 u = *(const uint2*)p;
      memcpy(e, &u, 8);
      return;
    } else if constexpr (BY == 4) {
      const unsigned u = *(const unsigned*)p;
      memcpy(e, &u, 4);
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < DL; i++) e[i] = i < nvalid ? p[i] : fromf<T>(0.f);
}

// ex2 is 2^x in one MUFU instruction (flushing denormals; 2^-inf is 0).
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

template <typename T, int DL, int R>
__device__ __forceinline__ void gqa_dec(const T* q, const T* ksrc, const T* vsrc, T* kc, T* vc, T* out, float* part,
                                        const int* seqlens, const int* totalp, const T* cosc, const T* sinc,
                                        const i64* pos, i64 bn, i64 hd, i64 tr, i64 strides, int flags, float scale,
                                        float softcap, int window, int maxPos) {
  constexpr int U = DL >= 8 ? DEC_KEYS / 2 : DEC_KEYS, VE = 16 / sizeof(T);
  constexpr float LOG2E = 1.4426950408889634f, LN2 = 0.6931471805599453f;
  const int B = lo32(bn), N = hi32(bn), Nkv = lo32(hd), D = hi32(hd), Tcap = lo32(tr), rot = hi32(tr);
  const int qss = lo32(strides), kvss = hi32(strides);
  const int G = N / Nkv;
  const int b = blockIdx.y / Nkv, kh = blockIdx.y % Nkv;
  const int C = gridDim.x, c = blockIdx.x;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = blockDim.x >> 5;
  int L = 1;
  while (L < 32 && L * DL < D) L <<= 1;
  const int KS = 32 / L, li = lane & (L - 1), P = nw * KS, proc = warp * KS + lane / L;
  const int d0 = li * DL, nvalid = max(min(DL, D - d0), 0);
  // the combine, when launched dependent (programmatic dependent launch), may be scheduled now:
  // it waits for this grid's completion before reading the partials. The core itself may be
  // launched dependent (common.cuh): everything it reads, seqlens_k included, is written by the
  // step's kernels, so it waits first.
  pdl_trigger();
  pdl_wait();

  // shared memory (decodeShared in Go): the new key and value [2][D] T, then, 16-byte aligned,
  // the queries [G][D] float, which the processors' merge area [P][G][D + 2] float and the merge
  // weights [G][P + 1] reuse afterwards
  extern __shared__ float sm[];
  T* knew = (T*)sm;
  T* vnew = knew + D;
  const int head = ((2 * D * (int)sizeof(T) + 3) / 4 + 3) & ~3;
  float* qs = sm + head;
  const int stride = D + 2;
  float* merge = qs;
  float* wts = merge + P * G * stride;

  // the batch's valid keys, as the attention core computes them for S = 1, and the block's slice
  const bool first = totalp[0] == 1;
  const int totb = seqlens[b] + 1;
  const int pastb = first ? 0 : totb - 1;
  int lo = 0, hi = min(Tcap, totb);
  if (flags & ATT_CAUSAL_EXCL) {
    hi = min(pastb + 1, Tcap);
    if (window > 0 && hi > window) lo = hi - window;
  }
  const int n = max(hi - lo, 0);
  const int per = (n + C - 1) / C;
  const int kb = lo + min(c * per, n), ke = lo + min((c + 1) * per, n);

  const T* kbase = kc + ((i64)b * Nkv + kh) * Tcap * D;
  const T* vbase = vc + ((i64)b * Nkv + kh) * Tcap * D;
  constexpr int AL = DL * (int)sizeof(T) < 16 ? DL * (int)sizeof(T) : 16;
  const bool vec = L * DL == D && ((uintptr_t)kbase % AL) == 0 && ((uintptr_t)vbase % AL) == 0;
  // keys of batch (warp base jw): processor proc takes jw + (proc % KS) * U + u, clamped into
  // the slice (keys past ke are loaded from kb and masked)
  T kr[U][DL], vr[U][DL];
  auto load = [&](int jw, T (&kk)[U][DL], T (&vv)[U][DL]) {
#pragma unroll
    for (int u = 0; u < U; u++) {
      int j = jw + (lane / L) * U + u;
      j = j < ke ? j : kb;
      if (nvalid > 0) {
        ld_dl<T, DL>(kbase + (i64)j * D + d0, kk[u], vec, nvalid);
        ld_dl<T, DL>(vbase + (i64)j * D + d0, vv[u], vec, nvalid);
      } else {
#pragma unroll
        for (int e = 0; e < DL; e++) kk[u][e] = vv[u][e] = fromf<T>(0.f);
      }
    }
  };
  const int step = P * U;
  const int jw0 = kb + warp * KS * U;
  if (jw0 < ke) load(jw0, kr, vr);

  // the query rows and the new key and value, rotated at position past_b (or position_ids)
  i64 p = 0;
  if (flags & ATT_ROTARY) {
    p = (flags & ATT_POS_IDS) ? pos[b] : (first ? 0 : seqlens[b]);
    p = p < 0 ? 0 : (p >= maxPos ? maxPos - 1 : p);
  }
  const int half = rot / 2;
  const T* qb = q + (i64)b * qss + (i64)kh * G * D;
  auto staged = [&](int e) {
    const int r = e / D, d = e - r * D;
    const T* src = r < G ? qb + r * D : (r == G ? ksrc : vsrc) + (i64)b * kvss + (i64)kh * D;
    if ((flags & ATT_ROTARY) && r <= G && d < rot) {
      int kk, i0, i1;
      bool lead;
      if (flags & ATT_INTERLEAVED) {
        kk = d / 2, i0 = 2 * kk, i1 = i0 + 1, lead = d == i0;
      } else {
        kk = d % half, i0 = kk, i1 = kk + half, lead = d < half;
      }
      const float cs = tof(cosc[p * half + kk]), sn = tof(sinc[p * half + kk]);
      const float x0 = tof(src[i0]), x1 = tof(src[i1]);
      return lead ? x0 * cs - x1 * sn : x1 * cs + x0 * sn;
    }
    return tof(src[d]);
  };
  const int nst = (G + 2) * D;
  // 16-byte vectors of VE dims a thread when the rows, the rotary halves and the tables allow
  const T* kvb = ksrc + (i64)b * kvss + (i64)kh * D;
  const T* vvb = vsrc + (i64)b * kvss + (i64)kh * D;
  const bool rotv = !(flags & ATT_ROTARY) ||
                    (rot % (2 * VE) == 0 && ((uintptr_t)cosc & 15) == 0 && ((uintptr_t)sinc & 15) == 0);
  if (D % VE == 0 && rotv && ((uintptr_t)qb & 15) == 0 && ((uintptr_t)kvb & 15) == 0 &&
      ((uintptr_t)vvb & 15) == 0) {
    for (int e0 = tid * VE; e0 < nst; e0 += blockDim.x * VE) {
      const int r = e0 / D, d0 = e0 - r * D;
      const T* src = r < G ? qb + r * D : (r == G ? kvb : vvb);
      float x[VE], y[VE];
      vec_load<T, VE>(src + d0, x);
      if ((flags & ATT_ROTARY) && r <= G && d0 < rot) {
        if (flags & ATT_INTERLEAVED) {  // pairs (2k, 2k + 1) at table index d0 / 2 + k
          float cs[VE], sn[VE];
          vec_load<T, VE>(cosc + p * half + (d0 / (2 * VE)) * VE, cs);
          vec_load<T, VE>(sinc + p * half + (d0 / (2 * VE)) * VE, sn);
          const int o = (d0 / VE) % 2 * (VE / 2);
#pragma unroll
          for (int k = 0; k < VE / 2; k++) {
            const float c0 = cs[o + k], s0 = sn[o + k], x0 = x[2 * k], x1 = x[2 * k + 1];
            y[2 * k] = x0 * c0 - x1 * s0;
            y[2 * k + 1] = x1 * c0 + x0 * s0;
          }
        } else {  // d pairs with d + half
          const bool lead = d0 < half;
          float xp[VE], cs[VE], sn[VE];
          vec_load<T, VE>(src + (lead ? d0 + half : d0 - half), xp);
          vec_load<T, VE>(cosc + p * half + (lead ? d0 : d0 - half), cs);
          vec_load<T, VE>(sinc + p * half + (lead ? d0 : d0 - half), sn);
#pragma unroll
          for (int k = 0; k < VE; k++) y[k] = lead ? x[k] * cs[k] - xp[k] * sn[k] : x[k] * cs[k] + xp[k] * sn[k];
        }
      } else {
#pragma unroll
        for (int k = 0; k < VE; k++) y[k] = x[k];
      }
      if (r < G) {
#pragma unroll
        for (int k = 0; k < VE; k += 4) *(float4*)&qs[r * D + d0 + k] = make_float4(y[k], y[k + 1], y[k + 2], y[k + 3]);
      } else {
        vec_store<T, VE>((r == G ? knew : vnew) + d0, y);
      }
    }
  } else {
    for (int e0 = tid; e0 < nst; e0 += DEC_STAGE * blockDim.x) {
      float x[DEC_STAGE];
#pragma unroll
      for (int k = 0; k < DEC_STAGE; k++) {
        const int e = e0 + k * blockDim.x;
        x[k] = e < nst ? staged(e) : 0.f;
      }
#pragma unroll
      for (int k = 0; k < DEC_STAGE; k++) {
        const int e = e0 + k * blockDim.x;
        if (e >= nst) break;
        const int r = e / D, d = e - r * D;
        if (r < G) {
          qs[r * D + d] = x[k];
        } else {
          (r == G ? knew : vnew)[d] = fromf<T>(x[k]);
        }
      }
    }
  }
  __syncthreads();
  if (c == 0 && pastb >= 0 && pastb < Tcap) {
    const i64 at = (((i64)b * Nkv + kh) * Tcap + pastb) * D;
    for (int d = tid; d < D; d += blockDim.x) {
      kc[at + d] = knew[d];
      vc[at + d] = vnew[d];
    }
  }
  // the lane's dims of the rows are read from shared memory per batch (registers hold the
  // batch's keys and values and the accumulators); rows G..R-1 are zeros, computed and dropped,
  // so that no row's work sits behind a branch and the rows' shuffles overlap
  const float qscale = softcap > 0.f ? scale : scale * LOG2E;
  T kn_[DL], vn_[DL];  // the new key and value in the lane's dims
#pragma unroll
  for (int e = 0; e < DL; e++) {
    kn_[e] = e < nvalid ? knew[d0 + e] : fromf<T>(0.f);
    vn_[e] = e < nvalid ? vnew[d0 + e] : fromf<T>(0.f);
  }
  const bool qvec = nvalid == DL && DL % 4 == 0 && (D % 4) == 0;

  float m[R], l[R], acc[R][DL];
#pragma unroll
  for (int r = 0; r < R; r++) {
    m[r] = -INFINITY;
    l[r] = 0.f;
#pragma unroll
    for (int e = 0; e < DL; e++) acc[r][e] = 0.f;
  }
  for (int jw = jw0; jw < ke; jw += step) {  // warp-uniform: every processor of the warp steps
    T kn[U][DL], vn[U][DL];
    if (jw + step < ke) load(jw + step, kn, vn);
    const int jp = jw + (lane / L) * U;
    float kf[U][DL], vf[U][DL];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const bool isnew = jp + u == pastb;  // what the cache is being given, from shared memory
      // a key past the slice was loaded from kb, which may be the new position, not yet written
      // (its p is 0, but 0 * NaN is not 0)
      const bool live = jp + u < ke;
#pragma unroll
      for (int e = 0; e < DL; e++) {
        kf[u][e] = tof(isnew ? kn_[e] : kr[u][e]);
        vf[u][e] = live ? tof(isnew ? vn_[e] : vr[u][e]) : 0.f;
      }
    }
    // the lane's share of every (row, key) score, then the sums over the processor's lanes
    float s[R][U];
#pragma unroll
    for (int r = 0; r < R; r++) {
      float qv[DL];
      if (qvec) {
#pragma unroll
        for (int e = 0; e < DL; e += 4) *(float4*)&qv[e] = *(const float4*)&qs[min(r, G - 1) * D + d0 + e];
      } else {
#pragma unroll
        for (int e = 0; e < DL; e++) qv[e] = e < nvalid ? qs[min(r, G - 1) * D + d0 + e] : 0.f;
      }
#pragma unroll
      for (int u = 0; u < U; u++) {
        float a = 0.f;
#pragma unroll
        for (int e = 0; e < DL; e++) a = fmaf(qv[e], kf[u][e], a);
        s[r][u] = a;
      }
    }
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      if (o >= L) break;
#pragma unroll
      for (int r = 0; r < R; r++)
#pragma unroll
        for (int u = 0; u < U; u++) s[r][u] += __shfl_xor_sync(0xffffffffu, s[r][u], o);
    }
    if (softcap > 0.f) {
#pragma unroll
      for (int r = 0; r < R; r++)
#pragma unroll
        for (int u = 0; u < U; u++) s[r][u] = softcap * tanhf(s[r][u] * qscale / softcap) * LOG2E;
    } else {
#pragma unroll
      for (int r = 0; r < R; r++)
#pragma unroll
        for (int u = 0; u < U; u++) s[r][u] *= qscale;
    }
    // the online softmax and p * V, branch-free (a row that has seen no key keeps m = -inf)
#pragma unroll
    for (int r = 0; r < R; r++) {
      float bm = -INFINITY;
#pragma unroll
      for (int u = 0; u < U; u++) {
        s[r][u] = jp + u < ke ? s[r][u] : -INFINITY;
        bm = fmaxf(bm, s[r][u]);
      }
      const float mn = fmaxf(m[r], bm), ms = mn == -INFINITY ? 0.f : mn;
      const float alpha = ex2(m[r] - ms);
      float ps = 0.f;
#pragma unroll
      for (int e = 0; e < DL; e++) acc[r][e] *= alpha;
#pragma unroll
      for (int u = 0; u < U; u++) {
        const float pu = ex2(s[r][u] - ms);
        ps += pu;
#pragma unroll
        for (int e = 0; e < DL; e++) acc[r][e] = fmaf(pu, vf[u][e], acc[r][e]);
      }
      l[r] = l[r] * alpha + ps;
      m[r] = mn;
    }
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int e = 0; e < DL; e++) kr[u][e] = kn[u][e], vr[u][e] = vn[u][e];
  }
  __syncthreads();  // the queries' shared memory becomes the merge area

  // merge the processors: weights exp2(m_p - M) per row, then the dims
#pragma unroll
  for (int r = 0; r < R; r++) {
    if (r < G) {
      float* mr = merge + ((i64)proc * G + r) * stride;
      if (li == 0) mr[D] = m[r], mr[D + 1] = l[r];
#pragma unroll
      for (int e = 0; e < DL; e++)
        if (e < nvalid) mr[d0 + e] = acc[r][e];
    }
  }
  __syncthreads();
  for (int r = tid; r < G; r += blockDim.x) {
    float M = -INFINITY;
    for (int pp = 0; pp < P; pp++) M = fmaxf(M, merge[((i64)pp * G + r) * stride + D]);
    float Ls = 0.f;
    for (int pp = 0; pp < P; pp++) {
      const float* mr = merge + ((i64)pp * G + r) * stride;
      const float w = M == -INFINITY || mr[D] == -INFINITY ? 0.f : ex2(mr[D] - M);
      wts[r * (P + 1) + pp] = w;
      Ls += w * mr[D + 1];
    }
    wts[r * (P + 1) + P] = Ls;
    if (C > 1) {
      const i64 rowsTotal = (i64)B * N, prow = (i64)b * N + (i64)kh * G + r;
      float* pm = part + (i64)C * rowsTotal * D;
      pm[(i64)c * rowsTotal + prow] = M * LN2;
      pm[(i64)C * rowsTotal + (i64)c * rowsTotal + prow] = Ls;
    }
  }
  __syncthreads();
  const i64 rowsTotal = (i64)B * N;
  for (int e = tid; e < G * D; e += blockDim.x) {
    const int r = e / D, d = e - r * D;
    const float* w = wts + r * (P + 1);
    float A = 0.f;
    for (int pp = 0; pp < P; pp++) A = fmaf(w[pp], merge[((i64)pp * G + r) * stride + d], A);
    const i64 prow = (i64)b * N + (i64)kh * G + r;
    if (C == 1) {
      const float Ls = w[P];
      out[prow * D + d] = fromf<T>(Ls > 0.f ? A / Ls : 0.f);
    } else {
      part[((i64)c * rowsTotal + prow) * D + d] = A;
    }
  }
}

}  // namespace

#define GQA_DEC(name, T, DL, R)                                                                                \
  extern "C" __global__ void __launch_bounds__(DEC_WARPS * 32)                                                 \
      name(const T* q, const T* ksrc, const T* vsrc, T* kc, T* vc, T* out, float* part, const int* seqlens,      \
           const int* total, const T* cosc, const T* sinc, const i64* pos, i64 bn, i64 hd, i64 tr, i64 strides, \
           int flags, float scale, float softcap, int window, int maxPos) {                                     \
    gqa_dec<T, DL, R>(q, ksrc, vsrc, kc, vc, out, part, seqlens, total, cosc, sinc, pos, bn, hd, tr, strides,   \
                      flags, scale, softcap, window, maxPos);                                                   \
  }
#define GQA_DEC_R(T, tn, DL)                               \
  GQA_DEC(carve_gqa_dec_##tn##_##DL##_2, T, DL, 2)         \
  GQA_DEC(carve_gqa_dec_##tn##_##DL##_4, T, DL, 4)         \
  GQA_DEC(carve_gqa_dec_##tn##_##DL##_6, T, DL, 6)         \
  GQA_DEC(carve_gqa_dec_##tn##_##DL##_8, T, DL, 8)
GQA_DEC_R(float, f32, 1)
GQA_DEC_R(float, f32, 2)
GQA_DEC_R(float, f32, 4)
GQA_DEC_R(float, f32, 8)
GQA_DEC_R(__half, f16, 1)
GQA_DEC_R(__half, f16, 2)
GQA_DEC_R(__half, f16, 4)
GQA_DEC_R(__half, f16, 8)
GQA_DEC_R(bf16, bf16, 1)
GQA_DEC_R(bf16, bf16, 2)
GQA_DEC_R(bf16, bf16, 4)
GQA_DEC_R(bf16, bf16, 8)

// carve_gqa_decode_combine_<T>: merges the chunks (slices) of carve_gqa_dec's partials for
// row blockIdx.x (batch b, head n; S = 1). The block's threads split the chunks Q ways per head
// dim (Q = blockDim / Dv) and warp 0 finds the row's max over the chunks that saw a key, their
// weights exp(max_c - max) (to shared memory, chunks floats, then the sum) and the sum. It is a
// latency chain at decode sizes, so every thread issues all its loads at once as soon as the
// core is done, before any value is used: its first CMB_REG partials (into registers) and, in
// warp 0, the chunks' maxima and sums; one round trip to L2 instead of four. Then the weighted
// shares meet in shared memory. Rows whose chunks all saw no key get zeros.
enum { CMB_REG = 16 };  // partials a thread loads before the weights are known

namespace {

template <typename T>
__device__ __forceinline__ void dec_combine(T* out, const float* part, i64 rowsTotal, int Dv, int chunks) {
  extern __shared__ float cs[];
  float* wts = cs;
  float* red = cs + chunks + 1;
  const i64 row = blockIdx.x;
  const float* pm = part + (i64)chunks * rowsTotal * Dv;
  const float* pl = pm + (i64)chunks * rowsTotal;
  const int Q = max((int)blockDim.x / Dv, 1), d = threadIdx.x % Dv, qi = threadIdx.x / Dv;
  const bool active = qi < Q;
  pdl_trigger();  // the step after it (the output projection) may start fetching its weights
  pdl_wait();     // a dependent launch: the core's partials
  float pv[CMB_REG];
#pragma unroll
  for (int j = 0; j < CMB_REG; j++) {
    const int c = qi + j * Q;
    pv[j] = active && c < chunks ? part[((i64)c * rowsTotal + row) * Dv + d] : 0.f;
  }
  if (threadIdx.x < 32) {
    float mx = -INFINITY;
#pragma unroll 2
    for (int c = threadIdx.x; c < chunks; c += 32) {
      const float lc = pl[(i64)c * rowsTotal + row], mc = pm[(i64)c * rowsTotal + row];
      if (lc > 0.f) mx = fmaxf(mx, mc);
    }
    const float M = warp_max(mx);
    float l = 0.f;
#pragma unroll 2
    for (int c = threadIdx.x; c < chunks; c += 32) {
      const float lc = pl[(i64)c * rowsTotal + row], mc = pm[(i64)c * rowsTotal + row];
      const float w = (lc > 0.f && M != -INFINITY) ? expf(mc - M) : 0.f;
      wts[c] = w;
      l += lc > 0.f ? lc * w : 0.f;
    }
    l = warp_sum(l);
    if (threadIdx.x == 0) wts[chunks] = l;
  }
  __syncthreads();
  if (active) {
    float A = 0.f;
#pragma unroll
    for (int j = 0; j < CMB_REG; j++) {
      const int c = qi + j * Q;
      if (c < chunks) A = fmaf(wts[c], pv[j], A);
    }
    for (int c = qi + CMB_REG * Q; c < chunks; c += Q) A = fmaf(wts[c], part[((i64)c * rowsTotal + row) * Dv + d], A);
    red[qi * Dv + d] = A;
  }
  __syncthreads();
  const float L = wts[chunks];
  for (int dd = threadIdx.x; dd < Dv; dd += blockDim.x) {
    float A = 0.f;
    for (int k = 0; k < Q; k++) A += red[k * Dv + dd];
    out[row * Dv + dd] = fromf<T>(L > 0.f ? A / L : 0.f);
  }
}

}  // namespace

#define DEC_COMBINE(name, T)                                                                      \
  extern "C" __global__ void name(T* out, const float* part, i64 rowsTotal, int Dv, int chunks) { \
    dec_combine<T>(out, part, rowsTotal, Dv, chunks);                                             \
  }
DEC_COMBINE(carve_gqa_decode_combine_f32, float)
DEC_COMBINE(carve_gqa_decode_combine_f16, __half)
DEC_COMBINE(carve_gqa_decode_combine_bf16, bf16)

// carve_kv_append_<T>: writes the S new keys (rotated when ATT_ROTARY) and values of every batch
// into the [B, Nkv, Tcap, D] caches at positions past_b + s, past_b = 0 on the first prompt
// (S == total_sequence_length) and seqlens_k[b] + 1 - S otherwise. ksrc/vsrc rows are kss/vss
// elements apart, heads D apart. bs = B|S, nd = Nkv|D, tk = Tcap|kss, vr = vss|rot.
#define KV_APPEND(name, T)                                                                                    \
  extern "C" __global__ void name(T* kdst, T* vdst, const T* ksrc, const T* vsrc, const int* seqlens,         \
                                  const int* totalp, const T* cosc, const T* sinc, const i64* pos, i64 bs,    \
                                  i64 nd, i64 tk, i64 vr, int flags, int maxPos) {                           \
    const int B = lo32(bs), S = hi32(bs), Nkv = lo32(nd), D = hi32(nd), Tcap = lo32(tk), kss = hi32(tk);      \
    const int vss = lo32(vr), rot = hi32(vr), half = rot / 2;                                                 \
    const bool first = S == totalp[0];                                                                        \
    const i64 n = (i64)B * S * Nkv * D;                                                                       \
    GRID_STRIDE(t, n) {                                                                                       \
      const int d = (int)(t % D);                                                                             \
      const i64 r = t / D;                                                                                    \
      const int h = (int)(r % Nkv), s = (int)((r / Nkv) % S), b = (int)(r / ((i64)Nkv * S));                  \
      const int pastb = first ? 0 : seqlens[b] + 1 - S;                                                       \
      const int tpos = pastb + s;                                                                             \
      if (tpos < 0 || tpos >= Tcap) continue;                                                                 \
      const i64 dst = (((i64)b * Nkv + h) * Tcap + tpos) * D + d;                                             \
      const T* kr = ksrc + ((i64)b * S + s) * kss + (i64)h * D;                                               \
      vdst[dst] = vsrc[((i64)b * S + s) * vss + (i64)h * D + d];                                              \
      if (!(flags & ATT_ROTARY) || d >= rot) {                                                                \
        kdst[dst] = kr[d];                                                                                    \
        continue;                                                                                             \
      }                                                                                                       \
      i64 p = gqa_position(seqlens, pos, flags, first, b, S, s);                                              \
      p = p < 0 ? 0 : (p >= maxPos ? maxPos - 1 : p);                                                         \
      int kk, i0, i1;                                                                                         \
      bool lead;                                                                                              \
      if (flags & ATT_INTERLEAVED) {                                                                          \
        kk = d / 2, i0 = 2 * kk, i1 = i0 + 1, lead = d == i0;                                                 \
      } else {                                                                                                \
        kk = d % half, i0 = kk, i1 = kk + half, lead = d < half;                                              \
      }                                                                                                       \
      float cs = tof(cosc[p * half + kk]), sn = tof(sinc[p * half + kk]);                                     \
      float x0 = tof(kr[i0]), x1 = tof(kr[i1]);                                                               \
      kdst[dst] = fromf<T>(lead ? x0 * cs - x1 * sn : x1 * cs + x0 * sn);                                     \
    }                                                                                                         \
  }
KV_APPEND(carve_kv_append_f32, float)
KV_APPEND(carve_kv_append_f16, __half)
KV_APPEND(carve_kv_append_bf16, bf16)

// carve_gqa_rope_q_<T>: the query rows of a GroupQueryAttention prefill, rotated as
// carve_kv_append rotates the keys, into dst [B, S, N, D] for the tensor-core core
// (carve_a23_mma*, which reads its queries as they are). q rows are qss elements apart, heads D
// apart. bs = B|S, nd = N|D, qr = qss|rot.
#define GQA_ROPE_Q(name, T)                                                                                  \
  extern "C" __global__ void name(T* dst, const T* q, const int* seqlens, const int* totalp, const T* cosc,  \
                                  const T* sinc, const i64* pos, i64 bs, i64 nd, i64 qr, int flags,          \
                                  int maxPos) {                                                              \
    const int B = lo32(bs), S = hi32(bs), N = lo32(nd), D = hi32(nd), qss = lo32(qr), rot = hi32(qr);        \
    const int half = rot / 2;                                                                                \
    const bool first = S == totalp[0];                                                                       \
    const i64 n = (i64)B * S * N * D;                                                                        \
    GRID_STRIDE(t, n) {                                                                                      \
      const int d = (int)(t % D);                                                                            \
      const i64 r = t / D, row = r / N;                                                                      \
      const int h = (int)(r % N), s = (int)(row % S), b = (int)(row / S);                                    \
      const T* qrow = q + row * qss + (i64)h * D;                                                            \
      if (d >= rot) {                                                                                        \
        dst[t] = qrow[d];                                                                                    \
        continue;                                                                                            \
      }                                                                                                      \
      i64 p = gqa_position(seqlens, pos, flags, first, b, S, s);                                             \
      p = p < 0 ? 0 : (p >= maxPos ? maxPos - 1 : p);                                                        \
      int kk, i0, i1;                                                                                        \
      bool lead;                                                                                             \
      if (flags & ATT_INTERLEAVED) {                                                                         \
        kk = d / 2, i0 = 2 * kk, i1 = i0 + 1, lead = d == i0;                                                \
      } else {                                                                                               \
        kk = d % half, i0 = kk, i1 = kk + half, lead = d < half;                                             \
      }                                                                                                      \
      float cs = tof(cosc[p * half + kk]), sn = tof(sinc[p * half + kk]);                                    \
      float x0 = tof(qrow[i0]), x1 = tof(qrow[i1]);                                                          \
      dst[t] = fromf<T>(lead ? x0 * cs - x1 * sn : x1 * cs + x0 * sn);                                       \
    }                                                                                                        \
  }
GQA_ROPE_Q(carve_gqa_rope_q_f16, __half)
GQA_ROPE_Q(carve_gqa_rope_q_bf16, bf16)

// carve_kv_copy_past_<T>: copies the valid past of every (batch, head), positions below past_b,
// from a [B, Nkv, P, D] past into the [B, Nkv, Tcap, D] present (not launched when the two are
// one buffer). bs = B|S, nd = Nkv|D, pt = P|Tcap.
#define KV_PAST(name, T)                                                                                     \
  extern "C" __global__ void name(T* dst, const T* src, const int* seqlens, const int* totalp, i64 bs, i64 nd, \
                                  i64 pt) {                                                                  \
    const int B = lo32(bs), S = hi32(bs), Nkv = lo32(nd), D = hi32(nd), P = lo32(pt), Tcap = hi32(pt);       \
    const bool first = S == totalp[0];                                                                       \
    const i64 n = (i64)B * Nkv * P * D;                                                                      \
    GRID_STRIDE(t, n) {                                                                                      \
      const int d = (int)(t % D);                                                                            \
      const i64 r = t / D;                                                                                   \
      const int j = (int)(r % P), bh = (int)(r / P), b = bh / Nkv;                                           \
      const int pastb = first ? 0 : seqlens[b] + 1 - S;                                                      \
      if (j >= pastb || j >= Tcap) continue;                                                                 \
      dst[((i64)bh * Tcap + j) * D + d] = src[t];                                                            \
    }                                                                                                        \
  }
KV_PAST(carve_kv_copy_past_f32, float)
KV_PAST(carve_kv_copy_past_f16, __half)
KV_PAST(carve_kv_copy_past_bf16, bf16)
