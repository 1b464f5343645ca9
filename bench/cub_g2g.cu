/*
 * cub_g2g.cu - the optional `cub-g2g` row of `gpureduce bench`:
 * cub::DeviceReduce::Sum with cuda::execution::determinism::gpu_to_gpu, the
 * CCCL answer to "same bits on any GPU" (floating sums through its
 * reproducible binned accumulator; integer sums take the run-to-run path,
 * which is already exact).
 *
 * The toolkit's CCCL may predate that API, so this file is compiled against
 * the headers given to CMake as -DGR_CCCL_INCLUDE=<dir> (e.g. the include/
 * folder of the PyPI package cuda-cccl), which then defines GR_HAVE_CUB_G2G.
 * Without them it builds stubs and the bench leaves the row out. It is its
 * own translation unit so the `cub` row keeps the toolkit's CCCL.
 *
 * Temp storage: the environment API allocates through a memory resource
 * taken from the environment. The one below hands out a buffer the harness
 * allocated once (outside timing); asked for more than it holds, it records
 * the size and throws, CUB returns cudaErrorMemoryAllocation, and the
 * launcher reports the size: the same two-phase protocol as the `cub` row.
 */
#include "gr_bench_kernels.h"

#ifdef GR_HAVE_CUB_G2G

#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <cuda/std/execution>
#include <cuda/stream_ref>

#include <new>

namespace {

struct fixed_arena {
    void *base;
    size_t capacity;
    size_t *wanted; /* the largest request seen, for the size query */

    void *allocate(cuda::stream_ref, size_t bytes, size_t) { return take(bytes); }
    void deallocate(cuda::stream_ref, void *, size_t, size_t) noexcept {}
    void *allocate_sync(size_t bytes, size_t) { return take(bytes); }
    void deallocate_sync(void *, size_t, size_t) noexcept {}
    bool operator==(const fixed_arena &o) const { return base == o.base; }
    bool operator!=(const fixed_arena &o) const { return base != o.base; }

    void *take(size_t bytes)
    {
        if (*wanted < bytes)
            *wanted = bytes;
        if (!base || bytes > capacity)
            throw std::bad_alloc();
        return base;
    }
};

template <typename T, typename A>
cudaError_t g2g_sum_typed(const void *in, uint64_t n, void *out, void *temp, size_t *temp_bytes, cudaStream_t stream)
{
    size_t wanted = 0;
    fixed_arena arena{temp, temp ? *temp_bytes : 0, &wanted};
    auto env = cuda::std::execution::env{cuda::execution::require(cuda::execution::determinism::gpu_to_gpu),
                                         cuda::std::execution::prop{cuda::mr::get_memory_resource, arena},
                                         cuda::std::execution::prop{cuda::get_stream, cuda::stream_ref{stream}}};
    cudaError_t e = cub::DeviceReduce::Sum(static_cast<const T *>(in), static_cast<A *>(out),
                                           static_cast<int64_t>(n), env);
    if (!temp) {
        /* size query: the arena refused, and now knows what CUB asked for */
        (void)cudaGetLastError();
        *temp_bytes = wanted > 0 ? wanted : 1;
        return cudaSuccess;
    }
    if (e == cudaErrorMemoryAllocation)
        *temp_bytes = wanted;
    return e;
}

} // namespace

extern "C" int gr_bench_cub_g2g_available(void) { return 1; }
extern "C" int gr_bench_cub_g2g_version(void) { return CUB_VERSION; }

extern "C" cudaError_t gr_bench_cub_g2g_sum(int dtype, const void *in, uint64_t n, void *out, void *temp,
                                            size_t *temp_bytes, cudaStream_t stream)
{
    if (!temp_bytes)
        return cudaErrorInvalidValue;
    switch (dtype) {
    case GR_C_F32:
        return g2g_sum_typed<float, double>(in, n, out, temp, temp_bytes, stream);
    case GR_C_F64:
        return g2g_sum_typed<double, double>(in, n, out, temp, temp_bytes, stream);
    case GR_C_I32:
        return g2g_sum_typed<int, long long>(in, n, out, temp, temp_bytes, stream);
    case GR_C_I64:
        return g2g_sum_typed<long long, long long>(in, n, out, temp, temp_bytes, stream);
    default:
        return cudaErrorInvalidValue;
    }
}

/* The sum in the input's own type for floats (f32 data summed into a float,
 * as a CUB user with f32 data would write it); integers as above. */
extern "C" cudaError_t gr_bench_cub_g2g_sum_same(int dtype, const void *in, uint64_t n, void *out, void *temp,
                                                 size_t *temp_bytes, cudaStream_t stream)
{
    if (!temp_bytes)
        return cudaErrorInvalidValue;
    if (dtype == GR_C_F32)
        return g2g_sum_typed<float, float>(in, n, out, temp, temp_bytes, stream);
    return gr_bench_cub_g2g_sum(dtype, in, n, out, temp, temp_bytes, stream);
}

#else /* no GR_CCCL_INCLUDE: the row is absent */

extern "C" int gr_bench_cub_g2g_available(void) { return 0; }
extern "C" int gr_bench_cub_g2g_version(void) { return 0; }

extern "C" cudaError_t gr_bench_cub_g2g_sum(int dtype, const void *in, uint64_t n, void *out, void *temp,
                                            size_t *temp_bytes, cudaStream_t stream)
{
    (void)dtype, (void)in, (void)n, (void)out, (void)temp, (void)temp_bytes, (void)stream;
    return cudaErrorNotSupported;
}

extern "C" cudaError_t gr_bench_cub_g2g_sum_same(int dtype, const void *in, uint64_t n, void *out, void *temp,
                                                 size_t *temp_bytes, cudaStream_t stream)
{
    return gr_bench_cub_g2g_sum(dtype, in, n, out, temp, temp_bytes, stream);
}

#endif
