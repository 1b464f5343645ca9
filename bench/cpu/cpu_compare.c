/*
 * cpu_compare.c - gr_cpu_compare: the cpu backend against plain C on the same
 * buffers, in one process (bench/cpu/cpu-vs-numpy.py adds numpy and the ratios).
 *
 *   gr_cpu_compare [--n N] [--reps R] [--threads T] [--calls C] [--small M] [--pages huge|small]
 *
 * Rows (median of R timed runs after one warm-up; GB/s = bytes read / s):
 *   loop   a plain C read loop, 8 f64 accumulators (what a C programmer
 *          writes so the adds are not latency bound; no -ffast-math), on 1
 *          and on T threads (pthreads, contiguous parts, created per run)
 *   fast   gr_reduce_host, fast mode, a cpu context of 1 and of T threads
 *   exact  the same in exact mode
 * for f32 and f64 uniform [0, 1) data of N elements. Then the per-call cost
 * at M f64 elements (median over 5 batches of C calls, all-reduce on
 * MPI_COMM_WORLD): the loop with one accumulator (`s += x[i]`, what most
 * code has) + MPI_Allreduce, the 8-accumulator loop + MPI_Allreduce, and
 * gr_reduce_host with all_ranks (fast, exact). Output: one "row" / "call" line each, for scripts.
 * Buffers: 2 MiB aligned and madvise(MADV_HUGEPAGE) (--pages huge, the
 * default), as numpy does for its arrays, so the numpy rows of
 * cpu-vs-numpy.py and these read memory of the same page size (4 KiB pages
 * cost numpy's f64 sum 18% on the development VM: 24.3 against 29.5 GB/s);
 * --pages small: plain malloc.
 * Uses the public API only; never linked into the library.
 */
#define _GNU_SOURCE
#include "gpureduce.h"

#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
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

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static volatile double sink;

/* bytes of memory, transparent huge pages asked for when huge (the kernel may
 * still give small ones: THP off, or no free huge page) */
static void *bench_alloc(size_t bytes, int huge)
{
    if (!huge)
        return malloc(bytes);
    const size_t hp = (size_t)2 << 20;
    void *p = NULL;
    bytes = (bytes + hp - 1) / hp * hp;
    if (posix_memalign(&p, hp, bytes) != 0)
        return NULL;
#if defined(MADV_HUGEPAGE)
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

/* ---- the plain loop ----------------------------------------------------- */

static double loop_f64(const double *x, uint64_t n)
{
    double a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l)
            a[l] += x[i + (uint64_t)l];
    for (; i < n; ++i)
        a[0] += x[i];
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

static double loop_f32(const float *x, uint64_t n)
{
    double a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l)
            a[l] += (double)x[i + (uint64_t)l];
    for (; i < n; ++i)
        a[0] += (double)x[i];
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

/* The loop most programs have: one accumulator, so one add latency per element. */
static double loop_naive_f64(const double *x, uint64_t n)
{
    double s = 0;
    for (uint64_t i = 0; i < n; ++i)
        s += x[i];
    return s;
}

typedef struct loop_arg {
    const void *x;
    uint64_t n;
    int f32;
    double r;
} loop_arg_t;

static void *loop_thread(void *p)
{
    loop_arg_t *a = (loop_arg_t *)p;
    a->r = a->f32 ? loop_f32((const float *)a->x, a->n) : loop_f64((const double *)a->x, a->n);
    return NULL;
}

static double loop_mt(const void *x, uint64_t n, int f32, int threads)
{
    pthread_t tid[256];
    loop_arg_t arg[256];
    size_t esz = f32 ? 4 : 8;
    for (int t = 0; t < threads; ++t) {
        uint64_t b = n * (uint64_t)t / (uint64_t)threads, e = n * (uint64_t)(t + 1) / (uint64_t)threads;
        arg[t].x = (const char *)x + b * esz;
        arg[t].n = e - b;
        arg[t].f32 = f32;
        if (t > 0 && pthread_create(&tid[t], NULL, loop_thread, &arg[t]) != 0) {
            fprintf(stderr, "gr_cpu_compare: pthread_create failed\n");
            exit(1);
        }
    }
    loop_thread(&arg[0]);
    double r = arg[0].r;
    for (int t = 1; t < threads; ++t) {
        pthread_join(tid[t], NULL);
        r += arg[t].r;
    }
    return r;
}

/* ---- the library --------------------------------------------------------- */

static gr_ctx_t make_ctx(int threads)
{
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.backend = GR_BACKEND_CPU;
    cfg.bind = GR_BIND_NONE;
    cfg.cpu_threads = threads;
    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx);
    if (r != GR_SUCCESS) {
        fprintf(stderr, "gr_cpu_compare: gr_ctx_create(cpu, %d threads): %s\n", threads, gr_strerror(r));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return ctx;
}

static double gr_once(gr_ctx_t ctx, const void *x, uint64_t n, gr_dtype_t t, gr_mode_t m, int all)
{
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = t;
    d.op.kind = GR_OP_SUM;
    d.mode = m;
    d.all_ranks = all;
    gr_value_t v;
    gr_result_t r = gr_reduce_host(ctx, x, n, &d, &v, NULL);
    if (r != GR_SUCCESS) {
        fprintf(stderr, "gr_cpu_compare: gr_reduce_host: %s\n", gr_strerror(r));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return v.f;
}

enum { K_LOOP, K_FAST, K_EXACT };

static double time_row(int kind, gr_ctx_t ctx, int threads, const void *x, uint64_t n, int f32, int reps)
{
    double t[64];
    if (reps > 63)
        reps = 63;
    for (int r = -1; r < reps; ++r) {
        double t0 = now();
        if (kind == K_LOOP)
            sink = loop_mt(x, n, f32, threads);
        else
            sink = gr_once(ctx, x, n, f32 ? GR_F32 : GR_F64, kind == K_EXACT ? GR_MODE_EXACT : GR_MODE_FAST, 0);
        double t1 = now();
        if (r >= 0)
            t[r] = t1 - t0;
    }
    return median(t, reps);
}

static int cores_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    uint64_t n = 1ull << 26, small = 1000;
    int reps = 3, threads = 0, calls = 20000, huge = 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "usage: gr_cpu_compare [--n N] [--reps R] [--threads T] [--calls C] [--small M] "
                            "[--pages huge|small]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (!strcmp(a, "--n"))
            n = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--reps"))
            reps = atoi(v);
        else if (!strcmp(a, "--threads"))
            threads = atoi(v);
        else if (!strcmp(a, "--calls"))
            calls = atoi(v);
        else if (!strcmp(a, "--small"))
            small = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--pages") && (!strcmp(v, "huge") || !strcmp(v, "small")))
            huge = !strcmp(v, "huge");
        else {
            fprintf(stderr, "gr_cpu_compare: unknown option %s\n", a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        ++i;
    }
    if (threads <= 0)
        threads = cores_available();
    if (threads > 256)
        threads = 256;
    if (reps < 1)
        reps = 1;
    if (calls < 1)
        calls = 1;
    if (small < 1)
        small = 1;
    uint64_t alloc_n = n > small ? n : small;
    double *xd = (double *)bench_alloc(alloc_n * sizeof(double), huge);
    float *xf = (float *)bench_alloc(alloc_n * sizeof(float), huge);
    if (!xd || !xf) {
        fprintf(stderr, "gr_cpu_compare: cannot allocate %llu elements\n", (unsigned long long)alloc_n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    uint64_t z = 0x9E3779B97F4A7C15ull;
    for (uint64_t i = 0; i < alloc_n; ++i) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        xd[i] = (double)(z >> 11) * 0x1p-53;
        xf[i] = (float)((double)(z >> 40) * 0x1p-24);
    }
    char host[256] = "?";
    int hl = 0;
    MPI_Get_processor_name(host, &hl);
    printf("# gr_cpu_compare: n %llu, reps %d, threads %d (cores available %d), host %s, %s pages\n",
           (unsigned long long)n, reps, threads, cores_available(), host, huge ? "huge" : "small");
    gr_ctx_t c1 = make_ctx(1), cT = make_ctx(threads);
    int nthr[2] = {1, threads};
    for (int f32 = 1; f32 >= 0; --f32) {
        const void *x = f32 ? (const void *)xf : (const void *)xd;
        double bytes = (double)n * (f32 ? 4 : 8);
        /* every row sums the same numbers: check the values before timing them */
        double ref = loop_mt(x, n, f32, 1);
        for (int m = 0; m < 2; ++m)
            for (int ti = 0; ti < 2; ++ti) {
                double v = gr_once(ti ? cT : c1, x, n, f32 ? GR_F32 : GR_F64, m ? GR_MODE_EXACT : GR_MODE_FAST, 0);
                double tol = m && f32 ? 0x1p-23 : 1e-9; /* exact f32 is rounded to f32 */
                if (!(fabs(v - ref) <= tol * fabs(ref))) {
                    fprintf(stderr, "gr_cpu_compare: %s %s %d thread(s) gives %.17g, the loop %.17g\n",
                            m ? "exact" : "fast", f32 ? "f32" : "f64", nthr[ti], v, ref);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
        for (int k = K_LOOP; k <= K_EXACT; ++k)
            for (int ti = 0; ti < 2; ++ti) {
                if (ti == 1 && threads == 1)
                    continue;
                double s = time_row(k, ti ? cT : c1, nthr[ti], x, n, f32, reps);
                printf("row %s %s %d %.6f %.3f\n", k == K_LOOP ? "loop" : k == K_FAST ? "fast" : "exact",
                       f32 ? "f32" : "f64", nthr[ti], s, bytes / s * 1e-9);
                fflush(stdout);
            }
    }
    /* per call at `small` f64 elements, result on every rank; k = -1: the
     * one-accumulator loop */
    for (int k = -1; k <= K_EXACT; ++k) {
        double b[5];
        for (int batch = -1; batch < 5; ++batch) {
            double t0 = now();
            for (int c = 0; c < calls; ++c) {
                if (k <= K_LOOP) {
                    double loc = k < 0 ? loop_naive_f64(xd, small) : loop_f64(xd, small), all = 0;
                    MPI_Allreduce(&loc, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                    sink = all;
                } else {
                    sink = gr_once(cT, xd, small, GR_F64, k == K_EXACT ? GR_MODE_EXACT : GR_MODE_FAST, 1);
                }
            }
            double t1 = now();
            if (batch >= 0)
                b[batch] = (t1 - t0) / calls;
        }
        printf("call %s %llu %.4f\n",
               k < 0 ? "naive+allreduce" : k == K_LOOP ? "loop+allreduce" : k == K_FAST ? "fast" : "exact",
               (unsigned long long)small, median(b, 5) * 1e6);
    }
    gr_ctx_destroy(c1);
    gr_ctx_destroy(cT);
    free(xd);
    free(xf);
    MPI_Finalize();
    return 0;
}
