/*
 * producer.cu - the application's own kernel for stream_sum.c: it waits
 * about `spin` GPU clock cycles, then writes x[i] = value. It stands for any
 * producer whose data is ready only late on its stream.
 */
#include <cuda_runtime.h>

__global__ void produce_late(float *x, unsigned long long n, float value, long long spin)
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

extern "C" cudaError_t launch_produce_late(float *x, unsigned long long n, float value, long long spin,
                                          cudaStream_t stream)
{
    produce_late<<<256, 256, 0, stream>>>(x, n, value, spin);
    return cudaGetLastError();
}
