/*
 * test_partial.c - the cross-rank partial (src/core/partial.c) without MPI: the
 * accumulator's headroom across merges of heavily loaded states, the signed
 * zero rule, the total order of -0.0 and +0.0 in min/max, failure records
 * and integer/overflow finishing.
 */
#include "gr_internal.h"
#include "test.h"

/* A partial in the state that `adds` additions of x (no normalisation in
 * between) leave: every limb holds adds times x's digit. */
static gr_partial_t loaded(double x, int64_t adds)
{
    gr_partial_t p;
    gr_partial_init(&p);
    gr_xacc_t one;
    gr_xacc_zero(&one);
    gr_xacc_add_double(&one, x);
    for (int k = 0; k < GR_XACC_LIMBS; ++k)
        p.sum.limb[k] = one.limb[k] * adds;
    p.adds = adds;
    p.count = adds;
    p.nonnegzero = adds;
    return p;
}

static void test_headroom(void)
{
    /* digits 2^32 - 2^11 and 2^32 - 1: the largest a double can put in a limb */
    const double X = 0x1.fffffffffffffp63; /* (2^53 - 1) 2^11 */
    const int64_t A = (int64_t)GR_XACC_HEADROOM - 1;
    for (int sign = 0; sign < 2; ++sign) {
        double x = sign ? -X : X;
        gr_desc_t d;
        gr_desc_init(&d);
        d.dtype = GR_F64;
        d.mode = GR_MODE_EXACT;
        gr_partial_t p = loaded(x, A);
        for (int m = 0; m < 15; ++m) {
            gr_partial_t q = loaded(x, A);
            gr_partial_merge(&p, &q);
            /* never more than the headroom's worth in a limb */
            ASSERT(p.adds < 2 * (int64_t)GR_XACC_HEADROOM);
        }
        /* and single additions on top of a loaded state */
        for (int i = 0; i < 1000; ++i)
            gr_partial_add_term(&p, x);
        __int128 n = (__int128)A * 16 + 1000;
        __int128 exact = n * (((__int128)1 << 53) - 1) * 2048;
        gr_value_t v;
        gr_partial_finish(&p, &d, &v);
        ASSERT_BITS_EQ(v.f, sign ? -(double)exact : (double)exact);
        ASSERT_EQ_U(v.count, (uint64_t)A * 16); /* add_term leaves count to its caller */
        d.dtype = GR_F32;
        gr_partial_finish(&p, &d, &v);
        ASSERT_BITS_EQ(v.f, (double)(sign ? -(float)exact : (float)exact));
    }
}

static void test_signed_zero(void)
{
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = GR_F64;
    gr_partial_t p, q;
    gr_value_t v;
    gr_partial_init(&p);
    gr_partial_add_term(&p, -0.0);
    gr_partial_init(&q);
    gr_partial_add_term(&q, -0.0);
    p.count = q.count = 1;
    gr_partial_merge(&p, &q);
    gr_partial_finish(&p, &d, &v);
    ASSERT_BITS_EQ(v.f, -0.0);
    gr_partial_add_term(&q, 0.0);
    gr_partial_merge(&p, &q);
    gr_partial_finish(&p, &d, &v);
    ASSERT_BITS_EQ(v.f, 0.0);
    /* x and -x: +0.0 */
    gr_partial_init(&p);
    gr_partial_add_term(&p, 5.0);
    gr_partial_add_term(&p, -5.0);
    p.count = 2;
    gr_partial_finish(&p, &d, &v);
    ASSERT_BITS_EQ(v.f, 0.0);
    /* nothing at all: +0.0 */
    gr_partial_init(&p);
    gr_partial_finish(&p, &d, &v);
    ASSERT_BITS_EQ(v.f, 0.0);
    ASSERT_EQ_U(v.count, 0);
}

static void test_minmax_order(void)
{
    ASSERT_BITS_EQ(gr_fmin_total(-0.0, 0.0), -0.0);
    ASSERT_BITS_EQ(gr_fmin_total(0.0, -0.0), -0.0);
    ASSERT_BITS_EQ(gr_fmax_total(-0.0, 0.0), 0.0);
    ASSERT_BITS_EQ(gr_fmax_total(0.0, -0.0), 0.0);
    ASSERT_BITS_EQ(gr_fmin_total(-0.0, -0.0), -0.0);
    ASSERT_BITS_EQ(gr_fmax_total(0.0, 0.0), 0.0);
    ASSERT_BITS_EQ(gr_fmin_total(INFINITY, 3.0), 3.0);
    ASSERT_BITS_EQ(gr_fmax_total(-INFINITY, -3.0), -3.0);
    ASSERT_BITS_EQ(gr_fmin_total(-INFINITY, 3.0), -INFINITY);
    /* merging min partials in either order */
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = GR_F32;
    d.op.kind = GR_OP_MIN;
    gr_local_t a = {0.0, 0, 0, 4, 0, 0}, b = {-0.0, 0, 0, 2, 0, 0};
    gr_partial_t p, q;
    gr_partial_init(&p);
    gr_partial_init(&q);
    gr_partial_add_local(&p, &d, &a);
    gr_partial_add_local(&q, &d, &b);
    gr_partial_t pq = p, qp = q;
    gr_partial_merge(&pq, &q);
    gr_partial_merge(&qp, &p);
    gr_value_t v1, v2;
    gr_partial_finish(&pq, &d, &v1);
    gr_partial_finish(&qp, &d, &v2);
    ASSERT_BITS_EQ(v1.f, -0.0);
    ASSERT_BITS_EQ(v2.f, -0.0);
    ASSERT_EQ_U(v1.count, 6);
    /* a NaN partial makes min NaN */
    gr_local_t c = {NAN, 0, 0, 1, 0, 0};
    gr_partial_add_local(&pq, &d, &c);
    gr_partial_finish(&pq, &d, &v1);
    ASSERT(isnan(v1.f));
}

static void test_failure_record(void)
{
    gr_partial_t p[4];
    for (int r = 0; r < 4; ++r)
        gr_partial_init(&p[r]);
    p[3].failed = 1;
    p[3].failed_rank = 3;
    p[3].failed_code = GR_ERR_NOMEM;
    p[1].failed = 1;
    p[1].failed_rank = 1;
    p[1].failed_code = GR_ERR_INVALID_ARG;
    /* any merge order: two failures, the lowest rank's code */
    gr_partial_t a = p[3], b = p[0];
    gr_partial_merge(&a, &p[2]);
    gr_partial_merge(&a, &p[1]);
    gr_partial_merge(&b, &a);
    ASSERT_EQ_I(b.failed, 2);
    ASSERT_EQ_I(b.failed_rank, 1);
    ASSERT_EQ_I(b.failed_code, GR_ERR_INVALID_ARG);
    gr_partial_t c = p[1];
    gr_partial_merge(&c, &p[3]);
    ASSERT_EQ_I(c.failed_rank, 1);
    ASSERT_EQ_I(c.failed_code, GR_ERR_INVALID_ARG);
}

static void test_integer_finish(void)
{
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = GR_I64;
    gr_partial_t p;
    gr_partial_init(&p);
    gr_local_t a = {0, (uint64_t)INT64_MAX, 0, 10, 0, 0};
    gr_local_t b = {0, 1, 0, 1, 0, 0};
    gr_local_t c = {0, UINT64_MAX, -1, 1, 0, 0}; /* -1 */
    gr_partial_add_local(&p, &d, &a);
    gr_partial_add_local(&p, &d, &b);
    gr_value_t v;
    gr_partial_finish(&p, &d, &v);
    ASSERT(v.is_integer && v.overflow);
    ASSERT_BITS_EQ(v.f, 0x1p63);
    gr_partial_add_local(&p, &d, &c);
    gr_partial_finish(&p, &d, &v);
    ASSERT(v.is_integer && !v.overflow);
    ASSERT_EQ_I(v.i, INT64_MAX);
    ASSERT_EQ_U(v.count, 12);
    /* a term overflow is reported even when the sum fits */
    gr_local_t e = {0, 0, 0, 1, 1, 0};
    gr_partial_add_local(&p, &d, &e);
    gr_partial_finish(&p, &d, &v);
    ASSERT(v.overflow);
    /* integer min/max */
    d.op.kind = GR_OP_MIN;
    gr_partial_init(&p);
    gr_local_t m1 = {0, (uint64_t)(int64_t)-5, 0, 3, 0, 0}, m2 = {0, (uint64_t)INT64_MIN, 0, 3, 0, 0};
    gr_partial_add_local(&p, &d, &m1);
    gr_partial_finish(&p, &d, &v);
    ASSERT_EQ_I(v.i, -5);
    gr_partial_add_local(&p, &d, &m2);
    gr_partial_finish(&p, &d, &v);
    ASSERT_EQ_I(v.i, INT64_MIN);
    ASSERT(v.is_integer && !v.overflow);
}

int main(void)
{
    test_headroom();
    test_signed_zero();
    test_minmax_order();
    test_failure_record();
    test_integer_finish();
    printf("partial: ok\n");
    return 0;
}
