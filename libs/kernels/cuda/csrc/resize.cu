// Resize and Upsample (libs/kernels/cuda/resize.go): nearest over up to 6 dims, linear
// (bilinear over the last two dims, the others unchanged), one thread an output element. Source
// coordinates are computed in double with the CPU kernel's formulas and order of operations
// (libs/kernels/cpu/resize.go; no contraction into fused multiply-adds), so that nearest picks
// the same element; linear interpolates in float32. A source coordinate is clamped into the
// input.
#include "common.cuh"

using namespace carve;

enum { RS_LINEAR = 1 };  // flags & 15: the mode
enum { CT_HALF_PIXEL = 0, CT_HALF_PIXEL_SYMMETRIC = 1, CT_PYTORCH_HALF_PIXEL = 2, CT_ALIGN_CORNERS = 3, CT_ASYMMETRIC = 4 };  // flags >> 4 & 15
enum { NM_ROUND_PREFER_FLOOR = 0, NM_ROUND_PREFER_CEIL = 1, NM_FLOOR = 2, NM_CEIL = 3 };  // flags >> 8 & 15

namespace {

// source maps output coordinate o of a dim of in -> out elements at scale s to the input's.
__device__ __forceinline__ double source(i64 o, i64 in, i64 out, double s, int coord) {
  const double x = (double)o;
  switch (coord) {
    case CT_ASYMMETRIC:
      return x / s;
    case CT_ALIGN_CORNERS:
      if (out == 1) return 0;
      return __dmul_rn(x, (double)(in - 1)) / (double)(out - 1);
    case CT_PYTORCH_HALF_PIXEL:
      if (out == 1) return 0;
      return (x + 0.5) / s - 0.5;
    case CT_HALF_PIXEL_SYMMETRIC: {
      const double adj = (double)out / __dmul_rn(s, (double)in), center = (double)in / 2;
      return __dadd_rn(__dmul_rn(center, 1 - adj), (x + 0.5) / s) - 0.5;
    }
  }
  return (x + 0.5) / s - 0.5;  // half_pixel
}

// nearest rounds a source coordinate by the nearest mode and clamps it into [0, in).
__device__ __forceinline__ i64 nearest(double x, i64 in, int mode) {
  double i;
  switch (mode) {
    case NM_FLOOR: i = floor(x); break;
    case NM_CEIL: i = ceil(x); break;
    case NM_ROUND_PREFER_CEIL: i = floor(x + 0.5); break;
    default: i = ceil(x - 0.5); break;  // round_prefer_floor
  }
  i64 r = (i64)i;
  return r < 0 ? 0 : (r > in - 1 ? in - 1 : r);
}

// taps is a source coordinate's two linear taps and the second's weight, clamped into [0, in).
__device__ __forceinline__ void taps(double x, i64 in, i64& i0, i64& i1, float& w) {
  x = fmax(0.0, fmin(x, (double)(in - 1)));
  i0 = (i64)x;
  if (i0 > in - 1) i0 = in - 1;
  i1 = i0 + 1 > in - 1 ? in - 1 : i0 + 1;
  w = (float)(x - (double)i0);
}

}  // namespace

// carve_resize_<T>: n output elements of dims o from x of dims in (rank <= 6, packed two a long
// long). The scale of dim d is sd unless scales (float32, on the device) is not null and the
// 4-bit field d of sidx names an element j + 1 of it that is positive: then scales[j].
#define RESIZE(name, T)                                                                                    \
  extern "C" __global__ void name(T* out, const T* x, const float* scales, i64 n, int rank, int flags,    \
                                  i64 in01, i64 in23, i64 in45, i64 o01, i64 o23, i64 o45, i64 sidx,      \
                                  double s0, double s1, double s2, double s3, double s4, double s5) {     \
    __shared__ double sc[6];                                                                              \
    __shared__ i64 ind[6], od[6]; /* in shared memory: the loop over dims below stays rolled */           \
    if (threadIdx.x < 6) {                                                                                \
      const int d = threadIdx.x, j = (int)((sidx >> (4 * d)) & 15), h = d & 1;                            \
      const i64 ip = d < 2 ? in01 : d < 4 ? in23 : in45, op = d < 2 ? o01 : d < 4 ? o23 : o45;           \
      ind[d] = h ? hi32(ip) : lo32(ip);                                                                   \
      od[d] = h ? hi32(op) : lo32(op);                                                                    \
      double s = d == 0 ? s0 : d == 1 ? s1 : d == 2 ? s2 : d == 3 ? s3 : d == 4 ? s4 : s5;                \
      if (scales && j > 0 && d < rank) {                                                                  \
        const float v = scales[j - 1];                                                                    \
        if (v > 0) s = v;                                                                                 \
      }                                                                                                   \
      sc[d] = s;                                                                                          \
    }                                                                                                     \
    __syncthreads();                                                                                      \
    const int coord = flags >> 4 & 15, nm = flags >> 8 & 15;                                              \
    const bool linear = (flags & 15) == RS_LINEAR;                                                        \
    const int lin0 = linear ? (rank >= 2 ? rank - 2 : 0) : rank; /* the first interpolated dim */         \
    GRID_STRIDE(i, n) {                                                                                   \
      i64 u = i, off = 0, stride = 1;                                                                     \
      i64 y0 = 0, y1 = 0, x0 = 0, x1 = 0, ys = 0, xs = 0;                                                 \
      float wy = 0.f, wx = 0.f;                                                                           \
      for (int d = rank - 1; d >= 0; d--) {                                                               \
        const i64 q = u / od[d], c = u - q * od[d];                                                       \
        u = q;                                                                                            \
        if (d >= lin0) {                                                                                  \
          if (d == rank - 1) {                                                                            \
            taps(source(c, ind[d], od[d], sc[d], coord), ind[d], x0, x1, wx);                             \
            xs = stride;                                                                                  \
          } else {                                                                                        \
            taps(source(c, ind[d], od[d], sc[d], coord), ind[d], y0, y1, wy);                             \
            ys = stride;                                                                                  \
          }                                                                                               \
        } else if (linear) {                                                                              \
          off += c * stride; /* a dim linear mode leaves unchanged */                                     \
        } else {                                                                                          \
          off += nearest(source(c, ind[d], od[d], sc[d], coord), ind[d], nm) * stride;                    \
        }                                                                                                 \
        stride *= ind[d];                                                                                 \
      }                                                                                                   \
      if (!linear) {                                                                                      \
        out[i] = x[off];                                                                                  \
        continue;                                                                                         \
      }                                                                                                   \
      const T* r0 = x + off + y0 * ys;                                                                    \
      const T* r1 = x + off + y1 * ys;                                                                    \
      const float a0 = tof(r0[x0 * xs]), a1 = tof(r0[x1 * xs]);                                           \
      const float b0 = tof(r1[x0 * xs]), b1 = tof(r1[x1 * xs]);                                           \
      const float top = a0 + (a1 - a0) * wx, bot = b0 + (b1 - b0) * wx;                                   \
      out[i] = fromf<T>(top + (bot - top) * wy);                                                          \
    }                                                                                                     \
  }
RESIZE(carve_resize_f32, float)
RESIZE(carve_resize_f16, __half)
RESIZE(carve_resize_bf16, bf16)
