/*
 * embed_cost.c - what the non-blocking calls of libgpureduce cost
 * (issue 19, docs/LIBRARY.md "Cost"). Public API only.
 *
 * For each size (f32 sum, fast mode, result on every rank), the median over
 * --iters timed iterations (after --warmup) of, per iteration, the slowest
 * rank's host wall time, each iteration after an MPI_Barrier:
 *   blocking   gr_reduce_device (gr_reduce_host on the cpu backend)
 *   start+wait gr_ireduce_device + gr_wait: the result on the host
 *   stream     the same with a caller's cudaStreamNonBlocking stream
 *              (an event record + wait more per call)
 *   one        = start+wait, the reference for:
 *   two        two reductions of two buffers started back to back, then
 *              both waited for: overlapped, the ratio two/one is the point
 *              (2.0 = no overlap at all)
 *   dot        one dot product of the two buffers (gr_reduce_batch_device
 *              with one item, the path of gr_dot_device)
 *   batch2     two independent dot products (x.y and x'.y' of four buffers)
 *              in one gr_reduce_batch_device: one launch, one collective;
 *              batch2/dot and batch2/blocking are issue 20's "k = 2 within
 *              1.25x of one reduction"
 *   ibatch2    the same batch by gr_ireduce_batch_device + gr_wait
 *   pair2      x.y and y.x in one batch: they share arrays, so the backend
 *              reads them in one pass (a dot pair, as CG's r.r and r.Ar)
 * The cuda backend reduces device buffers; without a GPU the cpu backend
 * reduces host buffers (the numbers then say nothing about the GPU; the run
 * just checks the program). Every result is checked against the blocking one.
 *
 *   mpirun -np 1 ./gr_embed_cost [--sizes 2^16,2^20,2^24] [--iters 200] [--warmup 20]
 */
#define _POSIX_C_SOURCE 200809L
#include "gpureduce.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(GR_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

#define MAX_SIZES 16

static int rank, nranks;

static void die(const char *what, gr_result_t r)
{
    fprintf(stderr, "gr_embed_cost: rank %d: %s failed: %s\n", rank, what, gr_strerror(r));
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define CHECK(call)                        \
    do {                                   \
        gr_result_t r_ = (call);           \
        if (r_ != GR_SUCCESS)              \
            die(#call, r_);                \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct run {
    gr_ctx_t ctx;
    int on_device;
    const void *buf[4]; /* 2 and 3: copies of 0 and 1 */
    uint64_t n;
    gr_desc_t d;
    gr_stream_t stream;
    gr_value_t ref;
    gr_batch_item_t dots[2]; /* buf0 . buf1 and buf2 . buf3: the same bits */
    gr_batch_item_t pair[2]; /* buf0 . buf1 and buf1 . buf0: the same bits (products commute) */
    gr_value_t ref_dot;
} run_t;

static void same_or_die(const gr_value_t *ref, const gr_value_t *v, const char *what)
{
    if (v->valid != ref->valid || memcmp(&v->f, &ref->f, sizeof(double)) != 0) {
        fprintf(stderr, "gr_embed_cost: rank %d: %s gave %.17g, the blocking call %.17g\n", rank, what, v->f,
                ref->f);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static gr_result_t batch(const run_t *r, const gr_batch_item_t *items, int k, gr_value_t *out)
{
    return r->on_device ? gr_reduce_batch_device(r->ctx, items, k, out, NULL)
                        : gr_reduce_batch_host(r->ctx, items, k, out, NULL);
}

enum { ROW_BLOCKING, ROW_NB, ROW_STREAM, ROW_TWO, ROW_DOT, ROW_BATCH2, ROW_IBATCH2, ROW_PAIR2, NROWS };

/* One timed iteration of row `row`; returns this rank's seconds. */
static double once(run_t *r, int row)
{
    gr_value_t v, w, vv[2];
    gr_request_t a = NULL, b = NULL;
    gr_call_t call;
    gr_call_init(&call);
    double t0 = now_s();
    switch (row) {
    case ROW_BLOCKING:
        CHECK(r->on_device ? gr_reduce_device(r->ctx, r->buf[0], r->n, &r->d, &v, NULL)
                           : gr_reduce_host(r->ctx, r->buf[0], r->n, &r->d, &v, NULL));
        break;
    case ROW_NB:
    case ROW_STREAM:
        if (row == ROW_STREAM)
            call.stream = r->stream;
        CHECK(r->on_device ? gr_ireduce_device(r->ctx, r->buf[0], r->n, &r->d, &call, &a)
                           : gr_ireduce_host(r->ctx, r->buf[0], r->n, &r->d, &call, &a));
        CHECK(gr_wait(&a, &v, NULL));
        break;
    case ROW_DOT:
        CHECK(batch(r, r->dots, 1, vv));
        break;
    case ROW_BATCH2:
        CHECK(batch(r, r->dots, 2, vv));
        break;
    case ROW_PAIR2:
        CHECK(batch(r, r->pair, 2, vv));
        break;
    case ROW_IBATCH2:
        CHECK(r->on_device ? gr_ireduce_batch_device(r->ctx, r->dots, 2, NULL, &a)
                           : gr_ireduce_batch_host(r->ctx, r->dots, 2, NULL, &a));
        CHECK(gr_wait(&a, vv, NULL));
        break;
    default:
        CHECK(r->on_device ? gr_ireduce_device(r->ctx, r->buf[0], r->n, &r->d, NULL, &a)
                           : gr_ireduce_host(r->ctx, r->buf[0], r->n, &r->d, NULL, &a));
        CHECK(r->on_device ? gr_ireduce_device(r->ctx, r->buf[1], r->n, &r->d, NULL, &b)
                           : gr_ireduce_host(r->ctx, r->buf[1], r->n, &r->d, NULL, &b));
        CHECK(gr_wait(&a, &v, NULL));
        CHECK(gr_wait(&b, &w, NULL));
        break;
    }
    double t = now_s() - t0;
    if (row >= ROW_DOT) {
        for (int j = 0; j < (row == ROW_DOT ? 1 : 2); ++j)
            same_or_die(&r->ref_dot, &vv[j], "a timed dot product");
        return t;
    }
    same_or_die(&r->ref, &v, "a timed call");
    if (row == ROW_TWO)
        same_or_die(&r->ref, &w, "the second overlapped call");
    return t;
}

/* Median over iters of the slowest rank's time, in microseconds. */
static double measure(run_t *r, int row, int warmup, int iters, double *times)
{
    for (int i = 0; i < warmup; ++i)
        (void)once(r, row);
    for (int i = 0; i < iters; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = once(r, row), tmax = 0;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        times[i] = tmax;
    }
    qsort(times, (size_t)iters, sizeof(double), cmp_double);
    return 1e6 * times[iters / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    uint64_t sizes[MAX_SIZES] = {(uint64_t)1 << 16, (uint64_t)1 << 20, (uint64_t)1 << 24};
    int nsizes = 3, iters = 200, warmup = 20;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            nsizes = 0;
            char *list = argv[++i];
            for (char *tok = strtok(list, ","); tok && nsizes < MAX_SIZES; tok = strtok(NULL, ","))
                if (gr_parse_size(tok, &sizes[nsizes++]) != GR_SUCCESS || sizes[nsizes - 1] == 0) {
                    if (rank == 0)
                        fprintf(stderr, "gr_embed_cost: bad size '%s' (use 1000, 2^20 or 4M)\n", tok);
                    MPI_Finalize();
                    return 2;
                }
        } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) {
            warmup = atoi(argv[++i]);
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: gr_embed_cost [--sizes LIST] [--iters N] [--warmup N]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (iters < 1 || warmup < 0 || nsizes < 1) {
        if (rank == 0)
            fprintf(stderr, "gr_embed_cost: --iters must be >= 1, --warmup >= 0, --sizes non-empty\n");
        MPI_Finalize();
        return 2;
    }

    run_t r;
    memset(&r, 0, sizeof(r));
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.share_gpus = 1; /* the smoke test runs 2 ranks, maybe on one GPU */
    CHECK(gr_ctx_create(MPI_COMM_WORLD, &cfg, &r.ctx));
    r.on_device = gr_ctx_backend(r.ctx) == GR_BACKEND_CUDA;
    gr_desc_init(&r.d);
    r.d.all_ranks = 1;
    uint64_t nmax = 0;
    for (int k = 0; k < nsizes; ++k)
        nmax = sizes[k] > nmax ? sizes[k] : nmax;
    void *mem[4] = {NULL, NULL, NULL, NULL};
    float *host = malloc(sizeof(float) * nmax);
    if (!host)
        die("malloc", GR_ERR_NOMEM);
    for (uint64_t i = 0; i < nmax; ++i)
        host[i] = (float)(i % 1000) * 0.001f;
#if defined(GR_WITH_CUDA)
    cudaStream_t stream = NULL;
    if (r.on_device) {
        if (cudaSetDevice(gr_ctx_device(r.ctx)) != cudaSuccess ||
            cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
            die("CUDA setup", GR_ERR_CUDA);
        for (int b = 0; b < 4; ++b)
            if (cudaMalloc(&mem[b], sizeof(float) * nmax) != cudaSuccess ||
                cudaMemcpy(mem[b], host, sizeof(float) * nmax, cudaMemcpyHostToDevice) != cudaSuccess)
                die("cudaMalloc / cudaMemcpy", GR_ERR_DEVMEM);
        r.stream = (gr_stream_t)stream;
    }
#endif
    if (!r.on_device) {
        mem[0] = host;
        for (int b = 1; b < 4; ++b) {
            mem[b] = malloc(sizeof(float) * nmax);
            if (!mem[b])
                die("malloc", GR_ERR_NOMEM);
            memcpy(mem[b], host, sizeof(float) * nmax);
        }
    }
    for (int b = 0; b < 4; ++b)
        r.buf[b] = mem[b];
    for (int j = 0; j < 2; ++j) {
        gr_batch_item_init(&r.dots[j]);
        r.dots[j].desc = r.d;
        r.dots[j].desc.op.kind = GR_OP_DOT;
        r.dots[j].x = r.buf[2 * j];
        r.dots[j].y = r.buf[2 * j + 1];
        r.pair[j] = r.dots[j];
        r.pair[j].x = r.buf[j];
        r.pair[j].y = r.buf[1 - j];
    }

    double *times = malloc(sizeof(double) * (size_t)iters);
    if (!times)
        die("malloc", GR_ERR_NOMEM);
    if (rank == 0) {
        const gr_placement_t *pl = gr_ctx_placement(r.ctx);
        printf("# gr_embed_cost: backend %s, %d rank(s), GPU %d %s, f32 sum fast, median of %d (warm-up %d), "
               "slowest rank, microseconds\n",
               gr_backend_name(gr_ctx_backend(r.ctx)), nranks, gr_ctx_device(r.ctx),
               pl->gpu_name[0] ? pl->gpu_name : "-", iters, warmup);
        printf("%-10s %12s %12s %10s %12s %12s %10s %12s %12s %12s %12s %10s %10s\n", "n", "blocking",
               "start+wait", "nb/block", "stream", "two", "two/one", "dot", "batch2", "ibatch2", "pair2", "b2/dot",
               "b2/block");
    }
    for (int k = 0; k < nsizes; ++k) {
        r.n = sizes[k];
        CHECK(r.on_device ? gr_reduce_device(r.ctx, r.buf[0], r.n, &r.d, &r.ref, NULL)
                          : gr_reduce_host(r.ctx, r.buf[0], r.n, &r.d, &r.ref, NULL));
        r.dots[0].count = r.dots[1].count = r.pair[0].count = r.pair[1].count = r.n;
        CHECK(batch(&r, r.dots, 1, &r.ref_dot));
        double us[NROWS];
        for (int row = 0; row < NROWS; ++row)
            us[row] = (row == ROW_STREAM && !r.on_device) ? 0 : measure(&r, row, warmup, iters, times);
        if (rank == 0) {
            char stream_col[32];
            if (r.on_device)
                snprintf(stream_col, sizeof(stream_col), "%.2f", us[ROW_STREAM]);
            else
                snprintf(stream_col, sizeof(stream_col), "-");
            printf("%-10llu %12.2f %12.2f %10.3f %12s %12.2f %10.3f %12.2f %12.2f %12.2f %12.2f %10.3f %10.3f\n",
                   (unsigned long long)r.n, us[ROW_BLOCKING], us[ROW_NB], us[ROW_NB] / us[ROW_BLOCKING], stream_col,
                   us[ROW_TWO], us[ROW_TWO] / us[ROW_NB], us[ROW_DOT], us[ROW_BATCH2], us[ROW_IBATCH2],
                   us[ROW_PAIR2], us[ROW_BATCH2] / us[ROW_DOT], us[ROW_BATCH2] / us[ROW_BLOCKING]);
        }
    }
    free(times);
    CHECK(gr_ctx_destroy(r.ctx));
#if defined(GR_WITH_CUDA)
    if (r.on_device) {
        for (int b = 0; b < 4; ++b)
            cudaFree(mem[b]);
        cudaStreamDestroy(stream);
    }
#endif
    if (!r.on_device)
        for (int b = 1; b < 4; ++b)
            free(mem[b]);
    free(host);
    MPI_Finalize();
    return 0;
}
