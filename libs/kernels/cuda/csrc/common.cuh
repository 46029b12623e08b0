// Device helpers shared by carve's kernels: element types and their conversions to float,
// 16-byte vectors, warp and block reductions, packed parameters and strided layouts.
//
// Parameter conventions (launch.go passes each parameter with its own size, at most 32):
//   - pointers are `T*` (PtrArg), counts and strides `long long` (Int64Arg), flags `int`
//     (Int32Arg), scalars `float` (Float32Arg);
//   - two non-negative 32-bit values travel in one `long long` as lo | hi << 32 (pack32 in Go,
//     lo32/hi32 here);
//   - a strided layout of up to 6 dims over up to 3 operands is LAYOUT_PARAMS: the rank, the
//     dims packed two per long long, and each operand's element strides (0 where broadcast).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

typedef long long i64;
typedef unsigned long long u64;
typedef __nv_bfloat16 bf16;

namespace carve {

__device__ __forceinline__ int lo32(i64 v) { return (int)(unsigned)(u64)v; }
__device__ __forceinline__ int hi32(i64 v) { return (int)(unsigned)((u64)v >> 32); }

// ---------------------------------------------------------------- element conversions

__device__ __forceinline__ float tof(float x) { return x; }
__device__ __forceinline__ float tof(__half x) { return __half2float(x); }
__device__ __forceinline__ float tof(bf16 x) { return __bfloat162float(x); }

template <typename T> __device__ __forceinline__ T fromf(float x);
template <> __device__ __forceinline__ float fromf<float>(float x) { return x; }
template <> __device__ __forceinline__ __half fromf<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ bf16 fromf<bf16>(float x) { return __float2bfloat16_rn(x); }

// ONNX dtype codes (graph.DType), for kernels that take the type at run time.
enum DType {
  DT_F32 = 1, DT_U8 = 2, DT_I8 = 3, DT_U16 = 4, DT_I16 = 5, DT_I32 = 6, DT_I64 = 7,
  DT_BOOL = 9, DT_F16 = 10, DT_F64 = 11, DT_U32 = 12, DT_U64 = 13, DT_BF16 = 16,
};

// Loads element i of a tensor of dtype dt as double (integers exactly up to 2^53).
__device__ __forceinline__ double load_f64(const void* p, i64 i, int dt) {
  switch (dt) {
    case DT_F32: return ((const float*)p)[i];
    case DT_F64: return ((const double*)p)[i];
    case DT_F16: return __half2float(((const __half*)p)[i]);
    case DT_BF16: return __bfloat162float(((const bf16*)p)[i]);
    case DT_I64: return (double)((const i64*)p)[i];
    case DT_I32: return ((const int*)p)[i];
    case DT_I16: return ((const short*)p)[i];
    case DT_I8: return ((const signed char*)p)[i];
    case DT_U8: case DT_BOOL: return ((const unsigned char*)p)[i];
    case DT_U16: return ((const unsigned short*)p)[i];
    case DT_U32: return ((const unsigned*)p)[i];
    case DT_U64: return (double)((const u64*)p)[i];
  }
  return 0;
}

// Loads element i of an integer or bool tensor as i64 (floats truncated toward zero).
__device__ __forceinline__ i64 load_i64(const void* p, i64 i, int dt) {
  switch (dt) {
    case DT_I64: return ((const i64*)p)[i];
    case DT_I32: return ((const int*)p)[i];
    case DT_I16: return ((const short*)p)[i];
    case DT_I8: return ((const signed char*)p)[i];
    case DT_U8: case DT_BOOL: return ((const unsigned char*)p)[i];
    case DT_U16: return ((const unsigned short*)p)[i];
    case DT_U32: return ((const unsigned*)p)[i];
    case DT_U64: return (i64)((const u64*)p)[i];
  }
  return (i64)load_f64(p, i, dt);
}

__device__ __forceinline__ bool is_float_dt(int dt) {
  return dt == DT_F32 || dt == DT_F64 || dt == DT_F16 || dt == DT_BF16;
}

// Reads an index (int32 or int64, by is64) and resolves a negative one against dim.
__device__ __forceinline__ i64 load_index(const void* p, i64 i, int is64, i64 dim) {
  i64 v = is64 ? ((const i64*)p)[i] : (i64)((const int*)p)[i];
  return v < 0 ? v + dim : v;
}

// ---------------------------------------------------------------- reductions

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ double warp_sum_d(double v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// block_sum returns the sum over the block to every thread. scratch holds 32 floats; the
// block's size is a multiple of 32. It synchronizes twice, so scratch may be reused after it.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = lane < nw ? scratch[lane] : 0.f;
  return warp_sum(r);
}

__device__ __forceinline__ float block_max(float v, float* scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = lane < nw ? scratch[lane] : -INFINITY;
  return warp_max(r);
}

// ---------------------------------------------------------------- strided layouts

#define MAXR 6

// LAYOUT_PARAMS is the kernel parameter list of a Layout; LAYOUT_MAKE builds it inside a kernel.
#define LAYOUT_PARAMS                                                                         \
  int rank, i64 d01, i64 d23, i64 d45, i64 sa0, i64 sa1, i64 sa2, i64 sa3, i64 sa4, i64 sa5,  \
      i64 sb0, i64 sb1, i64 sb2, i64 sb3, i64 sb4, i64 sb5, i64 sc0, i64 sc1, i64 sc2, i64 sc3, \
      i64 sc4, i64 sc5
#define LAYOUT_MAKE(L)                                                                       \
  carve::Layout L;                                                                           \
  L.rank = rank;                                                                             \
  L.dims[0] = carve::lo32(d01); L.dims[1] = carve::hi32(d01);                                \
  L.dims[2] = carve::lo32(d23); L.dims[3] = carve::hi32(d23);                                \
  L.dims[4] = carve::lo32(d45); L.dims[5] = carve::hi32(d45);                                \
  L.st[0][0] = sa0; L.st[0][1] = sa1; L.st[0][2] = sa2; L.st[0][3] = sa3; L.st[0][4] = sa4; \
  L.st[0][5] = sa5;                                                                          \
  L.st[1][0] = sb0; L.st[1][1] = sb1; L.st[1][2] = sb2; L.st[1][3] = sb3; L.st[1][4] = sb4; \
  L.st[1][5] = sb5;                                                                          \
  L.st[2][0] = sc0; L.st[2][1] = sc1; L.st[2][2] = sc2; L.st[2][3] = sc3; L.st[2][4] = sc4; \
  L.st[2][5] = sc5;

// Layout maps the linear index of an element of a dense shape (dims, row-major, rank <= 6) to
// element offsets in up to three operands.
struct Layout {
  int rank;
  unsigned dims[MAXR];
  i64 st[3][MAXR];

  // offsets computes the three operands' offsets of linear index i. The innermost dim is
  // dims[rank-1]. Division is 32-bit when i fits, which is every realistic case.
  __device__ __forceinline__ void offsets(i64 i, i64& a, i64& b, i64& c) const {
    a = b = c = 0;
    if (i < 0x7fffffffLL) {
      walk((unsigned)i, a, b, c);
      return;
    }
    walk((u64)i, a, b, c);
  }

  // walk adds the offsets of linear index u, dividing in U's width.
  template <typename U>
  __device__ __forceinline__ void walk(U u, i64& a, i64& b, i64& c) const {
#pragma unroll
    for (int d = MAXR - 1; d >= 0; d--) {
      if (d >= rank) continue;
      U q = u / dims[d], r = u - q * dims[d];
      a += (i64)r * st[0][d];
      b += (i64)r * st[1][d];
      c += (i64)r * st[2][d];
      u = q;
    }
  }
};

// grid_stride iterates i over [0, n) across the whole grid.
#define GRID_STRIDE(i, n)                                                           \
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (i64)gridDim.x * blockDim.x)

// vec_load reads V consecutive elements at p (16-byte aligned when V > 1) as floats.
template <typename T, int V>
__device__ __forceinline__ void vec_load(const T* p, float* f) {
  if constexpr (V == 1) {
    f[0] = tof(p[0]);
  } else {
    union { uint4 u; T e[V]; } v;
    v.u = *(const uint4*)p;
#pragma unroll
    for (int k = 0; k < V; k++) f[k] = tof(v.e[k]);
  }
}

// vec_store writes V floats at p (16-byte aligned when V > 1) as V consecutive elements.
template <typename T, int V>
__device__ __forceinline__ void vec_store(T* p, const float* f) {
  if constexpr (V == 1) {
    p[0] = fromf<T>(f[0]);
  } else {
    union { uint4 u; T e[V]; } v;
#pragma unroll
    for (int k = 0; k < V; k++) v.e[k] = fromf<T>(f[k]);
    *(uint4*)p = v.u;
  }
}

// Programmatic dependent launch (launchDependent in Go; a step's dependent field). A kernel
// launched dependent may be scheduled while the kernel before it on the stream still runs, once
// every block of that kernel has executed pdl_trigger (or exited). Such a kernel keeps three
// rules, in this order:
//  1. before pdl_wait it reads only what no kernel writes (the model's weights: kernels.Value's
//     Initializer) and writes nothing to global memory (a kernel before it may still read the
//     bytes); its own shared memory and registers are free;
//  2. pdl_wait returns once the kernel before it has completed and its writes are visible (and,
//     since that kernel waited for its own predecessor before completing, every earlier one);
//  3. everything else comes after pdl_wait.
// pdl_trigger early in a kernel lets its dependent successor start fetching weights while it
// runs; it changes nothing for a successor launched plainly. Without a dependent launch both are
// no-ops.
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
__device__ __forceinline__ void pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

}  // namespace carve
