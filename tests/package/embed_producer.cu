/*
 * embed_producer.cu - the "application's" kernel of test_embed_gpu.c: wait
 * about `spin` clock cycles in every block, then write x[i] = value. Data
 * that is ready only late on its stream; a reduction not ordered after that
 * stream reads the old values.
 */
#include <cuda_runtime.h>

__global__ void embed_produce_late(float *x, unsigned long long n, float value, long long spin)
{
    if (threadIdx.x == 0) {
        const long long t0 = clock64();
        while (clock64() - t0 < spin) {
        }
    }
    __syncthreads();
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        x[i] = value;
}

extern "C" cudaError_t embed_launch_produce_late(float *x, unsigned long long n, float value, long long spin,
                                                 cudaStream_t stream)
{
    embed_produce_late<<<128, 256, 0, stream>>>(x, n, value, spin);
    return cudaGetLastError();
}
