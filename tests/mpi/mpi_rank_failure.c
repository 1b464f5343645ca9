/*
 * mpi_rank_failure.c - one rank's local reduction fails (NULL data with a
 * non-zero count). No rank hangs (ctest's timeout guards that); the failing
 * rank returns its error; every rank that was to receive the result (the
 * root, or all ranks with all_ranks) returns that error too and holds no
 * value; and the context keeps working for the next call on every rank.
 */
#include "unit/cpu_ctx.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    gr_ctx_t ctx = test_cpu_ctx(2);
    enum { N = 70001 };
    double *x = (double *)malloc(N * sizeof(double));
    int64_t *y = (int64_t *)malloc(N * sizeof(int64_t));
    ASSERT(x && y);
    for (int i = 0; i < N; ++i) {
        x[i] = 0.25 * (i % 7) - 0.5;
        y[i] = i;
    }
    int checked = 0;
    for (int bad = 0; bad < np; ++bad)
        for (int all = 0; all < 2; ++all)
            for (int root = 0; root < np; root += (np > 1 ? np - 1 : 1))
                for (int m = 0; m < 2; ++m)
                    for (int integer = 0; integer < 2; ++integer) {
                        gr_desc_t d = test_desc(integer ? GR_I64 : GR_F64, GR_OP_SUM, 1, (gr_mode_t)m);
                        d.root = root;
                        d.all_ranks = all;
                        const void *p = integer ? (const void *)y : (const void *)x;
                        gr_value_t v;
                        memset(&v, 0x5A, sizeof(v));
                        gr_result_t r = gr_reduce_host(ctx, rank == bad ? NULL : p, N, &d, &v, NULL);
                        int receives = all || rank == root;
                        if (rank == bad || receives) {
                            if (r != GR_ERR_INVALID_ARG)
                                GR_TEST_FAIL_("rank %d (bad rank %d, root %d, all_ranks %d): got %s, want %s", rank,
                                              bad, root, all, gr_strerror(r), gr_strerror(GR_ERR_INVALID_ARG));
                        }
                        /* a failed call leaves no value anywhere */
                        if (v.valid)
                            GR_TEST_FAIL_("rank %d holds a value after rank %d failed (root %d all %d)", rank, bad,
                                          root, all);
                        /* the next call works on every rank */
                        gr_value_t ok;
                        r = gr_reduce_host(ctx, p, N, &d, &ok, NULL);
                        ASSERT_EQ_I(r, GR_SUCCESS);
                        ASSERT_EQ_I(ok.valid, receives);
                        if (receives) {
                            ASSERT_EQ_U(ok.count, (uint64_t)N * (uint64_t)np);
                            if (integer)
                                ASSERT_EQ_I(ok.i, (int64_t)np * ((int64_t)N * (N - 1) / 2));
                        }
                        ++checked;
                    }
    /* every rank fails at once */
    gr_desc_t d = test_desc(GR_F32, GR_OP_SUM, 1, GR_MODE_FAST);
    d.all_ranks = 1;
    gr_value_t v;
    ASSERT_EQ_I(gr_reduce_host(ctx, NULL, 1, &d, &v, NULL), GR_ERR_INVALID_ARG);
    ASSERT(!v.valid);
    free(x);
    free(y);
    gr_ctx_destroy(ctx);
    if (rank == 0)
        printf("rank failure: %d scenarios at np=%d, no hang, errors reported\n", checked, np);
    MPI_Finalize();
    return 0;
}
