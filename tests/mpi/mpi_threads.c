/*
 * mpi_threads.c - exact mode (and integers) give the same bits for cpu
 * thread counts 1..4 under MPI, and the same as a different np would
 * (compared in test_np_identity.sh); fast mode too, since the cpu backend
 * folds fixed chunks exactly.
 */
#include "unit/cpu_ctx.h"

typedef struct {
    gr_gen_t g;
    gr_dtype_t t;
    gr_op_kind_t k;
    gr_mode_t m;
} case_t;

static const case_t cases[] = {
    {GR_GEN_STRESS, GR_F64, GR_OP_SUM, GR_MODE_EXACT},   {GR_GEN_STRESS, GR_F32, GR_OP_SUM, GR_MODE_EXACT},
    {GR_GEN_NORMAL, GR_F64, GR_OP_SUM, GR_MODE_EXACT},   {GR_GEN_NORMAL, GR_F32, GR_OP_SUMSQ, GR_MODE_EXACT},
    {GR_GEN_UNIFORM, GR_F64, GR_OP_ABSSUM, GR_MODE_EXACT}, {GR_GEN_STRESS, GR_I64, GR_OP_SUM, GR_MODE_EXACT},
    {GR_GEN_STRESS, GR_F64, GR_OP_SUM, GR_MODE_FAST},    {GR_GEN_NORMAL, GR_F32, GR_OP_SUM, GR_MODE_FAST},
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    gr_ctx_t ctx[4];
    for (int t = 0; t < 4; ++t)
        ctx[t] = test_cpu_ctx(t + 1);
    const uint64_t n = 9 * 65536 + 12345;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        gr_value_t ref;
        for (int t = 0; t < 4; ++t) {
            gr_desc_t d = test_desc(cases[c].t, cases[c].k, 1, cases[c].m);
            d.all_ranks = 1;
            gr_value_t v;
            ASSERT_EQ_I(gr_reduce_synthetic(ctx[t], cases[c].g, 31, n, &d, &v, NULL), GR_SUCCESS);
            ASSERT(v.valid);
            if (t == 0)
                ref = v;
            else if (!test_value_same(&v, &ref))
                GR_TEST_FAIL_("rank %d case %zu: %d threads give %a, 1 thread %a", rank, c, t + 1, v.f, ref.f);
        }
    }
    for (int t = 0; t < 4; ++t)
        gr_ctx_destroy(ctx[t]);
    if (rank == 0)
        printf("threads 1..4 identical at np=%d\n", np);
    MPI_Finalize();
    return 0;
}
