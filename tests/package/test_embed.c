/*
 * test_embed.c - the embedding contract on any backend (issue 19), under
 * mpirun -np 1 and 3:
 *  - gr_config_init's defaults, and the size field (an older, shorter
 *    gr_config_t keeps the defaults of what it lacks; size 0 is refused);
 *  - a context with the defaults plus a call leave the process's CPU
 *    affinity as it was, and bind nothing;
 *  - overlapped non-blocking reductions (started together, tested, waited
 *    for in reverse order, a blocking call in between) give the same bits as
 *    the blocking calls;
 *  - GR_REQUEST_MAX, a rank-local failure reported at gr_wait on every rank
 *    that holds the result, and a context destroyed with a request outstanding;
 *  - what bindings use: gr_last_error's line after a failed call (and "" after
 *    gr_clear_last_error), gr_version, gr_ctx_set_stream.
 */
#define _GNU_SOURCE
#include "embed_common.h"

#include <mpi.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

static int rank, size;

/* deterministic, rank-dependent values with mixed magnitudes and signs */
static double value_at(uint64_t i)
{
    uint64_t z = (uint64_t)rank * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull + 1;
    z ^= z >> 31;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 29;
    double u = (double)(z >> 11) * 0x1p-53 - 0.5;
    return u * ((i % 7 == 0) ? 1e10 : 1.0);
}

static void test_config_defaults(void)
{
    gr_config_t cfg;
    memset(&cfg, 0x5A, sizeof(cfg));
    gr_config_init(&cfg);
    ASSERT_EQ_U(cfg.size, sizeof(gr_config_t));
    ASSERT_EQ_I(cfg.bind, GR_BIND_NONE);
    ASSERT_EQ_I(cfg.device, GR_DEVICE_AUTO);
    ASSERT(cfg.stream == NULL);
    ASSERT_EQ_I(cfg.backend, GR_BACKEND_AUTO);

    gr_ctx_t ctx = (gr_ctx_t)&cfg; /* must be reset to NULL on failure */
    cfg.size = 0;
    EXPECT_R(gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx), GR_ERR_INVALID_ARG);
    ASSERT(ctx == NULL);
    gr_config_init(&cfg);
    cfg.device = -7;
    EXPECT_R(gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx), GR_ERR_INVALID_ARG);

    /* a program built against the layout before `device`: the fields after it
     * are not read (garbage there must not matter) */
    gr_config_init(&cfg);
    cfg.backend = GR_BACKEND_CPU;
    cfg.size = offsetof(gr_config_t, device);
    cfg.device = 12345;
    cfg.stream = (gr_stream_t)&cfg;
    OK(gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx));
    ASSERT_EQ_I(gr_ctx_backend(ctx), GR_BACKEND_CPU);
    OK(gr_ctx_destroy(ctx));

    gr_call_t call;
    gr_call_init(&call);
    ASSERT_EQ_U(call.size, sizeof(gr_call_t));
    ASSERT(call.stream == NULL && call.result_dev == NULL && call.ordered == 0);
}

/* Defaults change no process-wide state: the CPU affinity is the same after
 * a context (backend auto: cuda where there is a GPU) and a call. */
static void test_affinity_unchanged(void)
{
    cpu_set_t before, after;
    CPU_ZERO(&before);
    CPU_ZERO(&after);
    ASSERT(sched_getaffinity(0, sizeof(before), &before) == 0);
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.share_gpus = 1; /* np 3 on a one-GPU machine; binding stays the default */
    gr_ctx_t ctx = NULL;
    OK(gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx));
    double x[100];
    for (int i = 0; i < 100; ++i)
        x[i] = 1.0;
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = GR_F64;
    gr_value_t v;
    OK(gr_reduce_host(ctx, x, 100, &d, &v, NULL));
    if (rank == 0)
        ASSERT_BITS_EQ(v.f, 100.0 * size);
    ASSERT(sched_getaffinity(0, sizeof(after), &after) == 0);
    if (!CPU_EQUAL(&before, &after))
        GR_TEST_FAIL_("CPU affinity changed by gr_ctx_create + gr_reduce_host with the defaults (%d -> %d CPUs)",
                      CPU_COUNT(&before), CPU_COUNT(&after));
    const gr_placement_t *pl = gr_ctx_placement(ctx);
    if (strncmp(pl->bound, "nothing", 7) != 0)
        GR_TEST_FAIL_("the default binding bound something: \"%s\"", pl->bound);
    OK(gr_ctx_destroy(ctx));
}

enum { NJOBS = 6 };

typedef struct job {
    gr_desc_t d;
    const void *ptr;
    uint64_t n;
} job_t;

static void test_overlapped_same_bits(gr_ctx_t ctx)
{
    enum { N64 = 300000, N32 = 120000, NI = 50000 };
    double *a = malloc(sizeof(double) * N64);
    float *b = malloc(sizeof(float) * N32);
    int64_t *c = malloc(sizeof(int64_t) * NI);
    ASSERT(a && b && c);
    for (uint64_t i = 0; i < N64; ++i)
        a[i] = value_at(i);
    for (uint64_t i = 0; i < N32; ++i)
        b[i] = (float)value_at(i + 7);
    for (uint64_t i = 0; i < NI; ++i)
        c[i] = (int64_t)(fmod(value_at(i), 1.0) * 1e6) * (int64_t)(i % 1000 + 1); /* |c| < 2^30 */

    job_t jobs[NJOBS];
    for (int k = 0; k < NJOBS; ++k)
        gr_desc_init(&jobs[k].d);
    jobs[0].d.dtype = GR_F64, jobs[0].ptr = a, jobs[0].n = N64;
    jobs[1].d.dtype = GR_F64, jobs[1].d.mode = GR_MODE_EXACT, jobs[1].d.all_ranks = 1, jobs[1].ptr = a,
    jobs[1].n = N64;
    jobs[2].d.dtype = GR_F32, jobs[2].d.op.kind = GR_OP_SUMSQ, jobs[2].d.root = size - 1, jobs[2].ptr = b,
    jobs[2].n = N32;
    jobs[3].d.dtype = GR_I64, jobs[3].d.mode = GR_MODE_EXACT, jobs[3].d.all_ranks = 1, jobs[3].ptr = c,
    jobs[3].n = NI;
    jobs[4].d.dtype = GR_F64, jobs[4].d.op.kind = GR_OP_MAX, jobs[4].d.all_ranks = 1, jobs[4].ptr = a,
    jobs[4].n = N64;
    jobs[5].d.dtype = GR_F32, jobs[5].d.mode = GR_MODE_EXACT, jobs[5].ptr = b, jobs[5].n = rank == 0 ? 0 : N32;

    gr_value_t blocking[NJOBS], nb[NJOBS];
    for (int k = 0; k < NJOBS; ++k)
        OK(gr_reduce_host(ctx, jobs[k].ptr, jobs[k].n, &jobs[k].d, &blocking[k], NULL));

    /* all started, a blocking call while they are outstanding, a few tests,
     * then waited for last first */
    gr_request_t req[NJOBS];
    for (int k = 0; k < NJOBS; ++k) {
        OK(gr_ireduce_host(ctx, jobs[k].ptr, jobs[k].n, &jobs[k].d, NULL, &req[k]));
        ASSERT(req[k] != NULL);
    }
    gr_value_t mid;
    OK(gr_reduce_host(ctx, jobs[0].ptr, jobs[0].n, &jobs[0].d, &mid, NULL));
    assert_same_value(&mid, &blocking[0], "blocking call between non-blocking ones");
    int done[NJOBS] = {0};
    for (int k = NJOBS - 1; k >= 0; --k)
        if (rank % 2 == 0) /* ranks test differently: the order of combines must not depend on it */
            OK(gr_test(&req[k], &done[k], &nb[k], NULL));
    for (int k = NJOBS - 1; k >= 0; --k) {
        if (done[k]) {
            ASSERT(req[k] == NULL);
            continue;
        }
        gr_timing_t t;
        OK(gr_wait(&req[k], &nb[k], &t));
        ASSERT(req[k] == NULL);
        ASSERT(t.total >= 0 && t.local >= 0 && t.combine >= 0);
    }
    for (int k = 0; k < NJOBS; ++k) {
        char what[64];
        snprintf(what, sizeof(what), "job %d, non-blocking vs blocking", k);
        assert_same_value(&nb[k], &blocking[k], what);
    }
    /* the expected holders of each result */
    ASSERT(blocking[1].valid && blocking[3].valid && blocking[4].valid);
    ASSERT_EQ_I(blocking[2].valid, rank == size - 1);
    ASSERT_EQ_I(blocking[0].valid, rank == 0);

    /* gr_test until done completes too */
    gr_request_t r = NULL;
    OK(gr_ireduce_host(ctx, a, N64, &jobs[1].d, NULL, &r));
    int fin = 0;
    gr_value_t tv;
    while (!fin)
        OK(gr_test(&r, &fin, &tv, NULL));
    assert_same_value(&tv, &blocking[1], "gr_test loop");
    free(a);
    free(b);
    free(c);
}

static void test_limits_and_failures(gr_ctx_t ctx)
{
    double x[64];
    for (int i = 0; i < 64; ++i)
        x[i] = i;
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = GR_F64;
    d.all_ranks = 1;
    gr_request_t req[GR_REQUEST_MAX + 1];
    for (int k = 0; k < GR_REQUEST_MAX; ++k)
        OK(gr_ireduce_host(ctx, x, 64, &d, NULL, &req[k]));
    EXPECT_R(gr_ireduce_host(ctx, x, 64, &d, NULL, &req[GR_REQUEST_MAX]), GR_ERR_INVALID_ARG);
    ASSERT(req[GR_REQUEST_MAX] == NULL);
    for (int k = 0; k < GR_REQUEST_MAX; ++k) {
        gr_value_t v;
        OK(gr_wait(&req[k], &v, NULL));
        ASSERT_BITS_EQ(v.f, 2016.0 * size);
    }

    /* bad options: refused at once, alike on every rank */
    gr_call_t call;
    gr_call_init(&call);
    call.size = 0;
    gr_request_t q = NULL;
    EXPECT_R(gr_ireduce_host(ctx, x, 64, &d, &call, &q), GR_ERR_INVALID_ARG);
    ASSERT(q == NULL);
    EXPECT_R(gr_wait(&q, NULL, NULL), GR_ERR_INVALID_ARG);

    /* a rank-local failure: the last rank passes NULL data; every rank (all_ranks) learns it at gr_wait */
    const int bad = size - 1;
    OK(gr_ireduce_host(ctx, rank == bad ? NULL : x, 64, &d, NULL, &q));
    gr_value_t v;
    EXPECT_R(gr_wait(&q, &v, NULL), GR_ERR_INVALID_ARG);
    ASSERT(!v.valid);

    /* device memory or a device result on a host-only backend: the same way */
    if (gr_ctx_backend(ctx) == GR_BACKEND_CPU) {
        OK(gr_ireduce_device(ctx, x, 64, &d, NULL, &q));
        EXPECT_R(gr_wait(&q, &v, NULL), GR_ERR_INVALID_ARG);
        gr_call_init(&call);
        call.result_dev = x;
        OK(gr_ireduce_host(ctx, x, 64, &d, &call, &q));
        EXPECT_R(gr_wait(&q, &v, NULL), GR_ERR_INVALID_ARG);
        /* an ordered result there: the same, the request still completes (a stream, as asked) */
        call.stream = (gr_stream_t)&call;
        call.ordered = 1;
        OK(gr_ireduce_host(ctx, x, 64, &d, &call, &q));
        EXPECT_R(gr_wait(&q, &v, NULL), GR_ERR_INVALID_ARG);
    }
    /* ordered with nowhere to put the values, or no stream to order them on: refused at the start */
    gr_call_init(&call);
    call.ordered = 1;
    call.stream = (gr_stream_t)&call;
    EXPECT_R(gr_ireduce_host(ctx, x, 64, &d, &call, &q), GR_ERR_INVALID_ARG);
    ASSERT(q == NULL);
    call.stream = NULL;
    call.result_dev = x;
    if (gr_ctx_backend(ctx) == GR_BACKEND_CPU) /* the context here has no stream */
        EXPECT_R(gr_ireduce_host(ctx, x, 64, &d, &call, &q), GR_ERR_INVALID_ARG);
    ASSERT(q == NULL);
    /* and the context still works */
    OK(gr_ireduce_host(ctx, x, 64, &d, NULL, &q));
    OK(gr_wait(&q, &v, NULL));
    ASSERT_BITS_EQ(v.f, 2016.0 * size);
}

static void test_binding_helpers(gr_ctx_t ctx)
{
    ASSERT_STREQ(gr_version(), GR_VERSION_STRING);
    ASSERT_EQ_I(gr_ctx_set_stream(NULL, NULL), GR_ERR_INVALID_ARG);
    OK(gr_ctx_set_stream(ctx, NULL));
    gr_clear_last_error();
    char line[512];
    ASSERT_EQ_U(gr_last_error(line, sizeof(line)), 0);
    ASSERT_STREQ(line, "");
    double x[4] = {1, 2, 3, 4};
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = GR_F64;
    d.root = size; /* not a rank: every rank fails and logs why */
    gr_value_t v;
    ASSERT_EQ_I(gr_reduce_host(ctx, x, 4, &d, &v, NULL), GR_ERR_INVALID_ARG);
    size_t n = gr_last_error(line, sizeof(line));
    ASSERT(n > 0 && n == strlen(line));
    ASSERT(strstr(line, "[rank ") == line && strstr(line, "is not a rank of the communicator") != NULL);
    char cut[8];
    ASSERT_EQ_U(gr_last_error(cut, sizeof(cut)), n); /* the full length, the copy cut to fit */
    ASSERT_EQ_U(strlen(cut), sizeof(cut) - 1);
    gr_clear_last_error();
    ASSERT_EQ_U(gr_last_error(NULL, 0), 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    test_config_defaults();
    test_affinity_unchanged();

    gr_ctx_t ctx = embed_cpu_ctx(2);
    test_overlapped_same_bits(ctx);
    test_limits_and_failures(ctx);
    test_binding_helpers(ctx);

    /* destroyed with a request outstanding: completed (result dropped), no hang */
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = GR_F64;
    gr_request_t q = NULL;
    OK(gr_ireduce_host(ctx, x, 8, &d, NULL, &q));
    OK(gr_ctx_destroy(ctx));

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_embed: ok (%d ranks)\n", size);
    MPI_Finalize();
    return 0;
}
