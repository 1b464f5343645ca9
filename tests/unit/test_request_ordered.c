/*
 * test_request_ordered.c - the core's side of ordered results (gr_call_t.ordered,
 * src/core/request.c) without a GPU: a cpu-backend context whose backend table
 * is a copy with a recording order_arm / order_release (and a deliver, so
 * result_dev is accepted). Under mpirun -np 1 and 2 (ctest request_ordered_np*):
 *  - every ordered request is armed once and released exactly once, with the
 *    bits gr_wait / gr_test return, and nothing goes through deliver;
 *  - the release comes as soon as this rank has the values: one rank releases
 *    a host batch within its start (the combine is a copy); two requests are
 *    released in request order whatever order they are waited for in;
 *  - a rank-local failure releases values with valid 0 on every rank;
 *  - a request never waited for is released by gr_ctx_destroy;
 *  - a plain result_dev (not ordered) still goes through deliver.
 * The GPU side (the release kernel, the kernels' own value writes) is
 * test_embed_gpu's part 5.
 */
#include "gr_internal.h"
#include "test.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

enum { SLOTS = 64, K = 2, N = 1000 };

typedef struct {
    void *dst;
    size_t n;
    int released; /* times */
    int order;    /* when it was released (1, 2, ...) */
} fake_slot_t;

static fake_slot_t g_slot[SLOTS];
static int g_nslots, g_releases, g_delivers;
static gr_backend_ops_t g_ops;

static gr_result_t fake_arm(gr_ctx_t ctx, void *stream, void *dst, size_t n, int *token)
{
    (void)ctx;
    ASSERT(stream != NULL);
    ASSERT(g_nslots < SLOTS);
    g_slot[g_nslots] = (fake_slot_t){dst, n, 0, 0};
    *token = g_nslots++;
    return GR_SUCCESS;
}

static void fake_release(gr_ctx_t ctx, int token, const void *bytes, size_t n)
{
    (void)ctx;
    ASSERT(token >= 0 && token < g_nslots);
    ASSERT_EQ_U(n, g_slot[token].n);
    memcpy(g_slot[token].dst, bytes, n);
    g_slot[token].released++;
    g_slot[token].order = ++g_releases;
}

static gr_result_t fake_deliver(gr_ctx_t ctx, void *state, void *stream, void *dst, const void *bytes, size_t n)
{
    (void)ctx;
    (void)state;
    (void)stream;
    memcpy(dst, bytes, n);
    g_delivers++;
    return GR_SUCCESS;
}

/* A cpu context with the recording table. */
static gr_ctx_t fake_ctx(void)
{
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.backend = GR_BACKEND_CPU;
    cfg.cpu_threads = 1;
    gr_ctx_t ctx = NULL;
    ASSERT_EQ_I(gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx), GR_SUCCESS);
    g_ops = *ctx->ops;
    g_ops.deliver = fake_deliver;
    g_ops.order_arm = fake_arm;
    g_ops.order_release = fake_release;
    ctx->ops = &g_ops;
    return ctx;
}

static int rank, size;
static double xs[N], ys[N];
static int dummy_stream;

/* k = 2 items on host memory: x.y and ||x|| (x NULL on `bad` ranks: a rank-local failure). */
static void items2(gr_batch_item_t *it, const double *x)
{
    for (int j = 0; j < K; ++j) {
        gr_batch_item_init(&it[j]);
        it[j].desc.dtype = GR_F64;
        it[j].desc.mode = j ? GR_MODE_EXACT : GR_MODE_FAST;
        it[j].desc.all_ranks = 1;
        it[j].desc.op.kind = j ? GR_OP_NRM2 : GR_OP_DOT;
        it[j].x = x;
        it[j].y = j ? NULL : ys;
        it[j].count = N;
    }
}

static gr_request_t start(gr_ctx_t ctx, const double *x, gr_value_t *dst, int ordered)
{
    gr_batch_item_t it[K];
    items2(it, x);
    gr_call_t call;
    gr_call_init(&call);
    call.stream = (gr_stream_t)&dummy_stream;
    call.result_dev = dst;
    call.ordered = ordered;
    gr_request_t q = NULL;
    ASSERT_EQ_I(gr_ireduce_batch_host(ctx, it, K, &call, &q), GR_SUCCESS);
    ASSERT(q != NULL);
    return q;
}

static void same_values(const gr_value_t *a, const gr_value_t *b, int k, const char *what)
{
    if (memcmp(a, b, sizeof(*a) * (size_t)k) != 0)
        GR_TEST_FAIL_("%s: the released values are not gr_wait's (first f %.17g vs %.17g)", what, a[0].f, b[0].f);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < N; ++i) {
        xs[i] = 1.0 + (double)((i * 37 + rank * 11) % 101) / 7.0;
        ys[i] = (double)((i * 13) % 17) - 8.0;
    }
    gr_ctx_t ctx = fake_ctx();
    gr_value_t dst[4][K], out[4][K], ref[K];
    memset(dst, 0xFF, sizeof(dst));

    /* the blocking batch: the reference bits */
    gr_batch_item_t it[K];
    items2(it, xs);
    ASSERT_EQ_I(gr_reduce_batch_host(ctx, it, K, ref, NULL), GR_SUCCESS);

    /* 1. one ordered request: armed once, released once with gr_wait's bits; one rank releases at the start */
    gr_request_t q = start(ctx, xs, dst[0], 1);
    ASSERT_EQ_I(g_nslots, 1);
    if (size == 1)
        ASSERT_EQ_I(g_slot[0].released, 1); /* the host batch is reduced and combined within the start */
    ASSERT_EQ_I(gr_wait(&q, out[0], NULL), GR_SUCCESS);
    ASSERT_EQ_I(g_slot[0].released, 1);
    same_values(dst[0], out[0], K, "ordered batch");
    same_values(out[0], ref, K, "ordered batch vs the blocking batch");
    ASSERT_EQ_I(g_delivers, 0);

    /* 2. two requests waited for in reverse: released in request order, each once; gr_test completes too */
    gr_request_t a = start(ctx, xs, dst[1], 1), b = start(ctx, xs, dst[2], 1);
    ASSERT_EQ_I(gr_wait(&b, out[2], NULL), GR_SUCCESS);
    ASSERT_EQ_I(g_slot[1].released, 1); /* a's values were there first: released on the way to b */
    ASSERT_EQ_I(g_slot[2].released, 1);
    ASSERT(g_slot[1].order < g_slot[2].order);
    int done = 0;
    while (!done)
        ASSERT_EQ_I(gr_test(&a, &done, out[1], NULL), GR_SUCCESS);
    ASSERT_EQ_I(g_slot[1].released, 1);
    same_values(dst[1], out[1], K, "first of two");
    same_values(dst[2], out[2], K, "second of two");
    same_values(out[1], ref, K, "first of two vs the blocking batch");

    /* 3. a rank-local failure (the last rank's x is NULL): every rank's stream gets valid 0 */
    q = start(ctx, rank == size - 1 ? NULL : xs, dst[3], 1);
    ASSERT_EQ_I(gr_wait(&q, out[3], NULL), GR_ERR_INVALID_ARG);
    ASSERT_EQ_I(g_slot[3].released, 1);
    for (int j = 0; j < K; ++j)
        ASSERT_EQ_I(dst[3][j].valid, 0);

    /* 4. not ordered: result_dev still goes through deliver, nothing is armed */
    const int slots = g_nslots;
    q = start(ctx, xs, dst[0], 0);
    ASSERT_EQ_I(gr_wait(&q, out[0], NULL), GR_SUCCESS);
    ASSERT_EQ_I(g_nslots, slots);
    ASSERT_EQ_I(g_delivers, K);
    ASSERT_EQ_I(gr_ctx_destroy(ctx), GR_SUCCESS);

    /* 5. a request never waited for: gr_ctx_destroy releases it */
    ctx = fake_ctx();
    memset(dst[0], 0xFF, sizeof(dst[0]));
    q = start(ctx, xs, dst[0], 1);
    ASSERT_EQ_I(gr_ctx_destroy(ctx), GR_SUCCESS);
    ASSERT_EQ_I(g_slot[g_nslots - 1].released, 1);
    same_values(dst[0], ref, K, "released by gr_ctx_destroy");

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_request_ordered: ok (%d ranks)\n", size);
    MPI_Finalize();
    return 0;
}
