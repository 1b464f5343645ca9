/*
 * test_cpu_isa.c - every instruction-set level of the cpu backend's loops
 * (cpu_kernels.h: baseline, avx2, avx512, those this build and CPU have)
 * gives the bits of the baseline: fast sums, min/max, exact sums (the exact
 * value and its counters) and integer results, for every dtype and op, at
 * awkward sizes (around the vector widths, the exact blocks and the chunk)
 * and unaligned starts, on data meant to break them (wide exponent ranges,
 * cancellation, NaN and Inf, signed zeros, subnormals, extreme integers).
 * Then the same through the public API with GR_CPU_ISA naming each level,
 * which also checks that the variable reaches the backend.
 * Skips (77) where the baseline is the only level.
 */
#define _GNU_SOURCE
#include "cpu_ctx.h"
#include "cpu_kernels.h"
#include "gr_internal.h"

#include <unistd.h>

static uint64_t rng_state = 0x13198A2E03707344ull;
static uint64_t rnd(void) { return gr_mix64(rng_state++); }

static double bits_to_double(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof(d));
    return d;
}

enum { D_UNIFORM, D_WIDE, D_CANCEL, D_SPECIAL, D_ZEROS, D_SUBNORMAL, D_SPAN, D_COUNT };
static const char *const data_names[D_COUNT] = {"uniform", "wide", "cancel", "special", "zeros", "subnormal",
                                                "span"};

static double gen_f(int cls, uint64_t i)
{
    switch (cls) {
    case D_UNIFORM:
        return (double)(rnd() >> 40) * 0x1p-24;
    case D_WIDE: { /* any finite double; as f32 many are 0 or Inf, as halves too */
        uint64_t b = rnd();
        if (((b >> 52) & 0x7FF) == 0x7FF)
            b ^= 1ull << 62;
        return bits_to_double(b);
    }
    case D_CANCEL:
        return (i % 2 ? -1.0 : 1.0) * ldexp(1.0 + (double)(rnd() >> 12) * 0x1p-52, (int)(rnd() % 40) - 20);
    case D_SPECIAL: {
        const double sp[4] = {NAN, INFINITY, -INFINITY, 0x1p127};
        return rnd() % 64 == 0 ? sp[rnd() % 4] : (double)(rnd() >> 11) * 0x1p-53 - 0.5;
    }
    case D_ZEROS:
        return rnd() % 16 == 0 ? 0.0 : -0.0;
    case D_SUBNORMAL:
        return ldexp((double)(rnd() % 4096), -1074 + (int)(rnd() % 4) * 60) * (rnd() & 1 ? -1 : 1);
    default: /* exponents 2^-18 .. 2^0 apart as f32, around the plain-sum limit */
        return ldexp(1.0 + (double)(rnd() >> 12) * 0x1p-52, -(int)(rnd() % 20));
    }
}

static int64_t gen_i(int cls)
{
    switch (cls) {
    case D_WIDE:
        return (int64_t)rnd();
    case D_SPECIAL:
        return rnd() % 8 == 0 ? (rnd() & 1 ? INT64_MIN : INT64_MAX) : (int64_t)(rnd() % 2001) - 1000;
    default:
        return (int64_t)(rnd() % 200001) - 100000;
    }
}

#define NMAX (2 * GR_CPU_CHUNK + 2048)

static int same_exact(gr_partial_t *a, gr_partial_t *b)
{
    gr_xacc_normalize(&a->sum);
    gr_xacc_normalize(&b->sum);
    return memcmp(&a->sum, &b->sum, sizeof(a->sum)) == 0 && a->nan == b->nan && a->pinf == b->pinf &&
           a->ninf == b->ninf && (a->nonnegzero > 0) == (b->nonnegzero > 0);
}

/* One dtype x op x buffer on level k against the baseline b. */
static void compare(const gr_cpu_kernels_t *b, const gr_cpu_kernels_t *k, const void *in, int dt, int op, int pw,
                    uint64_t n, const char *what)
{
    const char *lv = gr_cpu_isa_name(k->isa);
    if (!gr_c_is_float(dt)) {
        gr_local_t lb, lk;
        b->int_local(in, dt, op, pw, n, &lb);
        k->int_local(in, dt, op, pw, n, &lk);
        if (lb.lo != lk.lo || lb.hi != lk.hi || lb.count != lk.count || lb.overflow != lk.overflow)
            GR_TEST_FAIL_("%s: %s int dtype %d op %d^%d n %llu: %llx:%llx ovf %d, baseline %llx:%llx ovf %d", what,
                          lv, dt, op, pw, (unsigned long long)n, (unsigned long long)lk.hi,
                          (unsigned long long)lk.lo, lk.overflow, (unsigned long long)lb.hi,
                          (unsigned long long)lb.lo, lb.overflow);
        return;
    }
    if (op == GR_C_MIN || op == GR_C_MAX) {
        if (n == 0)
            return;
        double vb = b->minmax_f(in, dt, op, n), vk = k->minmax_f(in, dt, op, n);
        if (memcmp(&vb, &vk, sizeof(double)) != 0)
            GR_TEST_FAIL_("%s: %s minmax dtype %d op %d n %llu: %a, baseline %a", what, lv, dt, op,
                          (unsigned long long)n, vk, vb);
        return;
    }
    /* a NaN's sign and payload depend on which operand of an add the
     * compiler put first (x86 keeps the first NaN): the backend only counts
     * a NaN chunk (gr_partial_add_term), so NaN equals NaN here */
    double fb = b->fast_sum_f(in, dt, op, pw, n), fk = k->fast_sum_f(in, dt, op, pw, n);
    if (memcmp(&fb, &fk, sizeof(double)) != 0 && !(isnan(fb) && isnan(fk)))
        GR_TEST_FAIL_("%s: %s fast dtype %d op %d^%d n %llu: %a, baseline %a", what, lv, dt, op, pw,
                      (unsigned long long)n, fk, fb);
    gr_partial_t pb, pk;
    gr_partial_init(&pb);
    gr_partial_init(&pk);
    b->exact_f(&pb, in, dt, op, pw, n);
    k->exact_f(&pk, in, dt, op, pw, n);
    if (!same_exact(&pb, &pk))
        GR_TEST_FAIL_("%s: %s exact dtype %d op %d^%d n %llu: %a nan %lld +inf %lld -inf %lld nonneg %lld; "
                      "baseline %a nan %lld +inf %lld -inf %lld nonneg %lld",
                      what, lv, dt, op, pw, (unsigned long long)n, gr_xacc_to_double(&pk.sum), (long long)pk.nan,
                      (long long)pk.pinf, (long long)pk.ninf, (long long)pk.nonnegzero,
                      gr_xacc_to_double(&pb.sum), (long long)pb.nan, (long long)pb.pinf, (long long)pb.ninf,
                      (long long)pb.nonnegzero);
}

int main(int argc, char **argv)
{
    /* before anything logs: the logger reads these once */
    setenv("GR_DEBUG", "info", 1);
    setenv("GR_DEBUG_SUBSYS", "cpu", 1);
    const gr_cpu_kernels_t *base = gr_cpu_kernels_isa(GR_CPU_ISA_BASELINE), *levels[GR_CPU_ISA_COUNT];
    int nlev = 0;
    ASSERT(base != NULL && base->isa == GR_CPU_ISA_BASELINE);
    for (int i = 1; i < GR_CPU_ISA_COUNT; ++i)
        if ((levels[nlev] = gr_cpu_kernels_isa((gr_cpu_isa_t)i)) != NULL) {
            ASSERT(levels[nlev]->isa == (gr_cpu_isa_t)i);
            printf("level %s available\n", gr_cpu_isa_name((gr_cpu_isa_t)i));
            nlev++;
        }
    /* the choice: the best by default, a name, a level below an unavailable
     * one, the best for an unknown name */
    const gr_cpu_kernels_t *best = nlev ? levels[nlev - 1] : base;
    ASSERT(gr_cpu_kernels_select(NULL) == best);
    ASSERT(gr_cpu_kernels_select("auto") == best);
    ASSERT(gr_cpu_kernels_select("no-such-level") == best);
    ASSERT(gr_cpu_kernels_select("baseline") == base);
    for (int i = 0; i < nlev; ++i)
        ASSERT(gr_cpu_kernels_select(gr_cpu_isa_name(levels[i]->isa)) == levels[i]);
    if (nlev == 0)
        GR_TEST_SKIP("this CPU (or build) has the baseline level only: nothing to compare");

    static double xd[NMAX];
    static float xf[NMAX];
    static uint16_t xh[NMAX], xb[NMAX];
    static int32_t x32[NMAX];
    static int64_t x64[NMAX];
    const int dtypes[6] = {GR_C_F32, GR_C_F64, GR_C_F16, GR_C_BF16, GR_C_I32, GR_C_I64};
    const int ops[6][2] = {{GR_C_SUM, 1}, {GR_C_MIN, 1}, {GR_C_MAX, 1}, {GR_C_ABSSUM, 1}, {GR_C_SUMSQ, 2},
                           {GR_C_POWSUM, 3}};
    /* around 8 lanes, vectors of 2-8, XSTEP (8-32), the 2048-term exact blocks, the chunk */
    const uint64_t sizes[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65, 2047, 2048, 2049, 2080, 4095,
                              6157, GR_CPU_CHUNK};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    uint64_t checks = 0;
    for (int cls = 0; cls < D_COUNT; ++cls) {
        for (uint64_t i = 0; i < NMAX; ++i) {
            double v = gen_f(cls, i);
            xd[i] = v;
            xf[i] = (float)v;
            xh[i] = gr_f32_to_half_bits((float)v, 0);
            xb[i] = gr_f32_to_half_bits((float)v, 1);
            int64_t w = gen_i(cls);
            x64[i] = w;
            x32[i] = (int32_t)(cls == D_WIDE || cls == D_SPECIAL ? (w >> 32) : w);
        }
        for (int di = 0; di < 6; ++di) {
            int dt = dtypes[di];
            const void *in = dt == GR_C_F32    ? (const void *)xf
                             : dt == GR_C_F64  ? (const void *)xd
                             : dt == GR_C_F16  ? (const void *)xh
                             : dt == GR_C_BF16 ? (const void *)xb
                             : dt == GR_C_I32  ? (const void *)x32
                                               : (const void *)x64;
            size_t esz = dt == GR_C_F64 || dt == GR_C_I64 ? 8 : dt == GR_C_F16 || dt == GR_C_BF16 ? 2 : 4;
            for (int oi = 0; oi < 6; ++oi)
                for (int si = 0; si < nsizes; ++si)
                    for (uint64_t off = 0; off < 4; off += 3) { /* 3: no start aligned to 8 bytes or more */
                        uint64_t n = sizes[si];
                        const void *p = (const char *)in + off * esz;
                        for (int l = 0; l < nlev; ++l) {
                            char what[64];
                            snprintf(what, sizeof(what), "%s data, offset %llu", data_names[cls],
                                     (unsigned long long)off);
                            compare(base, levels[l], p, dt, ops[oi][0], ops[oi][1], n, what);
                            checks++;
                        }
                    }
        }
    }
    printf("%llu comparisons of %d level(s) with the baseline: same bits\n", (unsigned long long)checks, nlev);

    /* the public API: GR_CPU_ISA picks the level a context uses, and says so
     * in the cpu subsystem's info line (read back from stderr) */
    MPI_Init(&argc, &argv);
    const gr_dtype_t pt[2] = {GR_F32, GR_F64};
    const uint64_t pn = 2 * GR_CPU_CHUNK + 1234; /* < NMAX - 1 */
    gr_value_t ref[2][2];
    for (int l = -1; l < nlev; ++l) {
        const gr_cpu_kernels_t *k = l < 0 ? base : levels[l];
        setenv("GR_CPU_ISA", gr_cpu_isa_name(k->isa), 1);
        char logname[] = "/tmp/test_cpu_isa_XXXXXX", said[128] = "", want[64];
        int logfd = mkstemp(logname), saved = dup(2);
        ASSERT(logfd >= 0 && saved >= 0);
        fflush(stderr);
        dup2(logfd, 2);
        gr_ctx_t ctx = test_cpu_ctx(2);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        FILE *lf = fdopen(logfd, "r");
        ASSERT(lf != NULL);
        rewind(lf);
        snprintf(want, sizeof(want), "%s loops", gr_cpu_isa_name(k->isa));
        while (fgets(said, sizeof(said), lf) && !strstr(said, want))
            ;
        fclose(lf);
        unlink(logname);
        if (!strstr(said, want))
            GR_TEST_FAIL_("GR_CPU_ISA=%s: the cpu backend's info line does not say \"%s\"", gr_cpu_isa_name(k->isa),
                          want);
        for (int t = 0; t < 2; ++t)
            for (int m = 0; m < 2; ++m) {
                /* D_SPAN data (still in the buffers) at an odd start */
                const void *p = t ? (const void *)(xd + 1) : (const void *)(xf + 1);
                gr_value_t v = test_host(ctx, p, pn, pt[t], GR_OP_SUM, 1, m ? GR_MODE_EXACT : GR_MODE_FAST);
                if (l < 0)
                    ref[t][m] = v;
                else if (!test_value_same(&v, &ref[t][m]))
                    GR_TEST_FAIL_("GR_CPU_ISA=%s %s %s: %a, baseline %a", gr_cpu_isa_name(k->isa),
                                  gr_dtype_name(pt[t]), m ? "exact" : "fast", v.f, ref[t][m].f);
            }
        gr_ctx_destroy(ctx);
    }
    unsetenv("GR_CPU_ISA");
    printf("public API: GR_CPU_ISA = baseline and each level give the same bits\n");
    MPI_Finalize();
    return 0;
}
