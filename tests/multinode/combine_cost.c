/*
 * combine_cost.c - what the cross-rank combine costs per call, to anchor the
 * model in docs/MULTINODE.md ("Across nodes"):
 *
 *   op        gr_partial_merge of two loaded exact partials (the MPI user
 *             op's whole work per level), in a loop on one rank;
 *   normalize the carry pass gr_combine does once on its own partial;
 *   combine   gr_combine (MPI_Reduce of one gr_partial_t, user op) per call,
 *             slowest rank, median and min of 11 batches;
 *   bor       MPI_Reduce of the same bytes with the built-in MPI_BOR: the
 *             transport alone, same size, no user op;
 *   double    MPI_Reduce of one double (MPI_SUM): latency alone.
 *
 * It also checks that the combined partial is exact: rank 0 builds every
 * rank's partial itself, merges them in rank order and compares the finished
 * value and count with the combine's (exit 1 on a difference), so a run
 * across hosts checks the op and the datatype across the wire too. Timings
 * are printed, never asserted.
 *
 * usage: mpirun -np N combine_cost [CALLS]   (default 1000 calls per batch)
 */
#include "gr_internal.h"
#include "unit/cpu_ctx.h"

/* Rank r's partial: terms spread over ~2000 binary orders, so most of the
 * accumulator's limbs are non-zero (the op's worst case is every limb). */
static void rank_partial(int r, gr_partial_t *p)
{
    gr_partial_init(p);
    for (int e = -1000; e <= 1000; e += 29)
        gr_partial_add_term(p, ldexp((r % 2 ? -1.0 : 1.0) * (1.0 + 0x1p-40 * (r + 1) + 0x1p-9 * (e & 7)), e));
    p->count = 71;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Over 11 batches of the slowest rank's mean time per call: "median/min" in
 * us (on a loaded machine the min is the closer to the cost itself). */
#define BATCHES 11
static const char *med_min(double *v, char *buf, size_t len)
{
    qsort(v, BATCHES, sizeof(double), cmp_double);
    snprintf(buf, len, "%.2f/%.2f", v[BATCHES / 2] * 1e6, v[0] * 1e6);
    return buf;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long calls = argc > 1 ? atol(argv[1]) : 1000;
    if (calls < 1)
        calls = 1;
    gr_ctx_t ctx = test_cpu_ctx(1);
    gr_desc_t d = test_desc(GR_F64, GR_OP_SUM, 1, GR_MODE_EXACT);

    /* hosts: node leaders of MPI_COMM_TYPE_SHARED */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int nrank, hosts = 0;
    MPI_Comm_rank(node, &nrank);
    int leader = nrank == 0;
    MPI_Allreduce(&leader, &hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_free(&node);

    gr_partial_t mine;
    rank_partial(rank, &mine);

    /* exactness: the combine against a serial merge in rank order */
    gr_value_t got;
    ASSERT_EQ_I(gr_combine(ctx, &d, &mine, &got), GR_SUCCESS);
    if (rank == 0) {
        gr_partial_t all, q;
        rank_partial(0, &all);
        for (int r = 1; r < np; ++r) {
            rank_partial(r, &q);
            gr_partial_merge(&all, &q);
        }
        gr_value_t want;
        gr_partial_finish(&all, &d, &want);
        ASSERT(got.valid);
        ASSERT_EQ_U(got.count, (uint64_t)71 * (uint64_t)np);
        ASSERT_BITS_EQ(got.f, want.f);
    }

    /* op and normalize: on one rank, no MPI; the fastest of 10 loops (a
     * loaded machine only ever adds time) */
    double op_ns = 1e30, norm_ns = 1e30;
    if (rank == 0) {
        gr_partial_t acc, q, tmp;
        rank_partial(0, &acc);
        rank_partial(1, &q);
        gr_xacc_normalize(&acc.sum);
        gr_xacc_normalize(&q.sum);
        const long k = 20000;
        volatile int64_t sink = 0;
        for (int rep = 0; rep < 10; ++rep) {
            double t0 = gr_now();
            for (long i = 0; i < k; ++i)
                gr_partial_merge(&acc, &q); /* normalises itself within headroom */
            double t = (gr_now() - t0) / (double)k * 1e9;
            op_ns = t < op_ns ? t : op_ns;
            sink = acc.sum.limb[GR_XACC_LIMBS / 2];
            t0 = gr_now();
            for (long i = 0; i < k; ++i) {
                tmp = acc;
                tmp.sum.limb[0] += i; /* a fresh state each time */
                gr_xacc_normalize(&tmp.sum);
                sink = tmp.sum.limb[1];
            }
            t = (gr_now() - t0) / (double)k * 1e9;
            norm_ns = t < norm_ns ? t : norm_ns;
        }
        (void)sink;
    }

    /* the three reductions, BATCHES batches each */
    double tc[BATCHES], tb[BATCHES], td[BATCHES];
    unsigned char bin[sizeof(gr_partial_t)], bout[sizeof(gr_partial_t)];
    memcpy(bin, &mine, sizeof(bin));
    double x = 1.0, y = 0.0;
    for (int w = 0; w < 20; ++w)
        ASSERT_EQ_I(gr_combine(ctx, &d, &mine, &got), GR_SUCCESS);
    for (int b = 0; b < BATCHES; ++b) {
        double t, mx;
        MPI_Barrier(MPI_COMM_WORLD);
        t = gr_now();
        for (long i = 0; i < calls; ++i)
            gr_combine(ctx, &d, &mine, &got);
        t = (gr_now() - t) / (double)calls;
        MPI_Reduce(&t, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        tc[b] = mx;
        MPI_Barrier(MPI_COMM_WORLD);
        t = gr_now();
        for (long i = 0; i < calls; ++i)
            MPI_Reduce(bin, bout, (int)sizeof(bin), MPI_BYTE, MPI_BOR, 0, MPI_COMM_WORLD);
        t = (gr_now() - t) / (double)calls;
        MPI_Reduce(&t, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        tb[b] = mx;
        MPI_Barrier(MPI_COMM_WORLD);
        t = gr_now();
        for (long i = 0; i < calls; ++i)
            MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        t = (gr_now() - t) / (double)calls;
        MPI_Reduce(&t, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        td[b] = mx;
    }
    if (rank == 0) {
        printf("combine_cost: np %d, hosts %d, partial %zu bytes, %ld calls x %d batches; exact: ok\n", np, hosts,
               sizeof(gr_partial_t), calls, BATCHES);
        char a[64], b[64], c[64];
        printf("op %.1f ns/call  normalize %.1f ns  combine %s us  bor %s us  double %s us  (median/min)\n", op_ns,
               norm_ns, med_min(tc, a, sizeof(a)), med_min(tb, b, sizeof(b)), med_min(td, c, sizeof(c)));
    }
    gr_ctx_destroy(ctx);
    MPI_Finalize();
    return 0;
}
