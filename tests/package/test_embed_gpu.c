/*
 * test_embed_gpu.c - the embedding contract on the GPU (issue 19; label gpu,
 * exit 77 where no GPU is visible):
 *  - stream order: a producer kernel on the caller's cudaStreamNonBlocking
 *    stream writes x late (~20 ms of spinning); gr_ireduce_device with that
 *    stream (per call), and gr_reduce_device with it as the context's stream,
 *    must see the new values, with no synchronisation by the caller. Without
 *    the ordering they read the old zeros.
 *  - the caller's later work on the stream waits for the library's read:
 *    a producer queued right after the start does not change the result;
 *  - the result delivered to device memory on the stream equals the host's;
 *  - overlapped requests (fast f32, exact f32, f64 sumsq, i32 sum), waited
 *    for in reverse order, give the bits of the blocking calls;
 *  - the non-blocking batch (gr_ireduce_batch_device): ordered after the late
 *    producer on the call's stream, the caller's later kernel waits for its
 *    reads, its k values delivered to device memory; a batch of every kind
 *    of item, two batches overlapped on two streams, each item with the bits
 *    (and index) of its own blocking call;
 *  - ordered results (gr_call_t.ordered): the values in device memory in
 *    stream order, seen by a consumer queued before gr_wait (test_ordered);
 *  - the calling thread's current device is the same after context creation
 *    (defaults and GR_DEVICE_CURRENT) and after every call (meaningful with
 *    two GPUs or more: the current device is set to another GPU).
 * Every wait here sits behind ~20 ms of the producer on the stream, far past
 * the launch's own time: the poll's watching past its spin (gr_cuda_poll_wait).
 * With --blocking-sync the application first sets every GPU to
 * cudaDeviceScheduleBlockingSync, and the waits sleep in the driver instead:
 * the same checks on that path (ctest gpu_embed_blocking_sync).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "embed_common.h"
#include "test_cuda.h"

#include <cuda_runtime.h>
#include <math.h>
#include <mpi.h>
#include <string.h>
#include <time.h>

cudaError_t embed_launch_produce_late(float *x, unsigned long long n, float value, long long spin,
                                      cudaStream_t stream);

#define SPIN 40000000ll /* clock cycles, ~20 ms at 2 GHz: far longer than the reduce */

static int rank, size, dev, other;

static void expect_current(const char *after)
{
    int cur = -1;
    CU(cudaGetDevice(&cur));
    if (cur != other)
        GR_TEST_FAIL_("current device after %s is %d, the caller had %d", after, cur, other);
}

/* With the application's device current: a producer of 1.0 on st, late (it spins first); then `other` is
 * made current and the options of a call ordered after it on st, its result delivered to result_dev. */
static gr_call_t late_producer(float *x, uint64_t n, cudaStream_t st, void *result_dev)
{
    CU(embed_launch_produce_late(x, n, 1.0f, SPIN, st));
    CU(cudaSetDevice(other));
    gr_call_t call;
    gr_call_init(&call);
    call.stream = (gr_stream_t)st;
    call.result_dev = result_dev;
    return call;
}

static void batch_item(gr_batch_item_t *it, gr_op_kind_t op, gr_dtype_t t, gr_mode_t mode, const void *x,
                       const void *y, uint64_t n)
{
    gr_batch_item_init(it);
    it->desc.op.kind = op;
    it->desc.dtype = t;
    it->desc.mode = mode;
    it->desc.all_ranks = 1;
    it->x = x;
    it->y = y;
    it->count = n;
    it->index_base = (int64_t)rank * (int64_t)n;
}

static void same_item(const gr_value_t *a, const gr_value_t *b, const char *what, int j)
{
    char msg[96];
    snprintf(msg, sizeof(msg), "%s, item %d", what, j);
    assert_same_value(a, b, msg);
    if (a->index != b->index)
        GR_TEST_FAIL_("%s: index %lld != %lld", msg, (long long)a->index, (long long)b->index);
}

/* x: n f32 values (overwritten with 1.0 / 5.0 here), dd / di: m f64 / i32 values */
static void test_batch(gr_ctx_t ctx, float *x, uint64_t n, const void *dd, const void *di, uint64_t m,
                       cudaStream_t st, cudaStream_t st2)
{
    enum { K1 = 4, K2 = 9 };
    gr_value_t *vdev = NULL;
    CU(cudaSetDevice(dev));
    CU(cudaMalloc((void **)&vdev, sizeof(gr_value_t) * K2));
    CU(cudaMemset(vdev, 0, sizeof(gr_value_t) * K2));
    CU(cudaDeviceSynchronize()); /* setup only */

    /* late producer of 1.0 on st; the batch on st; a producer of 5.0 right after it */
    gr_batch_item_t it[K2];
    batch_item(&it[0], GR_OP_DOT, GR_F32, GR_MODE_FAST, x, x, n);
    batch_item(&it[1], GR_OP_NRM2, GR_F32, GR_MODE_EXACT, x, NULL, n);
    batch_item(&it[2], GR_OP_ARGMAX, GR_F32, GR_MODE_FAST, x, NULL, n);
    batch_item(&it[3], GR_OP_SUM, GR_F32, GR_MODE_FAST, x, NULL, n);
    gr_call_t call = late_producer(x, n, st, vdev);
    gr_request_t q = NULL;
    OK(gr_ireduce_batch_device(ctx, it, K1, &call, &q));
    expect_current("gr_ireduce_batch_device");
    CU(cudaSetDevice(dev));
    CU(embed_launch_produce_late(x, n, 5.0f, 0, st)); /* must wait for the batch's reads */
    CU(cudaSetDevice(other));
    gr_value_t v[K2], from_dev[K2];
    OK(gr_wait(&q, v, NULL));
    expect_current("gr_wait(batch)");
    const double total = (double)n * size;
    const double root = (double)sqrtf((float)total); /* exact nrm2 of f32: rounded once to f32 */
    if (v[0].f != total || v[1].f != root || v[2].f != 1.0 || v[2].index != 0 || v[3].f != total)
        GR_TEST_FAIL_("stream-ordered batch: dot %.17g nrm2 %.17g argmax %.17g at %lld sum %.17g; expected %.17g, "
                      "%.17g, 1 at 0, %.17g (0: read before the producer wrote, 5x: after the later kernel)",
                      v[0].f, v[1].f, v[2].f, (long long)v[2].index, v[3].f, total, root, total);
    CU(cudaSetDevice(dev));
    CU(cudaMemcpyAsync(from_dev, vdev, sizeof(gr_value_t) * K1, cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    for (int j = 0; j < K1; ++j)
        same_item(&from_dev[j], &v[j], "batch result delivered to device memory", j);

    /* every kind of item; two batches in flight on two streams, waited for in reverse order */
    batch_item(&it[0], GR_OP_DOT, GR_F32, GR_MODE_FAST, x, x, n);
    batch_item(&it[1], GR_OP_DOT, GR_F64, GR_MODE_EXACT, dd, dd, m);
    batch_item(&it[2], GR_OP_NRM2, GR_F64, GR_MODE_FAST, dd, NULL, m);
    batch_item(&it[3], GR_OP_ARGMIN, GR_I32, GR_MODE_FAST, di, NULL, m);
    batch_item(&it[4], GR_OP_SUM, GR_F32, GR_MODE_EXACT, x, NULL, n);
    batch_item(&it[5], GR_OP_SUMSQ, GR_F64, GR_MODE_FAST, dd, NULL, m);
    batch_item(&it[6], GR_OP_MAX, GR_F64, GR_MODE_FAST, dd, NULL, m);
    batch_item(&it[7], GR_OP_DOT, GR_I32, GR_MODE_FAST, di, di, m - 3);
    batch_item(&it[8], GR_OP_SUMSQ, GR_F64, GR_MODE_EXACT, dd, NULL, 0);
    gr_value_t sep[K2], w[K2], w2[K2];
    for (int j = 0; j < K2; ++j)
        OK(gr_reduce_batch_device(ctx, &it[j], 1, &sep[j], NULL));
    gr_request_t q2 = NULL;
    gr_call_init(&call);
    call.stream = (gr_stream_t)st;
    OK(gr_ireduce_batch_device(ctx, it, K2, &call, &q));
    call.stream = (gr_stream_t)st2;
    OK(gr_ireduce_batch_device(ctx, it + 1, K2 - 1, &call, &q2));
    OK(gr_wait(&q2, w2, NULL));
    int done = 0;
    while (!done)
        OK(gr_test(&q, &done, w, NULL));
    expect_current("overlapped batches");
    OK(gr_reduce_batch_device(ctx, it, K2, v, NULL));
    for (int j = 0; j < K2; ++j) {
        same_item(&w[j], &sep[j], "non-blocking batch vs the item's own call", j);
        same_item(&v[j], &sep[j], "blocking batch vs the item's own call", j);
        if (j > 0)
            same_item(&w2[j - 1], &sep[j], "second batch vs the item's own call", j);
    }
    CU(cudaSetDevice(dev));
    CU(cudaStreamSynchronize(st));
    CU(cudaStreamSynchronize(st2));
    CU(cudaFree(vdev));
    CU(cudaSetDevice(other));
}

/* The k values at vdev, copied on st to a host buffer (the copy is the stream's consumer) and compared. */
static void expect_delivered(const gr_value_t *v, const gr_value_t *seen, int k, const char *what)
{
    for (int j = 0; j < k; ++j)
        same_item(&seen[j], &v[j], what, j);
}

/*
 * 5. Ordered results (gr_call_t.ordered): the values reach result_dev in stream order, so a consumer queued
 * on the stream right after the start (here a copy of result_dev to pinned host memory, queued before
 * gr_wait) sees them. result_dev is filled with 0xFF first, which no value has (valid -1).
 *  - fast dots (a pair and a single; one rank: the batch's kernel writes them, the stream does not wait
 *    for the host, so the stream can be synchronised BEFORE gr_wait; more ranks: after the combine);
 *  - a batch of exact dot, argmax and sum, and gr_ireduce_device's sum (a release after this rank's
 *    combine: behind a late producer, with no library call since the start, the stream still waits
 *    50 ms later; gr_test hands the values over);
 *  - 3 x GR_REQUEST_MAX ordered requests in flight on one stream without a synchronisation (the release
 *    slots are reused only once their kernel has read them);
 *  - a request never waited for: gr_ctx_destroy completes it, the stream does not hang;
 *  - ordered without result_dev, or with no stream at all: GR_ERR_INVALID_ARG.
 */
static void test_ordered(gr_ctx_t ctx, float *x, uint64_t n, const void *dd, uint64_t m, cudaStream_t st)
{
    enum { K = 3, R = 3 * GR_REQUEST_MAX };
    const double total = (double)n * size;
    gr_value_t *vdev = NULL, *seen = NULL, v[K], v2[K];
    CU(cudaSetDevice(dev));
    CU(cudaMalloc((void **)&vdev, sizeof(gr_value_t) * R));
    CU(cudaMallocHost((void **)&seen, sizeof(gr_value_t) * R));
    CU(cudaMemset(vdev, 0xFF, sizeof(gr_value_t) * R));
    CU(cudaDeviceSynchronize()); /* setup only */

    /* fast dots: x.x twice (one pass) and dd.dd, after a late producer of 1.0 */
    gr_batch_item_t it[K];
    batch_item(&it[0], GR_OP_DOT, GR_F32, GR_MODE_FAST, x, x, n);
    batch_item(&it[1], GR_OP_DOT, GR_F32, GR_MODE_FAST, x, x, n);
    batch_item(&it[2], GR_OP_DOT, GR_F64, GR_MODE_FAST, dd, dd, m);
    gr_call_t call = late_producer(x, n, st, vdev);
    call.ordered = 1;
    gr_request_t q = NULL;
    OK(gr_ireduce_batch_device(ctx, it, K, &call, &q));
    expect_current("gr_ireduce_batch_device(ordered)");
    CU(cudaSetDevice(dev));
    CU(cudaMemcpyAsync(seen, vdev, sizeof(gr_value_t) * K, cudaMemcpyDeviceToHost, st));
    if (size == 1) { /* written by the kernel: nothing in the stream waits for the host (10 s at most) */
        cudaError_t e = cudaErrorNotReady;
        struct timespec ms = {0, 1000 * 1000};
        for (int t = 0; t < 10000 && e == cudaErrorNotReady; ++t) {
            e = cudaStreamQuery(st);
            if (e == cudaErrorNotReady)
                nanosleep(&ms, NULL);
        }
        if (e != cudaSuccess)
            GR_TEST_FAIL_("ordered fast dots on one rank: the stream has not finished 10 s after the start (%s); "
                          "it must not wait for the host, the kernels write the values",
                          cudaGetErrorString(e));
    }
    CU(cudaSetDevice(other));
    OK(gr_wait(&q, v, NULL));
    CU(cudaSetDevice(dev));
    CU(cudaStreamSynchronize(st));
    if (v[0].f != total || v[1].f != total)
        GR_TEST_FAIL_("ordered fast dots: %.17g %.17g, expected %.17g", v[0].f, v[1].f, total);
    expect_delivered(v, seen, K, "ordered fast dots, consumer queued before gr_wait");
    OK(gr_reduce_batch_device(ctx, it, K, v2, NULL));
    expect_delivered(v2, v, K, "ordered fast dots vs the blocking batch");

    /* values that need the host's combine: exact dot, argmax, sum */
    batch_item(&it[0], GR_OP_DOT, GR_F64, GR_MODE_EXACT, dd, dd, m);
    batch_item(&it[1], GR_OP_ARGMAX, GR_F32, GR_MODE_FAST, x, NULL, n);
    batch_item(&it[2], GR_OP_SUM, GR_F64, GR_MODE_EXACT, dd, NULL, m);
    CU(cudaMemset(vdev, 0xFF, sizeof(gr_value_t) * R));
    CU(cudaDeviceSynchronize());
    /* first one of these, so that the release slots are allocated (cudaHostAlloc may synchronise the device) */
    gr_call_init(&call);
    call.stream = (gr_stream_t)st;
    call.result_dev = vdev;
    call.ordered = 1;
    OK(gr_ireduce_batch_device(ctx, it, K, &call, &q));
    OK(gr_wait(&q, v2, NULL));
    CU(cudaMemset(vdev, 0xFF, sizeof(gr_value_t) * R));
    CU(cudaDeviceSynchronize());
    /* behind a late producer, so the local parts are not done when the start returns: no library call
     * follows for 50 ms, nothing can hand the values over, and the stream must still wait then (the library
     * releases them as soon as it sees them, at any call of the context: not earlier) */
    call = late_producer(x, n, st, vdev);
    call.ordered = 1;
    OK(gr_ireduce_batch_device(ctx, it, K, &call, &q));
    CU(cudaSetDevice(dev));
    CU(cudaMemcpyAsync(seen, vdev, sizeof(gr_value_t) * K, cudaMemcpyDeviceToHost, st));
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    cudaError_t e = cudaStreamQuery(st);
    if (e != cudaErrorNotReady)
        GR_TEST_FAIL_("an ordered result that needs the combine: the stream %s before gr_wait (expected it to wait "
                      "for this rank's combine)", e == cudaSuccess ? "finished" : cudaGetErrorString(e));
    int done = 0;
    while (!done)
        OK(gr_test(&q, &done, v, NULL));
    CU(cudaStreamSynchronize(st));
    expect_delivered(v, seen, K, "ordered exact dot / argmax / sum, consumer queued before gr_test");
    OK(gr_reduce_batch_device(ctx, it, K, v2, NULL));
    expect_delivered(v2, v, K, "ordered batch vs the blocking batch");

    /* many in flight: R ordered sums (at most GR_REQUEST_MAX outstanding), one stream, no synchronisation */
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = GR_F64;
    d.all_ranks = 1;
    gr_value_t want;
    OK(gr_reduce_device(ctx, dd, m, &d, &want, NULL));
    CU(cudaMemset(vdev, 0xFF, sizeof(gr_value_t) * R));
    CU(cudaDeviceSynchronize());
    gr_request_t rq[GR_REQUEST_MAX];
    gr_value_t got;
    for (int r = 0; r < R; r += GR_REQUEST_MAX) {
        for (int j = 0; j < GR_REQUEST_MAX; ++j) {
            gr_call_init(&call);
            call.stream = (gr_stream_t)st;
            call.result_dev = vdev + r + j;
            call.ordered = 1;
            OK(gr_ireduce_device(ctx, dd, m - (uint64_t)((r + j) % 2), &d, &call, &rq[j]));
        }
        for (int j = GR_REQUEST_MAX - 1; j >= 0; --j)
            OK(gr_wait(&rq[j], &got, NULL));
    }
    CU(cudaMemcpyAsync(seen, vdev, sizeof(gr_value_t) * R, cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    gr_value_t odd;
    OK(gr_reduce_device(ctx, dd, m - 1, &d, &odd, NULL));
    for (int j = 0; j < R; ++j)
        same_item(&seen[j], j % 2 ? &odd : &want, "ordered sums in flight together", j);

    /* a request never waited for: the context's end completes it */
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.device = dev;
    cfg.stream = (gr_stream_t)st;
    gr_ctx_t c2 = NULL;
    OK(gr_ctx_create(MPI_COMM_WORLD, &cfg, &c2));
    CU(cudaMemset(vdev, 0xFF, sizeof(gr_value_t) * R));
    CU(cudaDeviceSynchronize());
    gr_call_init(&call);
    call.result_dev = vdev;
    call.ordered = 1; /* the context's stream */
    batch_item(&it[0], GR_OP_DOT, GR_F64, GR_MODE_EXACT, dd, dd, m);
    OK(gr_ireduce_batch_device(c2, it, 1, &call, &q));
    OK(gr_ctx_destroy(c2));
    CU(cudaMemcpyAsync(seen, vdev, sizeof(gr_value_t), cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    OK(gr_reduce_batch_device(ctx, it, 1, v2, NULL));
    same_item(&seen[0], &v2[0], "ordered request completed by gr_ctx_destroy", 0);

    /* misuse, the same on every rank: nothing starts */
    gr_call_init(&call);
    call.stream = (gr_stream_t)st;
    call.ordered = 1;
    EXPECT_R(gr_ireduce_device(ctx, dd, m, &d, &call, &q), GR_ERR_INVALID_ARG);
    gr_call_init(&call);
    call.result_dev = vdev;
    call.ordered = 1; /* ctx has no stream of its own */
    EXPECT_R(gr_ireduce_device(ctx, dd, m, &d, &call, &q), GR_ERR_INVALID_ARG);
    ASSERT(q == NULL);

    CU(cudaFree(vdev));
    CU(cudaFreeHost(seen));
    CU(cudaSetDevice(other));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ngpu = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess)
        ngpu = 0;
    int min_gpu = 0;
    MPI_Allreduce(&ngpu, &min_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (min_gpu == 0) {
        MPI_Finalize();
        GR_TEST_SKIP("no CUDA GPU visible");
    }
    if (argc > 1 && strcmp(argv[1], "--blocking-sync") == 0) {
        /* the application's choice, before anything runs on the GPUs; the library must honour it */
        for (int g = 0; g < ngpu; ++g) {
            unsigned int f = 0;
            CU(cudaSetDevice(g));
            CU(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
            CU(cudaGetDeviceFlags(&f));
            if ((f & cudaDeviceScheduleMask) != cudaDeviceScheduleBlockingSync)
                GR_TEST_FAIL_("cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) on GPU %d left flags 0x%x", g, f);
        }
        if (rank == 0)
            printf("every GPU set to cudaDeviceScheduleBlockingSync\n");
    } else if (argc > 1) {
        GR_TEST_FAIL_("unknown option %s (only --blocking-sync)", argv[1]);
    }
    MPI_Comm node;
    int lr = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lr);
    MPI_Comm_free(&node);
    dev = lr % ngpu;
    other = ngpu > 1 ? (dev + 1) % ngpu : dev;
    if (rank == 0 && ngpu == 1)
        printf("note: one GPU, so the current-device checks cannot tell restoring from never changing\n");

    /* defaults (backend auto, device auto, no binding): the current device stays */
    CU(cudaSetDevice(other));
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.share_gpus = 1; /* np 2 on one GPU */
    gr_ctx_t dctx = NULL;
    OK(gr_ctx_create(MPI_COMM_WORLD, &cfg, &dctx));
    ASSERT_EQ_I(gr_ctx_backend(dctx), GR_BACKEND_CUDA);
    expect_current("gr_ctx_create(defaults)");
    OK(gr_ctx_destroy(dctx));
    expect_current("gr_ctx_destroy");

    /* the application's GPU */
    CU(cudaSetDevice(dev));
    cudaStream_t st, st2;
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CU(cudaStreamCreateWithFlags(&st2, cudaStreamNonBlocking));
    const unsigned long long n = 1ull << 22;
    float *x = NULL;
    gr_value_t *vdev = NULL;
    CU(cudaMalloc((void **)&x, n * sizeof(float)));
    CU(cudaMalloc((void **)&vdev, sizeof(gr_value_t)));
    CU(cudaMemset(x, 0, n * sizeof(float)));
    CU(cudaMemset(vdev, 0, sizeof(gr_value_t)));
    CU(cudaDeviceSynchronize()); /* setup only */

    gr_config_init(&cfg);
    cfg.device = GR_DEVICE_CURRENT;
    gr_ctx_t ctx = NULL;
    OK(gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx));
    ASSERT_EQ_I(gr_ctx_device(ctx), dev);
    CU(cudaSetDevice(other));

    gr_desc_t d;
    gr_desc_init(&d);
    d.all_ranks = 1;
    const double total = (double)n * size;

    /* 1. per-call stream, non-blocking; then a producer of 5.0 right after the
     * start. The application's own CUDA calls run on its device; every library
     * call is made with `other` current, which it must leave so. */
    CU(cudaSetDevice(dev));
    gr_call_t call = late_producer(x, n, st, vdev);
    gr_request_t q = NULL;
    OK(gr_ireduce_device(ctx, x, n, &d, &call, &q));
    expect_current("gr_ireduce_device");
    CU(cudaSetDevice(dev));
    CU(embed_launch_produce_late(x, n, 5.0f, 0, st)); /* must wait for the library's read */
    CU(cudaSetDevice(other));
    gr_value_t v;
    OK(gr_wait(&q, &v, NULL));
    expect_current("gr_wait");
    if (v.f != total)
        GR_TEST_FAIL_("stream-ordered gr_ireduce_device: sum %.17g, expected %.17g (0 = read before the producer "
                      "wrote, %.17g = read after the caller's later kernel)", v.f, total, 5.0 * total);
    gr_value_t from_dev;
    CU(cudaSetDevice(dev));
    CU(cudaMemcpyAsync(&from_dev, vdev, sizeof(from_dev), cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    assert_same_value(&from_dev, &v, "result delivered to device memory");

    /* 2. the context's stream, blocking call */
    gr_ctx_t sctx = NULL;
    gr_config_init(&cfg);
    cfg.device = dev;
    cfg.stream = (gr_stream_t)st2;
    CU(cudaSetDevice(other));
    OK(gr_ctx_create(MPI_COMM_WORLD, &cfg, &sctx));
    expect_current("gr_ctx_create(device = ordinal)");
    CU(cudaSetDevice(dev));
    CU(embed_launch_produce_late(x, n, 2.0f, SPIN, st2));
    CU(cudaSetDevice(other));
    OK(gr_reduce_device(sctx, x, n, &d, &v, NULL));
    expect_current("gr_reduce_device");
    if (v.f != 2.0 * total)
        GR_TEST_FAIL_("gr_reduce_device on the context's stream: sum %.17g, expected %.17g", v.f, 2.0 * total);
    /* and gr_stats_device on it */
    CU(cudaSetDevice(dev));
    CU(embed_launch_produce_late(x, n, 3.0f, SPIN, st2));
    CU(cudaSetDevice(other));
    gr_stats_t sv;
    OK(gr_stats_device(sctx, x, n, &d, &sv, NULL));
    expect_current("gr_stats_device");
    if (sv.sum != 3.0 * total)
        GR_TEST_FAIL_("gr_stats_device on the context's stream: sum %.17g, expected %.17g", sv.sum, 3.0 * total);
    OK(gr_ctx_destroy(sctx));
    expect_current("gr_ctx_destroy");
    CU(cudaSetDevice(dev));
    CU(cudaStreamSynchronize(st2));

    /* 3. overlapped requests give the blocking bits */
    CU(cudaSetDevice(dev));
    enum { K = 4 };
    double *hd = malloc(sizeof(double) * (n / 4));
    int32_t *hi = malloc(sizeof(int32_t) * (n / 4));
    float *hf = malloc(sizeof(float) * n);
    ASSERT(hd && hi && hf);
    for (unsigned long long i = 0; i < n; ++i)
        hf[i] = (float)((double)((i * 2654435761ull + (unsigned long long)rank * 977) % 100003) / 1000.0 - 50.0);
    for (unsigned long long i = 0; i < n / 4; ++i) {
        hd[i] = (double)hf[i] * 1e-3 + 1e8 * (double)(i % 3);
        hi[i] = (int32_t)(i * 2654435761ull % 2000001) - 1000000;
    }
    void *dd = NULL, *di = NULL;
    CU(cudaMemcpy(x, hf, n * sizeof(float), cudaMemcpyHostToDevice));
    CU(cudaMalloc(&dd, sizeof(double) * (n / 4)));
    CU(cudaMalloc(&di, sizeof(int32_t) * (n / 4)));
    CU(cudaMemcpy(dd, hd, sizeof(double) * (n / 4), cudaMemcpyHostToDevice));
    CU(cudaMemcpy(di, hi, sizeof(int32_t) * (n / 4), cudaMemcpyHostToDevice));
    CU(cudaSetDevice(other));
    gr_desc_t ds[K];
    const void *ps[K] = {x, x, dd, di};
    const uint64_t ns[K] = {n, n, n / 4, n / 4};
    for (int k = 0; k < K; ++k)
        gr_desc_init(&ds[k]);
    ds[1].mode = GR_MODE_EXACT;
    ds[1].all_ranks = 1;
    ds[2].dtype = GR_F64;
    ds[2].op.kind = GR_OP_SUMSQ;
    ds[2].root = size - 1;
    ds[3].dtype = GR_I32;
    ds[3].all_ranks = 1;
    gr_value_t blocking[K], nb[K];
    for (int k = 0; k < K; ++k)
        OK(gr_reduce_device(ctx, ps[k], ns[k], &ds[k], &blocking[k], NULL));
    gr_request_t rq[K];
    for (int k = 0; k < K; ++k) {
        gr_call_init(&call);
        call.stream = (gr_stream_t)(k % 2 ? st2 : st);
        OK(gr_ireduce_device(ctx, ps[k], ns[k], &ds[k], &call, &rq[k]));
    }
    gr_value_t hv;
    OK(gr_reduce_host(ctx, hf, n, &ds[0], &hv, NULL)); /* a blocking call among them */
    for (int k = K - 1; k >= 0; --k)
        OK(gr_wait(&rq[k], &nb[k], NULL));
    expect_current("overlapped requests");
    for (int k = 0; k < K; ++k) {
        char what[64];
        snprintf(what, sizeof(what), "request %d vs blocking", k);
        assert_same_value(&nb[k], &blocking[k], what);
    }
    /* exact mode: the same bits from host data too */
    OK(gr_reduce_host(ctx, hf, n, &ds[1], &hv, NULL));
    assert_same_value(&hv, &blocking[1], "exact f32, host vs device");

    /* 4. the non-blocking batch: stream order, device delivery, each item's own bits */
    test_batch(ctx, x, n, dd, di, n / 4, st, st2);

    /* 5. ordered results: the values in stream order, before gr_wait */
    test_ordered(ctx, x, n, dd, n / 4, st);

    OK(gr_ctx_destroy(ctx));
    expect_current("gr_ctx_destroy");
    CU(cudaSetDevice(dev));
    CU(cudaFree(x));
    CU(cudaFree(vdev));
    CU(cudaFree(dd));
    CU(cudaFree(di));
    CU(cudaStreamDestroy(st));
    CU(cudaStreamDestroy(st2));
    free(hd);
    free(hi);
    free(hf);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_embed_gpu: ok (%d ranks, %d GPU(s) on this node)\n", size, ngpu);
    MPI_Finalize();
    return 0;
}
