/*
 * store.cu - write a few host bytes to device memory in stream order
 * (gr_cuda_launch_store, kernels/gr_kernels.h): how the library delivers a
 * combined result to a device address on the caller's stream. The bytes
 * travel as a kernel parameter, so the host copy need not outlive the call
 * and no pinned buffer or host-side synchronisation is involved.
 * Launch: one block of 32 threads; thread i writes bytes i, i+32, ...
 */
#include "gr_kernels.h"

namespace {
struct store_bytes {
    unsigned char b[GR_CUDA_STORE_MAX];
};

__global__ void store_kernel(unsigned char *dst, store_bytes v, unsigned int n)
{
    for (unsigned int i = threadIdx.x; i < n; i += blockDim.x)
        dst[i] = v.b[i];
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
