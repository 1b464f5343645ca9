/*
 * mpi_repeat.c - fast mode is bitwise repeatable for a fixed np: the same
 * reduction run 10 times gives the same bits, on the root and (all_ranks)
 * on every rank, from a buffer reused and from fresh synthetic buffers.
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
    {GR_GEN_STRESS, GR_F64, GR_OP_SUM, 1, GR_MODE_FAST},   {GR_GEN_STRESS, GR_F32, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_NORMAL, GR_F64, GR_OP_SUM, 1, GR_MODE_FAST},   {GR_GEN_UNIFORM, GR_F32, GR_OP_SUMSQ, 1, GR_MODE_FAST},
    {GR_GEN_NORMAL, GR_F64, GR_OP_POWSUM, 5, GR_MODE_FAST}, {GR_GEN_STRESS, GR_I64, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_STRESS, GR_F64, GR_OP_SUM, 1, GR_MODE_EXACT},
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    gr_ctx_t ctx = test_cpu_ctx(2);
    const uint64_t n = 700001;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        const case_t *cs = &cases[c];
        gr_buffer_t buf;
        ASSERT_EQ_I(gr_buffer_create_synthetic(ctx, cs->t, cs->g, 5, n, &buf), GR_SUCCESS);
        for (int all = 0; all < 2; ++all) {
            gr_desc_t d = test_desc(cs->t, cs->k, cs->p, cs->m);
            d.all_ranks = all;
            gr_value_t first;
            for (int rep = 0; rep < 10; ++rep) {
                gr_value_t v;
                gr_timing_t tm;
                ASSERT_EQ_I(gr_reduce_buffer(ctx, buf, &d, &v, &tm), GR_SUCCESS);
                ASSERT(tm.total >= 0 && tm.local >= 0 && tm.combine >= 0);
                ASSERT_EQ_I(v.valid, all || rank == 0);
                if (rep == 0)
                    first = v;
                else if (!test_value_same(&v, &first))
                    GR_TEST_FAIL_("rank %d case %zu all_ranks %d: repeat %d gives %a, first run %a", rank, c, all,
                                  rep, v.f, first.f);
            }
            /* a fresh buffer of the same data: the same bits again */
            gr_value_t v;
            ASSERT_EQ_I(gr_reduce_synthetic(ctx, cs->g, 5, n, &d, &v, NULL), GR_SUCCESS);
            if (!test_value_same(&v, &first))
                GR_TEST_FAIL_("rank %d case %zu: fresh buffer gives %a, first %a", rank, c, v.f, first.f);
            if (v.valid && cs->t != GR_I64)
                ASSERT(isfinite(v.f));
        }
        gr_buffer_destroy(buf);
    }
    gr_ctx_destroy(ctx);
    if (rank == 0)
        printf("repeat: %zu cases x 10 runs identical at np=%d\n", sizeof(cases) / sizeof(cases[0]), np);
    MPI_Finalize();
    return 0;
}
