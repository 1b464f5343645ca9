/*
 * mpi_all_ranks.c - all_ranks=1 puts the same bits on every rank, equal to
 * what the root alone receives; any root works and only it holds the value.
 */
#include "unit/cpu_ctx.h"

typedef struct {
    gr_gen_t g;
    gr_dtype_t t;
    gr_op_kind_t k;
    int p;
    gr_mode_t m;
} case_t;

static const case_t cases[] = {
    {GR_GEN_STRESS, GR_F64, GR_OP_SUM, 1, GR_MODE_FAST},  {GR_GEN_STRESS, GR_F64, GR_OP_SUM, 1, GR_MODE_EXACT},
    {GR_GEN_NORMAL, GR_F32, GR_OP_SUM, 1, GR_MODE_EXACT}, {GR_GEN_NORMAL, GR_F32, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_NORMAL, GR_F64, GR_OP_MIN, 1, GR_MODE_FAST},  {GR_GEN_UNIFORM, GR_F64, GR_OP_MAX, 1, GR_MODE_FAST},
    {GR_GEN_STRESS, GR_I64, GR_OP_SUM, 1, GR_MODE_FAST},  {GR_GEN_STRESS, GR_I64, GR_OP_ABSSUM, 1, GR_MODE_FAST},
    {GR_GEN_RANDINT, GR_I32, GR_OP_MAX, 1, GR_MODE_FAST}, {GR_GEN_IOTA, GR_I32, GR_OP_POWSUM, 3, GR_MODE_FAST},
};

/* The fields a caller reads, packed for MPI. */
typedef struct {
    int64_t valid, is_integer, overflow, i;
    uint64_t fbits, count, nan;
} packed_t;

static packed_t pack(const gr_value_t *v)
{
    packed_t p = {v->valid, v->is_integer, v->overflow, v->i, 0, v->count, v->nan_count};
    memcpy(&p.fbits, &v->f, 8);
    return p;
}

/* Host data whose special values sit on different ranks: the combine must
 * apply the IEEE rules across ranks exactly as within one. */
static void test_specials_across_ranks(gr_ctx_t ctx, int rank, int np)
{
    for (int m = 0; m < 2; ++m) {
        gr_desc_t d = test_desc(GR_F64, GR_OP_SUM, 1, (gr_mode_t)m);
        d.all_ranks = 1;
        gr_value_t v;
        double x[3];
        /* -0.0 on every rank: -0.0; one rank with +0.0: +0.0 */
        x[0] = x[1] = -0.0;
        ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_SUCCESS);
        ASSERT_BITS_EQ(v.f, -0.0);
        if (rank == np - 1)
            x[1] = 0.0;
        ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_SUCCESS);
        ASSERT_BITS_EQ(v.f, 0.0);
        /* +Inf on rank 0, -Inf on the last rank: NaN (np 1: both on rank 0) */
        x[0] = rank == 0 ? INFINITY : 1.0;
        x[1] = rank == np - 1 ? -INFINITY : 2.0;
        ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_SUCCESS);
        ASSERT(isnan(v.f));
        x[1] = 2.0;
        ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_SUCCESS);
        ASSERT_BITS_EQ(v.f, INFINITY);
        /* a NaN on the last rank only */
        x[0] = rank == np - 1 ? NAN : 1.0;
        ASSERT_EQ_I(gr_reduce_host(ctx, x, 2, &d, &v, NULL), GR_SUCCESS);
        ASSERT(isnan(v.f));
        if (m == GR_MODE_EXACT)
            ASSERT_EQ_U(v.nan_count, 1);
        /* big values that cancel across ranks leave the 1 (fast mode too when
         * the three sit on three ranks: partials combine exactly) */
        x[0] = rank == 0 ? 1e300 : 0.0;
        x[1] = rank == np - 1 ? -1e300 : 0.0;
        x[2] = rank == np / 2 ? 1.0 : 0.0;
        ASSERT_EQ_I(gr_reduce_host(ctx, x, 3, &d, &v, NULL), GR_SUCCESS);
        if (m == GR_MODE_EXACT || np >= 3)
            ASSERT_BITS_EQ(v.f, 1.0);
        /* exact mode: 1 + 2^-53 + 2^-1074 spread over ranks rounds up, once */
        if (m == GR_MODE_EXACT) {
            x[0] = rank == 0 ? 1.0 : 0.0;
            x[1] = rank == np - 1 ? 0x1p-53 : 0.0;
            x[2] = rank == np / 2 ? 0x1p-1074 : 0.0;
            ASSERT_EQ_I(gr_reduce_host(ctx, x, 3, &d, &v, NULL), GR_SUCCESS);
            ASSERT_BITS_EQ(v.f, 1.0 + 0x1p-52);
            /* and to f32 directly: 1 + 2^-24 + 2^-60 -> 1 + 2^-23 */
            float y[3] = {rank == 0 ? 1.0f : 0.0f, rank == np - 1 ? 0x1p-24f : 0.0f, rank == np / 2 ? 0x1p-60f : 0.0f};
            d.dtype = GR_F32;
            ASSERT_EQ_I(gr_reduce_host(ctx, y, 3, &d, &v, NULL), GR_SUCCESS);
            ASSERT_BITS_EQ(v.f, (double)(1.0f + 0x1p-23f));
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    gr_ctx_t ctx = test_cpu_ctx(2);
    packed_t *all = (packed_t *)malloc(sizeof(packed_t) * (size_t)np);
    ASSERT(all);
    static const uint64_t sizes[] = {300007, 2};
    for (size_t s = 0; s < 2; ++s)
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
            const case_t *cs = &cases[c];
            gr_buffer_t buf;
            ASSERT_EQ_I(gr_buffer_create_synthetic(ctx, cs->t, cs->g, 8, sizes[s], &buf), GR_SUCCESS);
            gr_desc_t d = test_desc(cs->t, cs->k, cs->p, cs->m);
            /* the result everywhere */
            d.all_ranks = 1;
            gr_value_t v;
            ASSERT_EQ_I(gr_reduce_buffer(ctx, buf, &d, &v, NULL), GR_SUCCESS);
            ASSERT(v.valid);
            ASSERT_EQ_U(v.count, sizes[s]);
            packed_t mine = pack(&v);
            MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, MPI_COMM_WORLD);
            for (int r = 0; r < np; ++r)
                if (memcmp(&all[r], &all[0], sizeof(packed_t)) != 0)
                    GR_TEST_FAIL_("case %zu n=%llu: rank %d has f bits %016llx i %lld, rank 0 %016llx i %lld", c,
                                  (unsigned long long)sizes[s], r, (unsigned long long)all[r].fbits,
                                  (long long)all[r].i, (unsigned long long)all[0].fbits, (long long)all[0].i);
            /* each root in turn receives the same value; nobody else does */
            d.all_ranks = 0;
            for (int root = 0; root < np; ++root) {
                d.root = root;
                gr_value_t w;
                ASSERT_EQ_I(gr_reduce_buffer(ctx, buf, &d, &w, NULL), GR_SUCCESS);
                if (rank == root) {
                    packed_t pw = pack(&w);
                    if (memcmp(&pw, &mine, sizeof(packed_t)) != 0)
                        GR_TEST_FAIL_("case %zu root %d: %016llx, all_ranks gave %016llx", c, root,
                                      (unsigned long long)pw.fbits, (unsigned long long)mine.fbits);
                } else {
                    ASSERT(!w.valid);
                }
            }
            gr_buffer_destroy(buf);
        }
    free(all);
    test_specials_across_ranks(ctx, rank, np);
    gr_ctx_destroy(ctx);
    if (rank == 0)
        printf("all_ranks: identical on %d ranks and at every root\n", np);
    MPI_Finalize();
    return 0;
}
