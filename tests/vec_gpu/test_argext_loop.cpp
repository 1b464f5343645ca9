/*
 * test_argext_loop.cpp - the per-thread argmin/argmax loop of the GPU
 * (kernels/gr_argext.cuh: 32-bit lane positions, 4 vectors in flight, the
 * guarded last round, the NaN fallback) run on the host, CUDA's few
 * intrinsics replaced by plain C++: for every dtype and side, counts 0 ..
 * 4099, starts 0 .. 7 elements past 16 bytes and 1 .. 33 threads, the merge
 * of every thread's state must have the bits of the exact per-element path
 * (the cpu backend's rules) over the whole array. Data: ties everywhere,
 * NaN, all -Inf / +Inf (INT_MIN / INT_MAX), zeros of both signs. Runs where
 * the CUDA toolkit's headers are (GR_WITH_CUDA builds), no GPU needed.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <vector>

/* Device code as host code: the qualifiers go, the loads read memory, the bit casts copy. */
#undef __device__
#undef __forceinline__
#define __device__
#define __forceinline__ inline
template <typename T>
static T __ldg(const T *p)
{
    return *p;
}
static float __int_as_float(int i)
{
    float f;
    memcpy(&f, &i, 4);
    return f;
}
static float __uint_as_float(unsigned i)
{
    float f;
    memcpy(&f, &i, 4);
    return f;
}
static double __longlong_as_double(long long i)
{
    double f;
    memcpy(&f, &i, 8);
    return f;
}

#include "gr_argext.cuh"

using namespace gr_arg;

static uint64_t state = 88172645463325252ull;
static uint64_t rnd()
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}
static long fails, runs;

enum { D_TIES, D_NAN, D_LOW, D_HIGH, D_ZEROS, D_KINDS };

template <int DT, int W>
static void one(uint64_t n, int off, uint64_t nt, int kind)
{
    typedef typename fast<DT>::T T;
    std::vector<uint64_t> buf((n + 8) * sizeof(T) / 8 + 4); /* 16-byte aligned (operator new) */
    T *x = (T *)buf.data() + off;
    for (uint64_t i = 0; i < n; ++i) {
        const int r = (int)(rnd() % 9) - 4;
        double f = r / 4.0;
        if (kind == D_NAN && rnd() % 50 == 0)
            f = NAN;
        if (kind == D_LOW)
            f = -INFINITY;
        if (kind == D_HIGH)
            f = INFINITY;
        if (kind == D_ZEROS)
            f = (rnd() & 1) ? -0.0 : 0.0;
        if constexpr (DT == GR_C_F32)
            x[i] = (float)f;
        else if constexpr (DT == GR_C_F64)
            x[i] = f;
        else if constexpr (DT == GR_C_F16)
            x[i] = __float2half((float)f);
        else if constexpr (DT == GR_C_BF16)
            x[i] = __float2bfloat16((float)f);
        else if constexpr (DT == GR_C_I32)
            x[i] = kind == D_LOW ? INT32_MIN : kind == D_HIGH ? INT32_MAX : r;
        else
            x[i] = kind == D_LOW ? INT64_MIN : kind == D_HIGH ? INT64_MAX : r;
    }
    const int64_t base = 1000;
    gr_vec_arg_rec_t want, got;
    arg_init(want);
    arg_init(got);
    for (uint64_t i = 0; i < n; ++i)
        put_elem<DT, W>(want, x, i, base + (int64_t)i);
    for (uint64_t t = 0; t < nt; ++t) {
        gr_vec_arg_rec_t a;
        arg_init(a);
        thread_share<DT, W>(x, n, base, t, nt, a);
        merge<fast<DT>::INT, W>(got, a);
    }
    ++runs;
    if (memcmp(&want, &got, sizeof want) != 0 && ++fails <= 20)
        printf("FAIL dtype %d sides %d n %llu start +%d threads %llu data %d: want fmin %a@%lld fmax %a@%lld "
               "imin %lld@%lld imax %lld@%lld nan@%lld, got fmin %a@%lld fmax %a@%lld imin %lld@%lld imax %lld@%lld "
               "nan@%lld\n",
               DT, W, (unsigned long long)n, off, (unsigned long long)nt, kind, want.fmin, (long long)want.fmin_i,
               want.fmax, (long long)want.fmax_i, (long long)want.imin, (long long)want.imin_i,
               (long long)want.imax, (long long)want.imax_i, (long long)want.nan_i, got.fmin,
               (long long)got.fmin_i, got.fmax, (long long)got.fmax_i, (long long)got.imin, (long long)got.imin_i,
               (long long)got.imax, (long long)got.imax_i, (long long)got.nan_i);
}

template <int DT>
static void all()
{
    static const uint64_t ns[] = {0, 1, 2, 3, 5, 8, 9, 16, 17, 31, 33, 64, 100, 257, 1000, 4099};
    static const uint64_t nts[] = {1, 2, 3, 4, 5, 7, 16, 33};
    for (uint64_t n : ns)
        for (int off = 0; off < 8; ++off)
            for (uint64_t nt : nts)
                for (int kind = 0; kind < D_KINDS; ++kind) {
                    one<DT, kMin>(n, off, nt, kind);
                    one<DT, kMax>(n, off, nt, kind);
                    one<DT, kMin | kMax>(n, off, nt, kind);
                }
}

int main()
{
    all<GR_C_F32>();
    all<GR_C_F64>();
    all<GR_C_F16>();
    all<GR_C_BF16>();
    all<GR_C_I32>();
    all<GR_C_I64>();
    printf("test_argext_loop: %ld cases, %ld failed\n", runs, fails);
    return fails != 0;
}
