/*
 * gr_vec.cuh - the 16-byte vector each kernel loads per element type, its
 * read-only load, and the exact widening of f16 / bf16 elements to f32.
 *
 * f16 and bf16 elements are loaded as 8 halves per 16-byte vector (2 bytes
 * per element read from memory) and widened in registers. Widening is exact
 * for both (every f16 and bf16 value, NaN and Inf included, is an f32 value):
 * f16 by the hardware conversion (__half2float / __half22float2: cvt.f32.f16,
 * exact), bf16 by placing its 16 bits on top of an f32 (its definition).
 * The vector types are distinct structs so overloads tell f16 from bf16.
 *
 * Lane order: element j of a vector is bits 16 (j % 2) .. of 32-bit word j / 2
 * (little-endian memory), so widened lanes come out in index order.
 */
#ifndef GR_VEC_CUH
#define GR_VEC_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

/* Eight f16 / bf16 elements: one 16-byte load. */
struct gr_f16x8 {
    uint4 u;
};
struct gr_bf16x8 {
    uint4 u;
};

/* The 16-byte vector of each element type. */
template <typename T>
struct gr_vec16;
template <>
struct gr_vec16<float> {
    typedef float4 type;
};
template <>
struct gr_vec16<double> {
    typedef double2 type;
};
template <>
struct gr_vec16<int32_t> {
    typedef int4 type;
};
template <>
struct gr_vec16<int64_t> {
    typedef longlong2 type;
};
template <>
struct gr_vec16<__half> {
    typedef gr_f16x8 type;
};
template <>
struct gr_vec16<__nv_bfloat16> {
    typedef gr_bf16x8 type;
};

/* Read-only (non-coherent cache) load of one vector, every vector type. */
__device__ __forceinline__ float4 gr_ldg(const float4 *p) { return __ldg(p); }
__device__ __forceinline__ double2 gr_ldg(const double2 *p) { return __ldg(p); }
__device__ __forceinline__ int4 gr_ldg(const int4 *p) { return __ldg(p); }
__device__ __forceinline__ longlong2 gr_ldg(const longlong2 *p) { return __ldg(p); }
__device__ __forceinline__ gr_f16x8 gr_ldg(const gr_f16x8 *p)
{
    gr_f16x8 r;
    r.u = __ldg((const uint4 *)p);
    return r;
}
__device__ __forceinline__ gr_bf16x8 gr_ldg(const gr_bf16x8 *p)
{
    gr_bf16x8 r;
    r.u = __ldg((const uint4 *)p);
    return r;
}

/* One element as the kernels compute with it: halves widen to f32 (exact),
 * every other type stays as it is. */
template <typename T>
__device__ __forceinline__ T gr_widen(T x)
{
    return x;
}
__device__ __forceinline__ float gr_widen(__half x) { return __half2float(x); }
__device__ __forceinline__ float gr_widen(__nv_bfloat16 x) { return __bfloat162float(x); }

/* Two halves packed in a 32-bit word (low half first) as two f32. */
__device__ __forceinline__ float2 gr_f16x2_to_f32(unsigned int w)
{
    return __half22float2(__halves2half2(__ushort_as_half((unsigned short)(w & 0xFFFFu)),
                                         __ushort_as_half((unsigned short)(w >> 16))));
}
__device__ __forceinline__ float2 gr_bf16x2_to_f32(unsigned int w)
{
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xFFFF0000u));
}

/* A vector of 8 halves as two float4: lo = elements 0..3, hi = 4..7. */
__device__ __forceinline__ void gr_widen8(gr_f16x8 v, float4 &lo, float4 &hi)
{
    const float2 a = gr_f16x2_to_f32(v.u.x), b = gr_f16x2_to_f32(v.u.y);
    const float2 c = gr_f16x2_to_f32(v.u.z), d = gr_f16x2_to_f32(v.u.w);
    lo = make_float4(a.x, a.y, b.x, b.y);
    hi = make_float4(c.x, c.y, d.x, d.y);
}
__device__ __forceinline__ void gr_widen8(gr_bf16x8 v, float4 &lo, float4 &hi)
{
    const float2 a = gr_bf16x2_to_f32(v.u.x), b = gr_bf16x2_to_f32(v.u.y);
    const float2 c = gr_bf16x2_to_f32(v.u.z), d = gr_bf16x2_to_f32(v.u.w);
    lo = make_float4(a.x, a.y, b.x, b.y);
    hi = make_float4(c.x, c.y, d.x, d.y);
}

#endif /* GR_VEC_CUH */
