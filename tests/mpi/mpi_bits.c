/*
 * mpi_bits.c - print, on rank 0, the exact bits of a list of reductions of
 * synthetic data with the cpu backend on MPI_COMM_WORLD. The scripts in this
 * directory run it under different np, thread counts and MPI reduce
 * algorithms and compare the lines.
 *
 *   mpi_bits invariant [THREADS] [check]  results the contract says do not
 *       depend on np: exact mode f32/f64, integers, ones, iota, min/max.
 *       "check" also compares each with a serial reference on rank 0.
 *   mpi_bits fast [THREADS]   fast-mode floating sums (same np only).
 *   mpi_bits fast-all [THREADS]   the same with all_ranks=1 (MPI_Allreduce);
 *       every rank checks it holds the value, rank 0 prints the same lines.
 */
#include "gr_common.h"
#include "gr_xacc.h"
#include "unit/cpu_ctx.h"

typedef struct {
    gr_gen_t g;
    gr_dtype_t t;
    gr_op_kind_t k;
    int p;
    gr_mode_t m;
} case_t;

static const case_t invariant[] = {
    {GR_GEN_STRESS, GR_F64, GR_OP_SUM, 1, GR_MODE_EXACT},
    {GR_GEN_STRESS, GR_F32, GR_OP_SUM, 1, GR_MODE_EXACT},
    {GR_GEN_NORMAL, GR_F64, GR_OP_SUM, 1, GR_MODE_EXACT},
    {GR_GEN_NORMAL, GR_F32, GR_OP_SUM, 1, GR_MODE_EXACT},
    {GR_GEN_UNIFORM, GR_F64, GR_OP_SUM, 1, GR_MODE_EXACT},
    {GR_GEN_STRESS, GR_F64, GR_OP_ABSSUM, 1, GR_MODE_EXACT},
    {GR_GEN_NORMAL, GR_F32, GR_OP_ABSSUM, 1, GR_MODE_EXACT},
    {GR_GEN_NORMAL, GR_F32, GR_OP_SUMSQ, 1, GR_MODE_EXACT},
    {GR_GEN_STRESS, GR_F64, GR_OP_MIN, 1, GR_MODE_FAST},
    {GR_GEN_NORMAL, GR_F32, GR_OP_MAX, 1, GR_MODE_EXACT},
    {GR_GEN_ONES, GR_F32, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_ONES, GR_F64, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_IOTA, GR_F64, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_IOTA, GR_F32, GR_OP_SUMSQ, 1, GR_MODE_FAST},
    {GR_GEN_RANDINT, GR_I32, GR_OP_POWSUM, 3, GR_MODE_FAST},
    {GR_GEN_RANDINT, GR_I64, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_STRESS, GR_I32, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_STRESS, GR_I64, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_STRESS, GR_I64, GR_OP_ABSSUM, 1, GR_MODE_EXACT}, /* overflows int64 */
    {GR_GEN_STRESS, GR_I32, GR_OP_SUMSQ, 1, GR_MODE_FAST},
    {GR_GEN_STRESS, GR_I64, GR_OP_MIN, 1, GR_MODE_FAST},
    {GR_GEN_STRESS, GR_I32, GR_OP_MAX, 1, GR_MODE_FAST},
    {GR_GEN_IOTA, GR_I64, GR_OP_POWSUM, 3, GR_MODE_FAST},
    {GR_GEN_ONES, GR_I32, GR_OP_SUM, 1, GR_MODE_FAST},
};

static const case_t fast[] = {
    {GR_GEN_STRESS, GR_F64, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_STRESS, GR_F32, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_NORMAL, GR_F64, GR_OP_SUM, 1, GR_MODE_FAST},
    {GR_GEN_UNIFORM, GR_F64, GR_OP_SUMSQ, 1, GR_MODE_FAST},
    {GR_GEN_NORMAL, GR_F32, GR_OP_POWSUM, 3, GR_MODE_FAST},
    {GR_GEN_STRESS, GR_F64, GR_OP_ABSSUM, 1, GR_MODE_FAST},
};

/* N: several chunks of 2^16 with odd shard edges; 3 < np for np = 4, 5, 8; 0 */
static const uint64_t sizes[] = {1000003, 65537, 3, 0};
#define SEED 2024

/* Serial reference of one case over the whole dataset (rank 0 only). */
static void check_serial(const case_t *c, uint64_t n, const gr_value_t *v)
{
    gr_gen_keys_t k = gr_gen_make_keys(SEED);
    int fl = c->t == GR_F32 || c->t == GR_F64;
    int ct = (int)c->t;
    if (c->k == GR_OP_MIN || c->k == GR_OP_MAX) {
        if (n == 0)
            return;
        double mf = c->k == GR_OP_MIN ? INFINITY : -INFINITY;
        int64_t mi = c->k == GR_OP_MIN ? INT64_MAX : INT64_MIN;
        for (uint64_t i = 0; i < n; ++i) {
            if (fl) {
                double x = gr_gen_float((int)c->g, ct, k, i);
                if (c->t == GR_F32)
                    x = (double)(float)x;
                mf = c->k == GR_OP_MIN ? fmin(mf, x) : fmax(mf, x);
            } else {
                int64_t x = gr_gen_int((int)c->g, ct, k, i);
                mi = c->k == GR_OP_MIN ? (x < mi ? x : mi) : (x > mi ? x : mi);
            }
        }
        if (fl)
            ASSERT_BITS_EQ(v->f, mf);
        else
            ASSERT_EQ_I(v->i, mi);
        return;
    }
    if (fl) {
        gr_xacc_t acc;
        gr_xacc_zero(&acc);
        for (uint64_t i = 0; i < n; ++i) {
            double x = gr_gen_float((int)c->g, ct, k, i);
            if (c->t == GR_F32)
                x = (double)(float)x;
            gr_xacc_add_double(&acc, gr_term_f((int)c->k, c->p, x));
            if ((i & 0x3FFFFFF) == 0x3FFFFFF)
                gr_xacc_normalize(&acc);
        }
        double want = c->t == GR_F32 && c->m == GR_MODE_EXACT ? (double)gr_xacc_to_float(&acc) : gr_xacc_to_double(&acc);
        if (c->g == GR_GEN_ONES)
            ASSERT_BITS_EQ(want, (double)n);
        ASSERT_BITS_EQ(v->f, want);
        return;
    }
    __int128 s = 0;
    int32_t ovf = 0;
    for (uint64_t i = 0; i < n; ++i)
        s += gr_term_i((int)c->k, c->p, gr_gen_int((int)c->g, ct, k, i), &ovf);
    int fits = !ovf && s >= INT64_MIN && s <= INT64_MAX;
    ASSERT_EQ_I(v->overflow, !fits);
    if (fits)
        ASSERT_EQ_I(v->i, (int64_t)s);
    else if (!ovf)
        ASSERT_BITS_EQ(v->f, (double)s);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2 || (strcmp(argv[1], "invariant") && strcmp(argv[1], "fast") && strcmp(argv[1], "fast-all"))) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_bits invariant|fast|fast-all [THREADS] [check]\n");
        MPI_Finalize();
        return 2;
    }
    int inv = !strcmp(argv[1], "invariant");
    int all_ranks = !strcmp(argv[1], "fast-all");
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    int check = argc > 3 && !strcmp(argv[3], "check");
    const case_t *cases = inv ? invariant : fast;
    size_t ncases = inv ? sizeof(invariant) / sizeof(invariant[0]) : sizeof(fast) / sizeof(fast[0]);

    gr_ctx_t ctx = test_cpu_ctx(threads);
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        for (size_t i = 0; i < ncases; ++i) {
            const case_t *c = &cases[i];
            gr_desc_t d = test_desc(c->t, c->k, c->p, c->m);
            d.all_ranks = all_ranks;
            gr_value_t v;
            ASSERT_EQ_I(gr_reduce_synthetic(ctx, c->g, SEED, sizes[s], &d, &v, NULL), GR_SUCCESS);
            if (rank != 0) {
                ASSERT_EQ_I(v.valid, all_ranks);
                continue;
            }
            ASSERT(v.valid);
            ASSERT_EQ_U(v.count, sizes[s]);
            uint64_t bits;
            memcpy(&bits, &v.f, 8);
            printf("%-7s %s %-6s:%d %-5s n=%-7llu f=%016llx i=%lld ovf=%d count=%llu nan=%llu\n", gr_gen_name(c->g),
                   gr_dtype_name(c->t), gr_op_name(c->k), c->p, gr_mode_name(c->m), (unsigned long long)sizes[s],
                   (unsigned long long)bits, (long long)v.i, v.overflow, (unsigned long long)v.count,
                   (unsigned long long)v.nan_count);
            if (check)
                check_serial(c, sizes[s], &v);
        }
    }
    fflush(stdout);
    gr_ctx_destroy(ctx);
    MPI_Finalize();
    return 0;
}
