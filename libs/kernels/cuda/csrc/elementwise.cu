// Elementwise kernels: unary, binary and ternary ops with numpy broadcasting, comparisons and
// logic, Cast, Where, strided copies (Expand, Transpose, Tile, Slice views, Concat, Split), fills.
//
// One generic design: an output of n elements in row-major order, operands reached through a
// Layout (per-dim element strides, 0 where broadcast; see common.cuh). When the layout has rank 1,
// every operand is contiguous or a scalar and every address is 16-byte aligned, threads move
// 16-byte vectors. Floating-point ops compute in float32 (f16/bf16 are widened on load and
// rounded to nearest even once on store), integers in their own type.
#include "common.cuh"
#include "ops.cuh"

using namespace carve;

namespace {

__device__ __forceinline__ float sigmoidf(float x) {
  if (x >= 0.f) return 1.f / (1.f + expf(-x));
  float e = expf(x);
  return e / (1.f + e);
}

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }

__device__ __forceinline__ float gelu_tanh(float x) {
  return 0.5f * x * (1.f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

// apply_f is every op with a float result.
__device__ __forceinline__ float apply_f(int op, float x, float y, float z, float alpha, float beta) {
  switch (op) {
    case EW_ABS: return fabsf(x);
    case EW_NEG: return -x;
    case EW_SIGN: return x > 0.f ? 1.f : (x < 0.f ? -1.f : x);
    case EW_RELU: return x > 0.f ? x : 0.f * x;
    case EW_SQRT: return sqrtf(x);
    case EW_RECIP: return 1.f / x;
    case EW_EXP: return expf(x);
    case EW_LOG: return logf(x);
    case EW_TANH: return tanhf(x);
    case EW_SIGMOID: return sigmoidf(x);
    case EW_SIN: return sinf(x);
    case EW_COS: return cosf(x);
    case EW_TAN: return tanf(x);
    case EW_ATAN: return atanf(x);
    case EW_ERF: return erff(x);
    case EW_FLOOR: return floorf(x);
    case EW_CEIL: return ceilf(x);
    case EW_ROUND: return rintf(x);
    case EW_SOFTPLUS: return x > 30.f ? x : log1pf(expf(x));
    case EW_SOFTSIGN: return x / (1.f + fabsf(x));
    case EW_GELU: return gelu_erf(x);
    case EW_GELU_TANH: return gelu_tanh(x);
    case EW_LEAKY_RELU: return x >= 0.f ? x : alpha * x;
    case EW_ELU: return x >= 0.f ? x : alpha * (expf(x) - 1.f);
    case EW_HARD_SIGMOID: return fmaxf(0.f, fminf(1.f, alpha * x + beta));
    case EW_QUICK_GELU: return x * sigmoidf(alpha * x);
    case EW_SILU: return x * sigmoidf(x);
    case EW_HARD_SWISH: return x * fmaxf(0.f, fminf(1.f, x / 6.f + 0.5f));
    case EW_IDENTITY: return x;
    case EW_SCALE: return x * alpha;
    case EW_ADD: return x + y;
    case EW_SUB: return x - y;
    case EW_MUL: return x * y;
    case EW_DIV: return x / y;
    case EW_MOD:
    case EW_FMOD: return fmodf(x, y);
    case EW_MAX: return (x != x || x > y) ? x : y;
    case EW_MIN: return (x != x || x < y) ? x : y;
    case EW_POW:
      if (y == 2.f) return x * x;
      return powf(x, y);
    case EW_BIAS_GELU: return gelu_erf(x + y);
    case EW_BIAS_GELU_TANH: return gelu_tanh(x + y);
    case EW_ADD3: return x + y + z;
    case EW_CLIP: {  // std::min(std::max(x, lo), hi), as onnxruntime: NaN x stays, lo > hi gives hi
      const float m = x < y ? y : x;
      return m > z ? z : m;
    }
  }
  return __int_as_float(0x7fc00000);
}

// apply_b is every op with a bool result on float operands.
__device__ __forceinline__ bool apply_b(int op, float x, float y, float alpha, float beta) {
  switch (op) {
    case EW_EQ: return x == y;
    case EW_LT: return x < y;
    case EW_LE: return x <= y;
    case EW_GT: return x > y;
    case EW_GE: return x >= y;
    case EW_ISNAN: return x != x;
    case EW_ISINF: return (beta != 0.f && x == INFINITY) || (alpha != 0.f && x == -INFINITY);
  }
  return false;
}

template <typename T>
__device__ __forceinline__ bool aligned16(const T* p) {
  return ((uintptr_t)p & 15) == 0;
}

template <typename T>
__device__ __forceinline__ float ld_b(const void* b, i64 i, int bdt) {
  return bdt ? (float)load_f64(b, i, bdt) : tof(((const T*)b)[i]);
}

// ew_float runs op over n elements of float type T. op's bits 16 and up are the dtype of b
// when it differs from T (Pow's exponent); 0 otherwise.
template <typename T>
__device__ __forceinline__ void ew_float(void* out, const T* a, const void* b, const T* c, i64 n, int opx,
                                         float alpha, float beta, const Layout& L) {
  const int op = opx & 0xffff, bdt = opx >> 16;
  const bool clip = op == EW_CLIP;
  const float ydef = clip ? -INFINITY : 0.f, zdef = clip ? INFINITY : 0.f;
  if (op < EW_CMP_FIRST) {
    T* o = (T*)out;
    constexpr int V = 16 / sizeof(T);
    bool flat = L.rank == 1 && bdt == 0 && (L.st[0][0] == 1 || L.st[0][0] == 0) &&
                (L.st[1][0] == 1 || L.st[1][0] == 0) && (L.st[2][0] == 1 || L.st[2][0] == 0);
    bool vec = flat && L.st[0][0] == 1 && aligned16(o) && aligned16(a) &&
               (b == nullptr || L.st[1][0] == 0 || aligned16((const T*)b)) &&
               (c == nullptr || L.st[2][0] == 0 || aligned16(c));
    if (vec) {
      const bool bv = b != nullptr && L.st[1][0] == 1, cv = c != nullptr && L.st[2][0] == 1;
      const float bs = (b != nullptr && !bv) ? tof(((const T*)b)[0]) : ydef;
      const float cs = (c != nullptr && !cv) ? tof(c[0]) : zdef;
      const i64 nv = n / V;
      GRID_STRIDE(v, nv) {
        union U { uint4 u; T e[V]; } xa, xb, xc, r;
        xa.u = ((const uint4*)a)[v];
        if (bv) xb.u = ((const uint4*)b)[v];
        if (cv) xc.u = ((const uint4*)c)[v];
#pragma unroll
        for (int k = 0; k < V; k++) {
          float y = bv ? tof(xb.e[k]) : bs, z = cv ? tof(xc.e[k]) : cs;
          r.e[k] = fromf<T>(apply_f(op, tof(xa.e[k]), y, z, alpha, beta));
        }
        ((uint4*)o)[v] = r.u;
      }
      GRID_STRIDE(j, n - nv * V) {
        i64 i = nv * V + j;
        float y = b ? (bv ? tof(((const T*)b)[i]) : bs) : ydef;
        float z = c ? (cv ? tof(c[i]) : cs) : zdef;
        o[i] = fromf<T>(apply_f(op, tof(a[i]), y, z, alpha, beta));
      }
      return;
    }
    GRID_STRIDE(i, n) {
      i64 oa, ob, oc;
      L.offsets(i, oa, ob, oc);
      float y = b ? ld_b<T>(b, ob, bdt) : ydef;
      float z = c ? tof(c[oc]) : zdef;
      o[i] = fromf<T>(apply_f(op, tof(a[oa]), y, z, alpha, beta));
    }
    return;
  }
  unsigned char* o = (unsigned char*)out;
  GRID_STRIDE(i, n) {
    i64 oa, ob, oc;
    L.offsets(i, oa, ob, oc);
    float y = b ? ld_b<T>(b, ob, bdt) : 0.f;
    o[i] = apply_b(op, tof(a[oa]), y, alpha, beta) ? 1 : 0;
  }
}

// swiglu runs out = a * sigmoid(alpha * a) * b over n contiguous elements, or Swish's a *
// sigmoid(alpha * a) where b is null (ONNX Swish and SwiGLU, carve's dev.carve.SwiGLU). A kernel
// of its own rather than an op of ew_float: no op switch, no layout and, fused, no second
// launch nor the Swish's output written and read back. 16-byte vectors when every pointer is
// aligned. It may be launched dependent (common.cuh): it waits first and lets its successor
// start at once.
template <typename T>
__device__ __forceinline__ float silu_gate(float x, float alpha) {
  return x / (1.f + expf(-alpha * x));  // x -> -inf: x / inf = -0, as x * sigmoid(x)
}

template <typename T>
__device__ __forceinline__ void swiglu(T* out, const T* a, const T* b, i64 n, float alpha) {
  constexpr int V = 16 / sizeof(T);
  pdl_trigger();
  pdl_wait();
  const bool vec = aligned16(out) && aligned16(a) && (b == nullptr || aligned16(b));
  const i64 nv = vec ? n / V : 0;
  GRID_STRIDE(v, nv) {
    union U { uint4 u; T e[V]; } xa, xb, r;
    xa.u = ((const uint4*)a)[v];
    if (b != nullptr) xb.u = ((const uint4*)b)[v];
#pragma unroll
    for (int k = 0; k < V; k++) {
      float f = silu_gate<T>(tof(xa.e[k]), alpha);
      if (b != nullptr) f *= tof(xb.e[k]);
      r.e[k] = fromf<T>(f);
    }
    ((uint4*)out)[v] = r.u;
  }
  GRID_STRIDE(j, n - nv * V) {
    const i64 i = nv * V + j;
    float f = silu_gate<T>(tof(a[i]), alpha);
    if (b != nullptr) f *= tof(b[i]);
    out[i] = fromf<T>(f);
  }
}

// apply_i is integer arithmetic; division by zero gives 0 (ONNX leaves it undefined).
template <typename T>
__device__ __forceinline__ T apply_i(int op, T x, T y, T z) {
  switch (op) {
    case EW_ABS: return x < 0 ? -x : x;
    case EW_NEG: return -x;
    case EW_SIGN: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case EW_RELU: return x > 0 ? x : 0;
    case EW_IDENTITY: return x;
    case EW_ADD: return x + y;
    case EW_SUB: return x - y;
    case EW_MUL: return x * y;
    case EW_DIV: return y == 0 ? 0 : x / y;
    case EW_FMOD: return y == 0 ? 0 : x % y;
    case EW_MOD: {
      if (y == 0) return 0;
      T r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return r;
    }
    case EW_MAX: return x > y ? x : y;
    case EW_MIN: return x < y ? x : y;
    case EW_POW: return (T)pow((double)x, (double)y);
    case EW_ADD3: return x + y + z;
    case EW_CLIP: {  // min(max(x, lo), hi): lo > hi gives hi
      const T m = x < y ? y : x;
      return m > z ? z : m;
    }
  }
  return 0;
}

template <typename T>
__device__ __forceinline__ bool apply_ib(int op, T x, T y) {
  switch (op) {
    case EW_EQ: return x == y;
    case EW_LT: return x < y;
    case EW_LE: return x <= y;
    case EW_GT: return x > y;
    case EW_GE: return x >= y;
  }
  return false;
}

// ew_int runs op over integers of type T. Clip's absent bounds are the type's limits; Pow's
// exponent may be another type (op bits 16 and up), computed in double and truncated.
template <typename T>
__device__ __forceinline__ void ew_int(void* out, const T* a, const void* b, const T* c, i64 n, int opx,
                                       T lo, T hi, const Layout& L) {
  const int op = opx & 0xffff, bdt = opx >> 16;
  if (op < EW_CMP_FIRST) {
    T* o = (T*)out;
    GRID_STRIDE(i, n) {
      i64 oa, ob, oc;
      L.offsets(i, oa, ob, oc);
      T x = a[oa];
      T y = b ? (bdt ? (T)load_i64(b, ob, bdt) : ((const T*)b)[ob]) : (op == EW_CLIP ? lo : 0);
      T z = c ? c[oc] : (op == EW_CLIP ? hi : 0);
      if (op == EW_POW && bdt != 0 && is_float_dt(bdt)) {
        o[i] = (T)pow((double)x, load_f64(b, ob, bdt));
        continue;
      }
      o[i] = apply_i<T>(op, x, y, z);
    }
    return;
  }
  unsigned char* o = (unsigned char*)out;
  GRID_STRIDE(i, n) {
    i64 oa, ob, oc;
    L.offsets(i, oa, ob, oc);
    o[i] = apply_ib<T>(op, a[oa], ((const T*)b)[ob]) ? 1 : 0;
  }
}

}  // namespace

#define EW_FLOAT(name, T)                                                                         \
  extern "C" __global__ void name(void* out, const T* a, const void* b, const T* c, i64 n, int op, \
                                  float alpha, float beta, LAYOUT_PARAMS) {                       \
    LAYOUT_MAKE(L);                                                                               \
    ew_float<T>(out, a, b, c, n, op, alpha, beta, L);                                             \
  }
EW_FLOAT(carve_ew_f32, float)
EW_FLOAT(carve_ew_f16, __half)
EW_FLOAT(carve_ew_bf16, bf16)

#define SWIGLU(name, T)                                                                         \
  extern "C" __global__ void name(T* out, const T* a, const T* b, i64 n, float alpha) { \
    swiglu<T>(out, a, b, n, alpha);                                                       \
  }
SWIGLU(carve_swiglu_f32, float)
SWIGLU(carve_swiglu_f16, __half)
SWIGLU(carve_swiglu_bf16, bf16)

extern "C" __global__ void carve_ew_i64(void* out, const i64* a, const void* b, const i64* c, i64 n, int op,
                                        float alpha, float beta, LAYOUT_PARAMS) {
  LAYOUT_MAKE(L);
  ew_int<i64>(out, a, b, c, n, op, (i64)0x8000000000000000LL, (i64)0x7fffffffffffffffLL, L);
}

extern "C" __global__ void carve_ew_i32(void* out, const int* a, const void* b, const int* c, i64 n, int op,
                                        float alpha, float beta, LAYOUT_PARAMS) {
  LAYOUT_MAKE(L);
  ew_int<int>(out, a, b, c, n, op, (int)0x80000000, 0x7fffffff, L);
}

// carve_ew_bool is the logical ops and Equal on bool operands (one byte each, 0 or 1).
extern "C" __global__ void carve_ew_bool(unsigned char* out, const unsigned char* a, const unsigned char* b,
                                         const unsigned char* c, i64 n, int op, float alpha, float beta,
                                         LAYOUT_PARAMS) {
  LAYOUT_MAKE(L);
  GRID_STRIDE(i, n) {
    i64 oa, ob, oc;
    L.offsets(i, oa, ob, oc);
    bool x = a[oa] != 0, y = b ? b[ob] != 0 : false, r = false;
    switch (op) {
      case EW_AND: r = x && y; break;
      case EW_OR: r = x || y; break;
      case EW_XOR: r = x != y; break;
      case EW_EQ: r = x == y; break;
      case EW_NOT: r = !x; break;
    }
    out[i] = r ? 1 : 0;
  }
}

// carve_cast converts n contiguous elements from dtype `from` to dtype `to` (ONNX codes) with C
// semantics: floats to integers truncate toward zero, anything to bool is x != 0.
extern "C" __global__ void carve_cast(void* out, const void* a, i64 n, int from, int to) {
  const bool ffrom = is_float_dt(from);
  GRID_STRIDE(i, n) {
    if (to == DT_BOOL) {
      bool nz = ffrom ? load_f64(a, i, from) != 0.0 : load_i64(a, i, from) != 0;
      ((unsigned char*)out)[i] = nz ? 1 : 0;
      continue;
    }
    if (is_float_dt(to)) {
      // integers go through int64 -> float32 (f32, f16, bf16) or -> double (f64), as a C cast
      // does; floats through float32 unless either side is double.
      switch (to) {
        case DT_F64:
          ((double*)out)[i] = ffrom ? load_f64(a, i, from) : (double)load_i64(a, i, from);
          break;
        default: {
          float f;
          if (from == DT_F64) f = (float)((const double*)a)[i];
          else if (ffrom) f = (float)load_f64(a, i, from);
          else f = (float)load_i64(a, i, from);
          if (to == DT_F32) ((float*)out)[i] = f;
          else if (to == DT_F16) ((__half*)out)[i] = __float2half_rn(f);
          else ((bf16*)out)[i] = __float2bfloat16_rn(f);
        }
      }
      continue;
    }
    i64 v = ffrom ? (i64)load_f64(a, i, from) : load_i64(a, i, from);
    switch (to) {
      case DT_I64: case DT_U64: ((i64*)out)[i] = v; break;
      case DT_I32: case DT_U32: ((int*)out)[i] = (int)v; break;
      case DT_I16: case DT_U16: ((short*)out)[i] = (short)v; break;
      case DT_I8: case DT_U8: ((signed char*)out)[i] = (signed char)v; break;
    }
  }
}

// carve_copy_<E>: out[layout b] = src[layout a] for every index of the layout's shape, moving
// E-byte units. Expand, Transpose, Tile, Concat, Split and plain copies use it.
#define COPY(name, E)                                                               \
  extern "C" __global__ void name(E* out, const E* src, i64 n, LAYOUT_PARAMS) {    \
    LAYOUT_MAKE(L);                                                                 \
    if (L.rank == 1 && L.st[0][0] == 1 && L.st[1][0] == 1) {                        \
      GRID_STRIDE(i, n) out[i] = src[i];                                            \
      return;                                                                       \
    }                                                                               \
    GRID_STRIDE(i, n) {                                                             \
      i64 oa, ob, oc;                                                               \
      L.offsets(i, oa, ob, oc);                                                     \
      out[ob] = src[oa];                                                            \
    }                                                                               \
  }
COPY(carve_copy_1, unsigned char)
COPY(carve_copy_2, unsigned short)
COPY(carve_copy_4, unsigned)
COPY(carve_copy_8, u64)
COPY(carve_copy_16, uint4)

// carve_where_<E>: out[i] = cond[a] ? x[b] : y[c], with three-way broadcasting.
#define WHERE(name, E)                                                                                   \
  extern "C" __global__ void name(E* out, const unsigned char* cond, const E* x, const E* y, i64 n, \
                                  LAYOUT_PARAMS) {                                                      \
    LAYOUT_MAKE(L);                                                                                      \
    GRID_STRIDE(i, n) {                                                                                  \
      i64 oa, ob, oc;                                                                                    \
      L.offsets(i, oa, ob, oc);                                                                          \
      out[i] = cond[oa] ? x[ob] : y[oc];                                                                 \
    }                                                                                                    \
  }
WHERE(carve_where_1, unsigned char)
WHERE(carve_where_2, unsigned short)
WHERE(carve_where_4, unsigned)
WHERE(carve_where_8, u64)

// carve_where_rows_<E>: carve_where_<E> 16 bytes at a time, for layouts whose innermost dim is
// a multiple of VE = 16 / sizeof(E) elements and along which every operand is contiguous or
// broadcast (stride 1 or 0): one walk of the layout per VE elements instead of per element.
// out, x and y are 16-byte aligned (the Go side falls back to carve_where_<E> otherwise); the
// condition is read a byte at a time.
namespace {

// contig's bits 0, 1 and 2: the condition, x and y are contiguous along the innermost dim (else
// broadcast). They come as a parameter: reading the Layout's strides at the dim rank - 1 puts
// the whole Layout in local memory (176 bytes of stack, 20 us for a 12 MB Where on an H200).
template <typename E>
__device__ __forceinline__ void where_rows(E* out, const unsigned char* cond, const E* x, const E* y, i64 n,
                                           int contig, const Layout& L) {
  constexpr int VE = 16 / sizeof(E);
  union Vec {
    uint4 u;
    E e[VE];
  };
  const bool cv = contig & 1, xv = contig & 2, yv = contig & 4;
  GRID_STRIDE(v, n / VE) {
    i64 oa, ob, oc;
    L.offsets(v * VE, oa, ob, oc);
    Vec a, b, o;
    if (xv) {
      a.u = *(const uint4*)(x + ob);
    } else {
#pragma unroll
      for (int k = 0; k < VE; k++) a.e[k] = x[ob];
    }
    if (yv) {
      b.u = *(const uint4*)(y + oc);
    } else {
#pragma unroll
      for (int k = 0; k < VE; k++) b.e[k] = y[oc];
    }
#pragma unroll
    for (int k = 0; k < VE; k++) o.e[k] = cond[cv ? oa + k : oa] ? a.e[k] : b.e[k];
    *(uint4*)(out + v * VE) = o.u;
  }
}

}  // namespace

#define WHERE_ROWS(name, E)                                                                              \
  extern "C" __global__ void name(E* out, const unsigned char* cond, const E* x, const E* y, i64 n, \
                                  int contig, LAYOUT_PARAMS) {                                          \
    LAYOUT_MAKE(L);                                                                                      \
    where_rows(out, cond, x, y, n, contig, L);                                                           \
  }
WHERE_ROWS(carve_where_rows_1, unsigned char)
WHERE_ROWS(carve_where_rows_2, unsigned short)
WHERE_ROWS(carve_where_rows_4, unsigned)
WHERE_ROWS(carve_where_rows_8, u64)

// carve_fill_<E>: n units of the value in bits' low E bytes.
#define FILL(name, E)                                                  \
  extern "C" __global__ void name(E* out, i64 n, i64 bits) {           \
    E v = (E)(u64)bits;                                                \
    GRID_STRIDE(i, n) out[i] = v;                                      \
  }
FILL(carve_fill_1, unsigned char)
FILL(carve_fill_2, unsigned short)
FILL(carve_fill_4, unsigned)
FILL(carve_fill_8, u64)

// carve_store_words writes nbytes (<= 128) given as up to sixteen 8-byte words: the values of
// Shape, Size and small Constants, fixed when the kernel was selected.
extern "C" __global__ void carve_store_words(unsigned char* out, int nbytes, i64 w0, i64 w1, i64 w2, i64 w3,
                                             i64 w4, i64 w5, i64 w6, i64 w7, i64 w8, i64 w9, i64 w10,
                                             i64 w11, i64 w12, i64 w13, i64 w14, i64 w15) {
  i64 w[16] = {w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15};
  for (int i = threadIdx.x; i < nbytes; i += blockDim.x) {
    out[i] = (unsigned char)((u64)w[i / 8] >> (8 * (i % 8)));
  }
}
