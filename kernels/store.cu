/*
 * store.cu - write a few host bytes to device memory in stream order
 * (gr_cuda_launch_store, kernels/gr_kernels.h): how the library delivers a
 * combined result to a device address on the caller's stream. The bytes
 * travel as a kernel parameter, so the host copy need not outlive the call
 * and no pinned buffer or host-side synchronisation is involved.
 * Launch: one block of 32 threads; thread i writes bytes i, i+32, ...
 *
 * gr_cuda_launch_release: an ordered result (gr_call_t.ordered) whose value
 * the host must combine first: the block waits for the host's store of seq
 * (a system-scope acquire load of mapped memory, __nanosleep between), then
 * copies the values and acknowledges that it read them.
 */
#include "gr_kernels.h"

#include <cuda/atomic>

namespace {
struct store_bytes {
    unsigned char b[GR_CUDA_STORE_MAX];
};

__global__ void store_kernel(unsigned char *dst, store_bytes v, unsigned int n)
{
    for (unsigned int i = threadIdx.x; i < n; i += blockDim.x)
        dst[i] = v.b[i];
}

__global__ void release_kernel(const unsigned int *flag, unsigned int *ack, unsigned int seq,
                               const unsigned long long *src, unsigned long long *dst, unsigned int words)
{
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned int, cuda::thread_scope_system> f(*const_cast<unsigned int *>(flag));
        while (f.load(cuda::memory_order_acquire) != seq)
            __nanosleep(64);
    }
    __syncthreads(); /* thread 0's acquire, then every thread's reads (cumulative through the barrier) */
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
    for (unsigned int i = threadIdx.x; i < words; i += blockDim.x)
        dst[i] = ((volatile const unsigned long long *)src)[i];
    __syncthreads(); /* every thread's reads of src before thread 0's acknowledgement */
    if (threadIdx.x == 0) {
        __threadfence_system();
        cuda::atomic_ref<unsigned int, cuda::thread_scope_system> a(*ack);
        a.store(seq, cuda::memory_order_release);
    }
}
} // namespace

extern "C" cudaError_t gr_cuda_launch_store(void *dst, const void *src, size_t n, cudaStream_t stream)
{
    if (n > GR_CUDA_STORE_MAX || !dst || !src)
        return cudaErrorInvalidValue;
    store_bytes v;
    for (size_t i = 0; i < n; ++i)
        v.b[i] = static_cast<const unsigned char *>(src)[i];
    store_kernel<<<1, 32, 0, stream>>>(static_cast<unsigned char *>(dst), v, static_cast<unsigned int>(n));
    return cudaGetLastError();
}

extern "C" cudaError_t gr_cuda_launch_release(const unsigned int *flag, unsigned int *ack, unsigned int seq,
                                              const void *src, void *dst, size_t n, cudaStream_t stream)
{
    if (!flag || !ack || !src || !dst || n % 8u != 0)
        return cudaErrorInvalidValue;
    release_kernel<<<1, 32, 0, stream>>>(flag, ack, seq, static_cast<const unsigned long long *>(src),
                                         static_cast<unsigned long long *>(dst), static_cast<unsigned int>(n / 8u));
    return cudaGetLastError();
}
