/*
 * read_floor.c - the read floor: how long does *any* kernel take to read n
 * f32 values on this GPU, under the bench's GPU timing? (docs/PERFORMANCE.md,
 * "Round 7".) A test program, not the product.
 *
 *   test_read_floor            every probe kernel against the exact sum of all
 *                              ones, on awkward sizes and grids (ctest gpu_read_floor)
 *   test_read_floor --sweep    the timing sweep: an empty kernel, CUB and the fast
 *                              kernel (gr_cuda_launch_reduce) as references, then
 *                              every read shape (block, blocks per SM, loads in
 *                              flight, grid-stride or chunked, prefetch-size hint)
 *                              at 2^20, 2^22 and 2^24 elements, and the best shapes
 *                              again with the fast kernel's end (ticket + fold)
 *
 * Timing is the bench's (src/cli/bench_cuda.c): each batch of 32 runs is queued
 * behind a hold kernel that spins on a host-written flag, one event pair a run,
 * the median over the batch; the input rotates over at least 2 x L2 of buffers,
 * so every run reads HBM. Exit 77 (SKIP) without a GPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "gr_bench_kernels.h"
#include "gr_kernels.h"
#include "read_floor.h"
#include "test_cuda.h"

#define ITERS 32
#define HOLD_TIMEOUT_NS 2000000000ull

static struct {
    cudaStream_t stream;
    int sms, l2;
    int cc, fast_block; /* compute capability; the fast kernel's block by its tuning policy */
    int *hold_host, *hold_dev, *late_host, *late_dev;
    int gen;
    cudaEvent_t ev[2 * ITERS];
    /* the input set: nbuf buffers of the group's n floats, all ones */
    float *in;
    uint64_t n, stride_elems;
    int nbuf;
    float *partials;
    unsigned int *ticket;
    float *result;
    /* the fast kernel's and CUB's */
    void *scratch;
    unsigned int *fticket;
    gr_local_t *fres_h, *fres_d;
    double *cub_out;
    void *cub_temp;
    size_t cub_temp_bytes;
} G;

typedef void (*run_fn)(const void *arg, const float *in);

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median us of ITERS runs of fn, queued behind the hold kernel; buffer k of the set for run k. */
static double time_runs(run_fn fn, const void *arg)
{
    for (int w = 0; w < 2; ++w)
        fn(arg, G.in + (uint64_t)(w % G.nbuf) * G.stride_elems);
    CU(cudaStreamSynchronize(G.stream));
    const int gen = ++G.gen;
    *G.late_host = 0;
    CU(gr_bench_launch_hold(G.hold_dev, gen, HOLD_TIMEOUT_NS, G.late_dev, G.stream));
    for (int k = 0; k < ITERS; ++k) {
        CU(cudaEventRecord(G.ev[2 * k], G.stream));
        fn(arg, G.in + (uint64_t)((k + 2) % G.nbuf) * G.stride_elems);
        CU(cudaEventRecord(G.ev[2 * k + 1], G.stream));
    }
    __atomic_store_n(G.hold_host, gen, __ATOMIC_SEQ_CST);
    CU(cudaStreamSynchronize(G.stream));
    if (__atomic_load_n(G.late_host, __ATOMIC_SEQ_CST))
        fprintf(stderr, "note: the hold kernel timed out (the host queued the batch late)\n");
    double t[ITERS];
    for (int k = 0; k < ITERS; ++k) {
        float ms = 0;
        CU(cudaEventElapsedTime(&ms, G.ev[2 * k], G.ev[2 * k + 1]));
        t[k] = (double)ms * 1e3;
    }
    qsort(t, ITERS, sizeof(double), cmp_double);
    return 0.5 * (t[ITERS / 2 - 1] + t[ITERS / 2]);
}

/* ---- the rows ----------------------------------------------------------------------- */

typedef struct read_arg {
    rf_cfg_t cfg;
    int grid;
} read_arg_t;

static void run_read(const void *a_, const float *in)
{
    const read_arg_t *a = (const read_arg_t *)a_;
    CU(rf_launch_read(&a->cfg, a->grid, in, (uint32_t)(G.n / 4), G.partials, G.ticket, G.result, G.stream));
}

static void run_empty(const void *a_, const float *in)
{
    (void)in;
    const int *gb = (const int *)a_;
    CU(rf_launch_empty(gb[0], gb[1], G.stream));
}

static int g_fast_grid;
static void run_fast(const void *a_, const float *in)
{
    (void)a_;
    gr_cuda_reduce_launch_t l;
    memset(&l, 0, sizeof(l));
    l.in = in;
    l.n = G.n;
    l.dtype = GR_C_F32;
    l.op = GR_C_SUM;
    l.power = 1;
    l.grid = g_fast_grid;
    l.block = G.fast_block;
    l.scratch = G.scratch;
    l.ticket = G.fticket;
    l.result = G.fres_d;
    l.stream = G.stream;
    CU(gr_cuda_launch_reduce(&l));
}

static void run_cub(const void *a_, const float *in)
{
    (void)a_;
    size_t tb = G.cub_temp_bytes;
    CU(gr_bench_cub_sum(GR_C_F32, in, G.n, G.cub_out, G.cub_temp, &tb, G.stream));
}

/* ---- gates: every kernel's sum of all ones against n, outputs poisoned first ------- */

static void check_read(const read_arg_t *a, uint64_t n)
{
    const uint64_t saved = G.n;
    G.n = n;
    /* stream-ordered: G.stream does not wait for the legacy default stream */
    CU(cudaMemsetAsync(G.partials, 0xFF, (size_t)a->grid * sizeof(float), G.stream));
    CU(cudaMemsetAsync(G.result, 0xFF, sizeof(float), G.stream));
    run_read(a, G.in);
    float *p = malloc((size_t)a->grid * sizeof(float));
    ASSERT(p);
    CU(cudaMemcpyAsync(p, G.partials, (size_t)a->grid * sizeof(float), cudaMemcpyDeviceToHost, G.stream));
    CU(cudaStreamSynchronize(G.stream));
    double s = 0;
    for (int b = 0; b < a->grid; ++b)
        s += p[b]; /* integers below 2^24 a block: exact */
    free(p);
    if (s != (double)n)
        GR_TEST_FAIL_("read block=%d unroll=%d chunk=%d hint=%d grid=%d n=%llu: partials sum to %.17g",
                      a->cfg.block, a->cfg.unroll, a->cfg.chunk, a->cfg.hint, a->grid, (unsigned long long)n, s);
    if (a->cfg.fin) {
        float r;
        unsigned int tk;
        CU(cudaMemcpyAsync(&r, G.result, sizeof(r), cudaMemcpyDeviceToHost, G.stream));
        CU(cudaMemcpyAsync(&tk, G.ticket, sizeof(tk), cudaMemcpyDeviceToHost, G.stream));
        CU(cudaStreamSynchronize(G.stream));
        if ((double)r != (double)n || tk != 0)
            GR_TEST_FAIL_("read+fin block=%d unroll=%d chunk=%d grid=%d n=%llu: result %.9g, ticket %u",
                          a->cfg.block, a->cfg.unroll, a->cfg.chunk, a->grid, (unsigned long long)n, (double)r, tk);
    }
    G.n = saved;
}

static void check_fast(void)
{
    gr_cuda_result_poison(G.fres_h);
    run_fast(NULL, G.in);
    CU(cudaStreamSynchronize(G.stream));
    if (G.fres_h->f != (double)G.n)
        GR_TEST_FAIL_("fast kernel n=%llu: %.17g", (unsigned long long)G.n, G.fres_h->f);
}

static void check_cub(void)
{
    CU(cudaMemsetAsync(G.cub_out, 0xFF, sizeof(double), G.stream));
    run_cub(NULL, G.in);
    double r;
    CU(cudaMemcpyAsync(&r, G.cub_out, sizeof(r), cudaMemcpyDeviceToHost, G.stream));
    CU(cudaStreamSynchronize(G.stream));
    if (r != (double)G.n)
        GR_TEST_FAIL_("cub n=%llu: %.17g", (unsigned long long)G.n, r);
}

/* ---- set-up ---------------------------------------------------------------------------- */

static void setup(uint64_t max_n)
{
    int dev = 0;
    CU(cudaGetDevice(&dev));
    CU(cudaDeviceGetAttribute(&G.sms, cudaDevAttrMultiProcessorCount, dev));
    CU(cudaDeviceGetAttribute(&G.l2, cudaDevAttrL2CacheSize, dev));
    G.cc = gr_cuda_device_cc(dev);
    G.fast_block = gr_tuning_for(GR_KF_FAST, GR_C_F32, G.cc).block;
    CU(cudaStreamCreateWithFlags(&G.stream, cudaStreamNonBlocking));
    CU(cudaHostAlloc((void **)&G.hold_host, 2 * sizeof(int), cudaHostAllocMapped));
    G.late_host = G.hold_host + 1;
    *G.hold_host = 0;
    *G.late_host = 0;
    CU(cudaHostGetDevicePointer((void **)&G.hold_dev, G.hold_host, 0));
    G.late_dev = G.hold_dev + 1;
    for (int i = 0; i < 2 * ITERS; ++i)
        CU(cudaEventCreate(&G.ev[i]));
    /* the largest set: max_n floats x as many buffers as 2 x L2 needs, at least 2 */
    const uint64_t set_bytes = 2u * (uint64_t)G.l2 + max_n * 4u;
    CU(cudaMalloc((void **)&G.in, set_bytes + 64u * 256u));
    CU(rf_launch_ones(G.in, set_bytes / 4u + 64u * 64u, G.stream));
    CU(cudaMalloc((void **)&G.partials, 32768 * sizeof(float)));
    CU(cudaMalloc((void **)&G.ticket, sizeof(unsigned int)));
    CU(cudaMemsetAsync(G.ticket, 0, sizeof(unsigned int), G.stream));
    CU(cudaMalloc((void **)&G.result, sizeof(float)));
    CU(cudaMalloc(&G.scratch, (size_t)GR_CUDA_GRID_MAX * GR_CUDA_SCRATCH_BYTES_PER_BLOCK));
    CU(cudaMalloc((void **)&G.fticket, sizeof(unsigned int)));
    CU(cudaMemsetAsync(G.fticket, 0, sizeof(unsigned int), G.stream));
    CU(cudaHostAlloc((void **)&G.fres_h, sizeof(gr_local_t), cudaHostAllocMapped));
    CU(cudaHostGetDevicePointer((void **)&G.fres_d, G.fres_h, 0));
    CU(cudaMalloc((void **)&G.cub_out, sizeof(double)));
    CU(cudaStreamSynchronize(G.stream));
}

/* The group n: nbuf buffers 256 bytes apart beyond n floats (16-byte aligned), >= 2 x L2 in all. */
static void set_group(uint64_t n)
{
    G.n = n;
    G.stride_elems = (n + 63u) / 64u * 64u;
    const uint64_t need = 2u * (uint64_t)G.l2;
    G.nbuf = (int)((need + G.stride_elems * 4u - 1u) / (G.stride_elems * 4u));
    if (G.nbuf < 2)
        G.nbuf = 2;
    size_t tb = 0;
    CU(gr_bench_cub_sum(GR_C_F32, G.in, n, G.cub_out, NULL, &tb, G.stream));
    if (tb > G.cub_temp_bytes) {
        if (G.cub_temp)
            CU(cudaFree(G.cub_temp));
        CU(cudaMalloc(&G.cub_temp, tb));
        G.cub_temp_bytes = tb;
    }
    int occ = 0;
    CU(gr_cuda_reduce_occupancy(GR_C_F32, GR_C_SUM, G.fast_block, &occ));
    g_fast_grid = gr_cuda_grid(GR_KF_FAST, G.cc, n, GR_C_F32, G.fast_block, G.sms, occ);
}

static const int BLOCKS[] = {128, 256, 512, 1024};
static const int UNROLLS[] = {4, 8, 16};

/* The grids tried for (cfg, nvec): 1, 2, 4, 8, 16 blocks per SM where resident, and the
 * smallest grid that gives every thread one whole round of loads, when it is smaller. */
static int grids_for(const rf_cfg_t *c, uint32_t nvec, int *grids, int *bps_of)
{
    int occ = 0, ng = 0;
    CU(rf_read_occupancy(c, &occ));
    for (int bps = 1; bps <= 16 && bps <= occ && bps * c->block <= 2048; bps *= 2) {
        grids[ng] = bps * G.sms;
        bps_of[ng++] = bps;
    }
    const uint64_t fit = ((uint64_t)nvec + (uint64_t)c->block * (uint64_t)c->unroll - 1u) /
                         ((uint64_t)c->block * (uint64_t)c->unroll);
    if (ng > 0 && fit < (uint64_t)grids[ng - 1]) {
        grids[ng] = fit < 1 ? 1 : (int)fit;
        bps_of[ng++] = 0;
    }
    return ng;
}

static const char *pattern(const rf_cfg_t *c) { return c->chunk ? "chunk" : "stride"; }

/* ---- check: every shape, awkward sizes --------------------------------------------- */

static void check_all(void)
{
    const uint64_t ns[] = {4, 4u * 1000u, 4u * 262147u, 1u << 22};
    long long checks = 0;
    for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ++ni) {
        set_group(ns[ni]);
        check_fast();
        check_cub();
        checks += 2;
        for (int bi = 0; bi < 4; ++bi)
            for (int ui = 0; ui < 3; ++ui)
                for (int chunk = 0; chunk <= 1; ++chunk)
                    for (int hint = 0; hint <= 1; ++hint)
                        for (int fin = 0; fin <= 1; ++fin) {
                            read_arg_t a = {{BLOCKS[bi], UNROLLS[ui], chunk, hint, fin}, 0};
                            int grids[8], bps[8];
                            const int ng = grids_for(&a.cfg, (uint32_t)(ns[ni] / 4), grids, bps);
                            ASSERT(ng > 0);
                            for (int gi = 0; gi < ng; ++gi) {
                                a.grid = grids[gi];
                                check_read(&a, ns[ni]);
                                ++checks;
                            }
                            a.grid = 1; /* one block reads everything */
                            check_read(&a, ns[ni]);
                            ++checks;
                        }
    }
    printf("read floor: %lld checks passed (every shape's sum of all ones, fast kernel, cub)\n", checks);
}

/* ---- sweep ------------------------------------------------------------------------------ */

static void row(const char *what, uint64_t n, double us)
{
    printf("rf n=2^%-2d %-58s %9.2f us %8.1f GB/s\n", __builtin_ctzll(n), what, us, (double)n * 4.0 / us * 1e-3);
    fflush(stdout);
}

static void sweep(void)
{
    const uint64_t ns[] = {1u << 20, 1u << 22, 1u << 24};
    printf("read floor: %d SMs, L2 %d MiB; f32 all ones; median of %d runs behind a hold kernel, "
           "one event pair a run, input rotated over >= 2 x L2\n",
           G.sms, G.l2 >> 20, ITERS);
    for (size_t ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ++ni) {
        const uint64_t n = ns[ni];
        set_group(n);
        char what[128];
        check_cub();
        const double t_cub = time_runs(run_cub, NULL);
        row("cub::DeviceReduce::Sum (two launches)", n, t_cub);
        check_fast();
        const double t_fast = time_runs(run_fast, NULL);
        snprintf(what, sizeof(what), "fast kernel (gpureduce tuned), grid %d x 256", g_fast_grid);
        row(what, n, t_fast);
        const int eg[][2] = {{1, 32}, {g_fast_grid, 256}, {G.sms * 8, 256}, {G.sms * 2, 1024}};
        double t_empty1 = 0;
        for (int e = 0; e < 4; ++e) {
            const double t = time_runs(run_empty, eg[e]);
            if (e == 0)
                t_empty1 = t;
            snprintf(what, sizeof(what), "empty kernel, grid %d x %d", eg[e][0], eg[e][1]);
            row(what, n, t);
        }
        read_arg_t best = {{0, 0, 0, 0, 0}, 0};
        double t_best = 1e30;
        for (int bi = 0; bi < 4; ++bi)
            for (int ui = 0; ui < 3; ++ui)
                for (int chunk = 0; chunk <= 1; ++chunk)
                    for (int hint = 0; hint <= (UNROLLS[ui] == 8); ++hint) {
                        read_arg_t a = {{BLOCKS[bi], UNROLLS[ui], chunk, hint, 0}, 0};
                        int grids[8], bps[8];
                        const int ng = grids_for(&a.cfg, (uint32_t)(n / 4), grids, bps);
                        for (int gi = 0; gi < ng; ++gi) {
                            a.grid = grids[gi];
                            check_read(&a, n);
                            const double t = time_runs(run_read, &a);
                            char bpsbuf[8];
                            if (bps[gi])
                                snprintf(bpsbuf, sizeof(bpsbuf), "%d", bps[gi]);
                            else
                                snprintf(bpsbuf, sizeof(bpsbuf), "fit");
                            snprintf(what, sizeof(what), "read block %4d grid %5d (%s/SM) unroll %2d %-6s%s",
                                     a.cfg.block, a.grid, bpsbuf, a.cfg.unroll, pattern(&a.cfg),
                                     a.cfg.hint ? " L2::256B" : "");
                            row(what, n, t);
                            if (t < t_best) {
                                t_best = t;
                                best = a;
                            }
                        }
                    }
        /* the fast kernel's shape as a plain read, and both with the fast kernel's end */
        read_arg_t like = {{G.fast_block, GR_TUNE_FAST_LOADS, 0, 0, 0}, g_fast_grid};
        check_read(&like, n);
        const double t_like = time_runs(run_read, &like);
        like.cfg.fin = 1;
        check_read(&like, n);
        const double t_like_fin = time_runs(run_read, &like);
        best.cfg.fin = 1;
        check_read(&best, n);
        const double t_best_fin = time_runs(run_read, &best);
        printf("rf summary n=2^%d: cub %.2f us; fast kernel %.2f (x%.3f cub); empty launch %.2f; "
               "fastest read %.2f (block %d grid %d unroll %d %s%s), with the ticket end %.2f; "
               "the fast kernel's shape %.2f, with the end %.2f; 1.25x cub needs %.2f, 1.8x cub %.2f\n",
               __builtin_ctzll(n), t_cub, t_fast, t_cub / t_fast, t_empty1, t_best, best.cfg.block, best.grid,
               best.cfg.unroll, pattern(&best.cfg), best.cfg.hint ? " L2::256B" : "", t_best_fin, t_like,
               t_like_fin, t_cub / 1.25, t_cub / 1.8);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1)
        GR_TEST_SKIP("no CUDA device visible");
    const int do_sweep = argc > 1 && !strcmp(argv[1], "--sweep");
    if (argc > 1 && !do_sweep) {
        fprintf(stderr, "usage: %s [--sweep]\n", argv[0]);
        return 2;
    }
    setup(1u << 24);
    if (do_sweep)
        sweep();
    else
        check_all();
    return 0;
}
