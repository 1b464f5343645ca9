/*
 * test_embed_batch.c - the non-blocking batch (gr_ireduce_batch_host /
 * gr_ireduce_batch_device) on the cpu backend, under mpirun -np 1..3:
 *  - a batch of every kind of item (dot, nrm2, argmin/argmax, sum, max,
 *    exact f64 sumsq, integers, halves, an empty item), counts that differ
 *    per item and per rank: gr_wait's k values have the bits (and indices)
 *    of each item's own blocking call, of the blocking batch and, where one
 *    exists, of gr_reduce_host / gr_dot_host; for root 0 and all_ranks;
 *  - two batches and a single reduction overlapped, completed in reverse
 *    order, one of them by gr_test;
 *  - nrm2 / argmax through gr_ireduce_host (a batch of one);
 *  - errors: bad k, NULL arguments, a bad descriptor, a bad root, an
 *    uninitialised gr_call_t (refused at once on every rank); a rank's NULL
 *    data, device memory or result_dev on the cpu backend (reported by
 *    gr_wait on every rank holding results); GR_REQUEST_MAX; a context
 *    destroyed with a batch outstanding.
 */
#include "embed_common.h"

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

static int rank, size;

enum { NITEMS = 14, MAXN = 5000 };

static uint64_t mix(uint64_t z)
{
    z ^= z >> 31;
    z *= 0x94D049BB133111EBull;
    z ^= z >> 29;
    z *= 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 32);
}

/* value of array a at (rank, i): mixed magnitudes and signs, repeated extremes, zeros */
static double value_at(int a, uint64_t i)
{
    uint64_t z = mix((uint64_t)rank * 0x9E3779B97F4A7C15ull + i * 0x2545F4914F6CDD1Dull + (uint64_t)a * 77 + 1);
    double u = (double)(z >> 11) * 0x1p-53 - 0.5;
    if (z % 11 == 0)
        return 0.5; /* ties for argmax */
    if (z % 17 == 0)
        return (z & 1) ? -0.0 : 0.0;
    return u * ((i % 7 == 0) ? 1e10 : 1.0);
}

static void fill(gr_dtype_t t, void *p, uint64_t n, int a)
{
    for (uint64_t i = 0; i < n; ++i) {
        double v = value_at(a, i);
        switch (t) {
        case GR_F64:
            ((double *)p)[i] = v;
            break;
        case GR_F32:
            ((float *)p)[i] = (float)v;
            break;
        case GR_I32:
            ((int32_t *)p)[i] = (int32_t)((int64_t)(v * 1e3) % 1000003);
            break;
        case GR_I64:
            ((int64_t *)p)[i] = (int64_t)(v * 1e6);
            break;
        default: /* f16 / bf16: small integers are exact in both */
            ((uint16_t *)p)[i] = t == GR_F16 ? (uint16_t)(0x3C00u + (uint16_t)(i % 4) * 0x0400u)
                                             : (uint16_t)(0x3F80u + (uint16_t)(i % 4) * 0x0080u);
            break;
        }
    }
}

typedef struct {
    gr_op_kind_t op;
    gr_dtype_t t;
    gr_mode_t mode;
} spec_t;

static const spec_t specs[NITEMS] = {
    {GR_OP_DOT, GR_F64, GR_MODE_FAST},    {GR_OP_DOT, GR_F64, GR_MODE_EXACT}, {GR_OP_DOT, GR_F32, GR_MODE_FAST},
    {GR_OP_NRM2, GR_F64, GR_MODE_FAST},   {GR_OP_NRM2, GR_F32, GR_MODE_EXACT}, {GR_OP_ARGMAX, GR_F32, GR_MODE_FAST},
    {GR_OP_ARGMIN, GR_I32, GR_MODE_FAST}, {GR_OP_SUM, GR_F64, GR_MODE_FAST},  {GR_OP_SUM, GR_F32, GR_MODE_EXACT},
    {GR_OP_MAX, GR_F64, GR_MODE_FAST},    {GR_OP_SUMSQ, GR_F64, GR_MODE_EXACT}, {GR_OP_SUM, GR_I64, GR_MODE_FAST},
    {GR_OP_DOT, GR_F16, GR_MODE_EXACT},   {GR_OP_ARGMAX, GR_F64, GR_MODE_FAST},
};

typedef struct {
    gr_batch_item_t it[NITEMS];
    void *mem[2 * NITEMS];
} batch_t;

/* item j: its own count (rank-dependent; item 13 is empty), data and index base */
static void make_batch(batch_t *b, int root, int all_ranks)
{
    for (int j = 0; j < NITEMS; ++j) {
        gr_batch_item_t *it = &b->it[j];
        gr_batch_item_init(it);
        it->desc.op.kind = specs[j].op;
        it->desc.dtype = specs[j].t;
        it->desc.mode = specs[j].mode;
        it->desc.root = root;
        it->desc.all_ranks = all_ranks;
        it->count = j == NITEMS - 1 ? 0 : (uint64_t)(37 * j + 100 * rank + (j % 3) * 1500 + 1);
        it->index_base = (int64_t)rank * MAXN;
        size_t esz = gr_dtype_size(specs[j].t);
        b->mem[2 * j] = malloc(MAXN * esz);
        b->mem[2 * j + 1] = malloc(MAXN * esz);
        ASSERT(b->mem[2 * j] && b->mem[2 * j + 1]);
        fill(specs[j].t, b->mem[2 * j], it->count, 2 * j);
        fill(specs[j].t, b->mem[2 * j + 1], it->count, 2 * j + 1);
        it->x = b->mem[2 * j];
        it->y = specs[j].op == GR_OP_DOT ? b->mem[2 * j + 1] : NULL;
    }
}

static void free_batch(batch_t *b)
{
    for (int j = 0; j < 2 * NITEMS; ++j)
        free(b->mem[j]);
}

static void same(const gr_value_t *a, const gr_value_t *b, const char *what, int j)
{
    char msg[96];
    snprintf(msg, sizeof(msg), "%s, item %d (%s %s)", what, j, gr_op_name(specs[j].op), gr_dtype_name(specs[j].t));
    assert_same_value(a, b, msg);
    if (a->valid && a->index != b->index)
        GR_TEST_FAIL_("%s: index %lld != %lld", msg, (long long)a->index, (long long)b->index);
}

static void test_same_bits(int root, int all_ranks)
{
    batch_t b;
    make_batch(&b, root, all_ranks);
    gr_ctx_t ctx = embed_cpu_ctx(2);

    /* each item's own blocking call, and the blocking batch */
    gr_value_t sep[NITEMS], blk[NITEMS], nb[NITEMS], nb2[NITEMS], one;
    for (int j = 0; j < NITEMS; ++j)
        OK(gr_reduce_batch_host(ctx, &b.it[j], 1, &sep[j], NULL));
    OK(gr_reduce_batch_host(ctx, b.it, NITEMS, blk, NULL));

    /* non-blocking: two batches and a single reduction in flight, completed in reverse order */
    gr_request_t q1 = NULL, q2 = NULL, q3 = NULL;
    OK(gr_ireduce_batch_host(ctx, b.it, NITEMS, NULL, &q1));
    gr_batch_item_t tail[3] = {b.it[5], b.it[0], b.it[7]}; /* a batch of another shape */
    OK(gr_ireduce_batch_host(ctx, tail, 3, NULL, &q2));
    memset(tail, 0xA5, sizeof(tail)); /* the items were copied: the caller may reuse them */
    OK(gr_ireduce_host(ctx, b.it[7].x, b.it[7].count, &b.it[7].desc, NULL, &q3));
    gr_value_t v3, v2[3];
    OK(gr_wait(&q3, &v3, NULL));
    int done = 0;
    while (!done)
        OK(gr_test(&q2, &done, v2, NULL));
    ASSERT(q2 == NULL);
    gr_timing_t tm;
    OK(gr_wait(&q1, nb, &tm));
    ASSERT(q1 == NULL && tm.total >= tm.local);

    /* a second round, started while a blocking batch runs in between */
    OK(gr_ireduce_batch_host(ctx, b.it, NITEMS, NULL, &q1));
    OK(gr_reduce_batch_host(ctx, b.it, 2, blk + 0, NULL));
    OK(gr_wait(&q1, nb2, NULL));

    for (int j = 0; j < NITEMS; ++j) {
        same(&nb[j], &sep[j], "non-blocking batch vs the item's own call", j);
        same(&nb2[j], &sep[j], "second non-blocking batch vs the item's own call", j);
        same(&blk[j], &sep[j], "blocking batch vs the item's own call", j);
        int holds = all_ranks || rank == root;
        ASSERT_EQ_I(nb[j].valid != 0, holds);
        /* the public single calls, where the item has one */
        if (specs[j].op == GR_OP_DOT) {
            OK(gr_dot_host(ctx, b.it[j].x, b.it[j].y, b.it[j].count, &b.it[j].desc, &one, NULL));
            same(&nb[j], &one, "non-blocking batch vs gr_dot_host", j);
        } else if (specs[j].op != GR_OP_ARGMIN && specs[j].op != GR_OP_ARGMAX) {
            OK(gr_reduce_host(ctx, b.it[j].x, b.it[j].count, &b.it[j].desc, &one, NULL));
            same(&nb[j], &one, "non-blocking batch vs gr_reduce_host", j);
        }
    }
    same(&v3, &sep[7], "single non-blocking reduction", 7);
    same(&v2[0], &sep[5], "second batch", 5);
    same(&v2[1], &sep[0], "second batch", 0);
    same(&v2[2], &sep[7], "second batch", 7);
    if (all_ranks || rank == root) {
        ASSERT(nb[5].index >= 0 && nb[6].index >= 0);
        ASSERT_EQ_I(nb[NITEMS - 1].index, -1); /* empty argmax */
        ASSERT(nb[1].f != 0.0 && isfinite(nb[1].f));
    }

    /* nrm2 and argmax through gr_ireduce_host: a batch of one, index base 0 as gr_reduce_host */
    const int vec_items[2] = {3, 5};
    for (int m = 0; m < 2; ++m) {
        const gr_batch_item_t *it = &b.it[vec_items[m]];
        gr_value_t w, ref;
        OK(gr_reduce_host(ctx, it->x, it->count, &it->desc, &ref, NULL));
        OK(gr_ireduce_host(ctx, it->x, it->count, &it->desc, NULL, &q1));
        OK(gr_wait(&q1, &w, NULL));
        same(&w, &ref, "gr_ireduce_host of a vector op vs gr_reduce_host", vec_items[m]);
    }
    OK(gr_ctx_destroy(ctx));
    free_batch(&b);
}

static void test_errors(void)
{
    gr_ctx_t ctx = embed_cpu_ctx(1);
    double x[64], y[64];
    for (int i = 0; i < 64; ++i) {
        x[i] = i;
        y[i] = 2;
    }
    gr_batch_item_t it[2];
    for (int j = 0; j < 2; ++j) {
        gr_batch_item_init(&it[j]);
        it[j].desc.dtype = GR_F64;
        it[j].desc.op.kind = GR_OP_DOT;
        it[j].desc.all_ranks = 1;
        it[j].x = x;
        it[j].y = y;
        it[j].count = 64;
    }
    gr_request_t q = (gr_request_t)x; /* reset to NULL on failure */
    EXPECT_R(gr_ireduce_batch_host(ctx, it, 0, NULL, &q), GR_ERR_INVALID_ARG);
    ASSERT(q == NULL);
    EXPECT_R(gr_ireduce_batch_host(ctx, it, GR_BATCH_MAX + 1, NULL, &q), GR_ERR_INVALID_ARG);
    EXPECT_R(gr_ireduce_batch_host(ctx, NULL, 1, NULL, &q), GR_ERR_INVALID_ARG);
    EXPECT_R(gr_ireduce_batch_host(NULL, it, 1, NULL, &q), GR_ERR_INVALID_ARG);
    EXPECT_R(gr_ireduce_batch_host(ctx, it, 1, NULL, NULL), GR_ERR_INVALID_ARG);
    EXPECT_R(gr_ireduce_batch_device(ctx, it, 0, NULL, &q), GR_ERR_INVALID_ARG);
    it[1].desc.mode = GR_MODE_EXACT;
    it[1].desc.op.kind = GR_OP_POWSUM;
    it[1].desc.op.power = 3; /* x^3 of f64 is not exact */
    EXPECT_R(gr_ireduce_batch_host(ctx, it, 2, NULL, &q), GR_ERR_UNSUPPORTED);
    ASSERT(q == NULL);
    it[1].desc.mode = GR_MODE_FAST;
    it[1].desc.op.kind = GR_OP_DOT;
    it[0].desc.root = size; /* not a rank */
    EXPECT_R(gr_ireduce_batch_host(ctx, it, 2, NULL, &q), GR_ERR_INVALID_ARG);
    it[0].desc.root = 0;
    gr_call_t call;
    gr_call_init(&call);
    call.size = 0;
    EXPECT_R(gr_ireduce_batch_host(ctx, it, 2, &call, &q), GR_ERR_INVALID_ARG);
    /* dot needs y: gr_ireduce_host refuses it at once */
    EXPECT_R(gr_ireduce_host(ctx, x, 64, &it[0].desc, NULL, &q), GR_ERR_INVALID_ARG);
    ASSERT(q == NULL);

    /* rank-local failures, reported at gr_wait by every rank (all_ranks) */
    const int bad = size - 1;
    gr_value_t v[2];
    it[1].y = rank == bad ? NULL : y;
    OK(gr_ireduce_batch_host(ctx, it, 2, NULL, &q));
    EXPECT_R(gr_wait(&q, v, NULL), GR_ERR_INVALID_ARG);
    ASSERT(q == NULL && !v[0].valid && !v[1].valid);
    it[1].y = y;
    it[1].index_base = rank == bad ? INT64_MAX : 0; /* index_base + count overflows */
    OK(gr_ireduce_batch_host(ctx, it, 2, NULL, &q));
    EXPECT_R(gr_wait(&q, v, NULL), GR_ERR_INVALID_ARG);
    it[1].index_base = 0;
    OK(gr_ireduce_batch_device(ctx, it, 2, NULL, &q)); /* host pointers, cpu backend */
    EXPECT_R(gr_wait(&q, v, NULL), GR_ERR_INVALID_ARG);
    gr_call_init(&call);
    call.result_dev = v;
    OK(gr_ireduce_batch_host(ctx, it, 2, &call, &q));
    EXPECT_R(gr_wait(&q, v, NULL), GR_ERR_INVALID_ARG);

    /* GR_REQUEST_MAX batches outstanding, one more refused; the context still works */
    gr_request_t req[GR_REQUEST_MAX + 1];
    for (int k = 0; k < GR_REQUEST_MAX; ++k)
        OK(gr_ireduce_batch_host(ctx, it, 2, NULL, &req[k]));
    EXPECT_R(gr_ireduce_batch_host(ctx, it, 2, NULL, &req[GR_REQUEST_MAX]), GR_ERR_INVALID_ARG);
    EXPECT_R(gr_ireduce_host(ctx, x, 64, &it[0].desc, NULL, &req[GR_REQUEST_MAX]), GR_ERR_INVALID_ARG);
    for (int k = GR_REQUEST_MAX - 1; k >= 0; --k) {
        OK(gr_wait(&req[k], v, NULL));
        ASSERT_BITS_EQ(v[0].f, 4032.0 * size);
        ASSERT_BITS_EQ(v[1].f, 4032.0 * size);
    }
    /* destroyed with a batch outstanding: completed, result dropped, no hang */
    OK(gr_ireduce_batch_host(ctx, it, 2, NULL, &q));
    OK(gr_ctx_destroy(ctx));
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_same_bits(0, 1);
    test_same_bits(size - 1, 0);
    test_errors();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_embed_batch: ok (%d ranks)\n", size);
    MPI_Finalize();
    return 0;
}
