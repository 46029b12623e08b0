// Pad (libs/kernels/cuda/pad.go): modes constant, reflect, edge and wrap over elements of 1, 2, 4
// or 8 bytes, up to 6 dims, one thread an output element mapping each coordinate to the input's
// as the CPU kernel's padIndex (libs/kernels/cpu/pad.go) does. The begin pads are parameters
// when known at selection, else read from the device (the pads tensor, int64, and the opset-18
// axes, int32 or int64): the output's shape was fixed at selection from the same pads, so only
// the begin pads are used and a tensor that disagrees with it is not detected.
#include "common.cuh"

using namespace carve;

enum { PAD_CONSTANT = 0, PAD_REFLECT = 1, PAD_EDGE = 2, PAD_WRAP = 3 };  // flags & PAD_MODE
enum { PAD_MODE = 3, PAD_DEVICE = 4, PAD_AXES64 = 8 };                   // flags of carve_pad_*

namespace {

// pad_index maps coordinate i of a padded dim over n input elements to the input's; false for
// a constant element (outside the input in constant mode, or an empty input dim).
__device__ __forceinline__ bool pad_index(i64& i, i64 n, int mode) {
  if (i >= 0 && i < n) return true;
  if (n == 0) return false;
  switch (mode) {
    case PAD_EDGE:
      i = i < 0 ? 0 : n - 1;
      return true;
    case PAD_WRAP:
      i = (i % n + n) % n;
      return true;
    case PAD_REFLECT: {
      if (n == 1) {
        i = 0;
        return true;
      }
      const i64 period = 2 * (n - 1);
      i = (i % period + period) % period;
      if (i >= n) i = period - i;
      return true;
    }
  }
  return false;
}

}  // namespace

// carve_pad_<E>: out (n elements of out dims o) from x (in dims in), both packed two a long
// long; p0..p5 are the begin pads unless flags has PAD_DEVICE: then pads holds 2 * rank values
// (begin pads first), or 2 * k with k axes at axes. The constant is cval[0] when cval is not
// null, else the low bytes of cbits.
#define PAD(name, E)                                                                                       \
  extern "C" __global__ void name(E* out, const E* x, const E* cval, const i64* pads, const void* axes,  \
                                  i64 n, int rank, int k, int flags, i64 cbits, i64 in01, i64 in23,       \
                                  i64 in45, i64 o01, i64 o23, i64 o45, i64 p0, i64 p1, i64 p2, i64 p3,    \
                                  i64 p4, i64 p5) {                                                       \
    __shared__ i64 pb[6];                                                                                 \
    const i64 ind[6] = {lo32(in01), hi32(in01), lo32(in23), hi32(in23), lo32(in45), hi32(in45)};          \
    const i64 od[6] = {lo32(o01), hi32(o01), lo32(o23), hi32(o23), lo32(o45), hi32(o45)};                 \
    if (threadIdx.x == 0) {                                                                               \
      pb[0] = p0, pb[1] = p1, pb[2] = p2, pb[3] = p3, pb[4] = p4, pb[5] = p5;                             \
      if (flags & PAD_DEVICE) {                                                                           \
        if (axes) {                                                                                       \
          for (int j = 0; j < k; j++) {                                                                   \
            const i64 a = load_index(axes, j, flags & PAD_AXES64, rank);                                  \
            if (a >= 0 && a < rank) pb[a] = pads[j];                                                      \
          }                                                                                               \
        } else {                                                                                          \
          for (int d = 0; d < rank; d++) pb[d] = pads[d];                                                 \
        }                                                                                                 \
      }                                                                                                   \
    }                                                                                                     \
    __syncthreads();                                                                                      \
    E c;                                                                                                  \
    if (cval) c = cval[0];                                                                                \
    else memcpy(&c, &cbits, sizeof(E));                                                                   \
    const int mode = flags & PAD_MODE;                                                                    \
    GRID_STRIDE(i, n) {                                                                                   \
      i64 u = i, off = 0, stride = 1;                                                                     \
      bool in = true;                                                                                     \
      _Pragma("unroll") for (int d = MAXR - 1; d >= 0; d--) {                                              \
        if (d >= rank) continue; /* unrolled: the dims stay in registers */                               \
        i64 q = u / od[d], s = u - q * od[d] - pb[d];                                                     \
        u = q;                                                                                            \
        in = in && pad_index(s, ind[d], mode);                                                            \
        off += s * stride;                                                                                \
        stride *= ind[d];                                                                                 \
      }                                                                                                   \
      out[i] = in ? x[off] : c;                                                                           \
    }                                                                                                     \
  }
PAD(carve_pad_1, unsigned char)
PAD(carve_pad_2, unsigned short)
PAD(carve_pad_4, unsigned)
PAD(carve_pad_8, u64)
