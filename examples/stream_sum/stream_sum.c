/*
 * stream_sum.c - reduce data that the application produces on its own
 * non-blocking CUDA stream, without synchronising first.
 *
 * Each rank picks its GPU itself (node-local rank modulo the GPUs it sees)
 * and hands it to the library as GR_DEVICE_CURRENT. A producer kernel that
 * starts late fills x on a cudaStreamNonBlocking stream; gr_ireduce_device on
 * that stream is ordered after it (no cudaDeviceSynchronize anywhere), returns
 * at once, and the host is free until gr_wait. The result also lands in
 * device memory on the stream, where a later kernel or copy can read it.
 *
 *   mpirun -np 2 ./stream_sum
 * Exit status 0: right sum; 1: wrong or an error; 77: no GPU visible.
 */
#include <cuda_runtime.h>
#include <gpureduce.h>
#include <mpi.h>
#include <stdio.h>

cudaError_t launch_produce_late(float *x, unsigned long long n, float value, long long spin, cudaStream_t stream);

#define CHECK(call)                                                                        \
    do {                                                                                   \
        gr_result_t r_ = (call);                                                           \
        if (r_ != GR_SUCCESS) {                                                            \
            fprintf(stderr, "stream_sum: %s failed: %s\n", #call, gr_strerror(r_));        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
        }                                                                                  \
    } while (0)
#define CUDA_CHECK(call)                                                                   \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "stream_sum: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
        }                                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int ngpu = 0, none = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu == 0)
        none = 1;
    int any_none = 0;
    MPI_Allreduce(&none, &any_none, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_none) {
        if (rank == 0)
            fprintf(stderr, "stream_sum: no CUDA GPU visible; nothing to do\n");
        MPI_Finalize();
        return 77;
    }

    /* the application's choice of GPU, made before the library sees it */
    MPI_Comm node;
    int local_rank = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
    const int dev = local_rank % ngpu;
    CUDA_CHECK(cudaSetDevice(dev));

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const unsigned long long n = 1ull << 22;
    float *x = NULL;
    gr_value_t *result_dev = NULL;
    CUDA_CHECK(cudaMalloc((void **)&x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void **)&result_dev, sizeof(gr_value_t)));
    CUDA_CHECK(cudaMemset(x, 0, n * sizeof(float)));
    CUDA_CHECK(cudaMemset(result_dev, 0, sizeof(gr_value_t)));
    CUDA_CHECK(cudaDeviceSynchronize()); /* setup only: x is all zeros now */

    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.device = GR_DEVICE_CURRENT; /* our GPU; the library chooses none */
    gr_ctx_t ctx = NULL;
    CHECK(gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx));

    /* the producer writes 1.0f everywhere, but only after ~20 ms of spinning */
    CUDA_CHECK(launch_produce_late(x, n, 1.0f, 40000000ll, stream));

    gr_desc_t d;
    gr_desc_init(&d); /* f32 sum, fast mode, result on rank 0 */
    d.all_ranks = 1;
    gr_call_t call;
    gr_call_init(&call);
    call.stream = (gr_stream_t)stream; /* after the producer, in stream order */
    call.result_dev = result_dev;      /* and the value in device memory too */
    gr_request_t req = NULL;
    CHECK(gr_ireduce_device(ctx, x, n, &d, &call, &req));

    /* the host is free meanwhile; poll once, then wait */
    int done = 0;
    gr_value_t v;
    CHECK(gr_test(&req, &done, &v, NULL));
    if (!done)
        CHECK(gr_wait(&req, &v, NULL));

    gr_value_t from_dev;
    CUDA_CHECK(cudaMemcpyAsync(&from_dev, result_dev, sizeof(from_dev), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    int cur = -1;
    CUDA_CHECK(cudaGetDevice(&cur));

    const double expect = (double)n * (double)size;
    int ok = v.valid && v.f == expect && from_dev.valid && from_dev.f == v.f && cur == dev;
    printf("stream_sum: rank %d GPU %d: sum %.1f (expected %.1f), on the device %.1f, current device %d: %s\n",
           rank, dev, v.f, expect, from_dev.f, cur, ok ? "ok" : "WRONG");

    CHECK(gr_ctx_destroy(ctx));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(result_dev));
    CUDA_CHECK(cudaStreamDestroy(stream));
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
