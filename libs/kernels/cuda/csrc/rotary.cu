// Rotary position embedding (com.microsoft and ONNX RotaryEmbedding): rotates the first rot
// elements of every head vector by the angles of its position, in halves (x[k], x[k+rot/2]) or
// interleaved pairs (x[2k], x[2k+1]); the rest of the head is copied.
#include "common.cuh"

using namespace carve;

enum {
  ROT_INTERLEAVED = 1,
  ROT_BSNH = 2,        // input [B, S, N*D]; else [B, N, S, D]
  ROT_POS_SCALAR = 4,  // position_ids [1]: an offset added to s
  ROT_POS = 8,         // position_ids present; else cos/sin are [B, S, rot/2]
};

namespace {

// rotary moves V elements per thread: a unit is V consecutive k of one head (rotate-half) or
// one element (interleaved, V == 1), or V elements of the copied tail.
template <typename T, int V>
__device__ __forceinline__ void rotary(T* out, const T* x, const T* cosc, const T* sinc, const i64* pos, int B,
                                       int S, int N, int D, int rot, int flags, int maxPos) {
  const int half = rot / 2;
  const int units = (half + (D - rot)) / V;  // per head: half/V rotation units, then the tail
  const i64 n = (i64)B * S * N * units;
  GRID_STRIDE(t, n) {
    int u = (int)(t % units);
    i64 row = t / units;  // (b, s, h) in the input's order
    int b, s, h;
    if (flags & ROT_BSNH) {
      h = (int)(row % N);
      s = (int)((row / N) % S);
      b = (int)(row / ((i64)N * S));
    } else {
      s = (int)(row % S);
      h = (int)((row / S) % N);
      b = (int)(row / ((i64)S * N));
    }
    (void)h;
    const i64 base = row * D;
    const int k = u * V;
    if (k >= half) {  // tail copy
      const int d = rot + (k - half);
      if (out != x) {
        float f[V];
        vec_load<T, V>(x + base + d, f);
        vec_store<T, V>(out + base + d, f);
      }
      continue;
    }
    i64 p;
    if (!(flags & ROT_POS)) p = (i64)b * S + s;
    else if (flags & ROT_POS_SCALAR) p = pos[0] + s;
    else p = pos[(i64)b * S + s];
    p = p < 0 ? 0 : (p >= maxPos ? maxPos - 1 : p);
    float c[V], sn[V], x0[V], x1[V];
    vec_load<T, V>(cosc + p * half + k, c);
    vec_load<T, V>(sinc + p * half + k, sn);
    if (flags & ROT_INTERLEAVED) {  // V == 1
      x0[0] = tof(x[base + 2 * k]);
      x1[0] = tof(x[base + 2 * k + 1]);
      out[base + 2 * k] = fromf<T>(x0[0] * c[0] - x1[0] * sn[0]);
      out[base + 2 * k + 1] = fromf<T>(x1[0] * c[0] + x0[0] * sn[0]);
      continue;
    }
    vec_load<T, V>(x + base + k, x0);
    vec_load<T, V>(x + base + k + half, x1);
    float y0[V], y1[V];
#pragma unroll
    for (int e = 0; e < V; e++) {
      y0[e] = x0[e] * c[e] - x1[e] * sn[e];
      y1[e] = x1[e] * c[e] + x0[e] * sn[e];
    }
    vec_store<T, V>(out + base + k, y0);
    vec_store<T, V>(out + base + k + half, y1);
  }
}

template <typename T>
__device__ __forceinline__ bool al16(const T* p) {
  return ((uintptr_t)p & 15) == 0;
}

}  // namespace

// carve_rotary_<T>: bs = B | S << 32, nd = N | D << 32; pos may be null (ROT_POS unset).
#define ROTARY(name, T)                                                                                 \
  extern "C" __global__ void name(T* out, const T* x, const T* cosc, const T* sinc, const i64* pos,     \
                                  i64 bs, i64 nd, int rot, int flags, int maxPos) {                     \
    constexpr int V = 16 / sizeof(T);                                                                   \
    const int B = lo32(bs), S = hi32(bs), N = lo32(nd), D = hi32(nd), half = rot / 2;                  \
    bool vec = !(flags & ROT_INTERLEAVED) && half % V == 0 && (D - rot) % V == 0 && D % V == 0 &&       \
               al16(out) && al16(x) && al16(cosc) && al16(sinc);                                        \
    if (vec) rotary<T, V>(out, x, cosc, sinc, pos, B, S, N, D, rot, flags, maxPos);                     \
    else rotary<T, 1>(out, x, cosc, sinc, pos, B, S, N, D, rot, flags, maxPos);                         \
  }
ROTARY(carve_rotary_f32, float)
ROTARY(carve_rotary_f16, __half)
ROTARY(carve_rotary_bf16, bf16)
