/* test_desc_validate.c - which (dtype, op, mode) combinations are accepted. */
#include "gpureduce.h"
#include "test.h"

static gr_result_t v(gr_dtype_t t, gr_op_kind_t k, int power, gr_mode_t m)
{
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = t;
    d.op.kind = k;
    d.op.power = power;
    d.mode = m;
    return gr_desc_validate(&d);
}

int main(void)
{
    gr_desc_t d;
    gr_desc_init(&d);
    ASSERT_EQ_I(d.dtype, GR_F32);
    ASSERT_EQ_I(d.op.kind, GR_OP_SUM);
    ASSERT_EQ_I(d.mode, GR_MODE_FAST);
    ASSERT_EQ_I(d.root, 0);
    ASSERT_EQ_I(d.all_ranks, 0);
    ASSERT_EQ_I(gr_desc_validate(&d), GR_SUCCESS);

    /* fast mode: every dtype and op, powsum 1..8 */
    for (int t = 0; t < GR_DTYPE_COUNT; ++t) {
        for (int k = 0; k < GR_OP_COUNT; ++k)
            if (k != GR_OP_POWSUM)
                ASSERT_EQ_I(v((gr_dtype_t)t, (gr_op_kind_t)k, 1, GR_MODE_FAST), GR_SUCCESS);
        for (int p = 1; p <= 8; ++p)
            ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_POWSUM, p, GR_MODE_FAST), GR_SUCCESS);
        /* powsum:0 and 9 never make sense */
        for (int m = 0; m < 2; ++m) {
            ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_POWSUM, 0, (gr_mode_t)m), GR_ERR_INVALID_ARG);
            ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_POWSUM, 9, (gr_mode_t)m), GR_ERR_INVALID_ARG);
            ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_POWSUM, -1, (gr_mode_t)m), GR_ERR_INVALID_ARG);
        }
    }
    /* exact mode, floating: terms exact in f64 only */
    ASSERT_EQ_I(v(GR_F64, GR_OP_SUM, 1, GR_MODE_EXACT), GR_SUCCESS);
    ASSERT_EQ_I(v(GR_F32, GR_OP_SUM, 1, GR_MODE_EXACT), GR_SUCCESS);
    ASSERT_EQ_I(v(GR_F64, GR_OP_ABSSUM, 1, GR_MODE_EXACT), GR_SUCCESS);
    ASSERT_EQ_I(v(GR_F32, GR_OP_ABSSUM, 1, GR_MODE_EXACT), GR_SUCCESS);
    ASSERT_EQ_I(v(GR_F64, GR_OP_MIN, 1, GR_MODE_EXACT), GR_SUCCESS);
    ASSERT_EQ_I(v(GR_F64, GR_OP_MAX, 1, GR_MODE_EXACT), GR_SUCCESS);
    ASSERT_EQ_I(v(GR_F32, GR_OP_SUMSQ, 1, GR_MODE_EXACT), GR_SUCCESS);
    ASSERT_EQ_I(v(GR_F64, GR_OP_SUMSQ, 1, GR_MODE_EXACT), GR_SUCCESS); /* TwoProduct, wide accumulator */
    ASSERT_EQ_I(v(GR_F64, GR_OP_POWSUM, 1, GR_MODE_EXACT), GR_SUCCESS);
    ASSERT_EQ_I(v(GR_F32, GR_OP_POWSUM, 2, GR_MODE_EXACT), GR_SUCCESS);
    ASSERT_EQ_I(v(GR_F64, GR_OP_POWSUM, 2, GR_MODE_EXACT), GR_SUCCESS);
    for (int p = 3; p <= 8; ++p) {
        ASSERT_EQ_I(v(GR_F32, GR_OP_POWSUM, p, GR_MODE_EXACT), GR_ERR_UNSUPPORTED);
        ASSERT_EQ_I(v(GR_F64, GR_OP_POWSUM, p, GR_MODE_EXACT), GR_ERR_UNSUPPORTED);
    }
    /* vector ops: every dtype, both modes; unknown kinds refused */
    for (int t = 0; t < GR_DTYPE_COUNT; ++t)
        for (int k = GR_OP_DOT; k <= GR_OP_ARGMAX; ++k) {
            ASSERT_EQ_I(v((gr_dtype_t)t, (gr_op_kind_t)k, 1, GR_MODE_EXACT), GR_SUCCESS);
            ASSERT_EQ_I(v((gr_dtype_t)t, (gr_op_kind_t)k, 1, GR_MODE_FAST), GR_SUCCESS);
        }
    ASSERT_EQ_I(v(GR_F32, (gr_op_kind_t)GR_OP_KIND_COUNT, 1, GR_MODE_FAST), GR_ERR_INVALID_ARG);
    ASSERT_STREQ(gr_op_name(GR_OP_NRM2), "nrm2");
    ASSERT_STREQ(gr_op_name(GR_OP_ARGMAX), "argmax");
    /* exact mode, f16 and bf16: x, |x| and x^2 are exact in f64, x^3.. not offered */
    for (int t = GR_F16; t <= GR_BF16; ++t) {
        ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_SUM, 1, GR_MODE_EXACT), GR_SUCCESS);
        ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_ABSSUM, 1, GR_MODE_EXACT), GR_SUCCESS);
        ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_SUMSQ, 1, GR_MODE_EXACT), GR_SUCCESS);
        ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_MIN, 1, GR_MODE_EXACT), GR_SUCCESS);
        ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_MAX, 1, GR_MODE_EXACT), GR_SUCCESS);
        ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_POWSUM, 1, GR_MODE_EXACT), GR_SUCCESS);
        ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_POWSUM, 2, GR_MODE_EXACT), GR_SUCCESS);
        for (int p = 3; p <= 8; ++p)
            ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_POWSUM, p, GR_MODE_EXACT), GR_ERR_UNSUPPORTED);
    }
    /* exact mode, integers: already exact, everything accepted */
    for (int t = GR_I32; t <= GR_I64; ++t) {
        for (int k = 0; k < GR_OP_COUNT; ++k)
            if (k != GR_OP_POWSUM)
                ASSERT_EQ_I(v((gr_dtype_t)t, (gr_op_kind_t)k, 1, GR_MODE_EXACT), GR_SUCCESS);
        for (int p = 1; p <= 8; ++p)
            ASSERT_EQ_I(v((gr_dtype_t)t, GR_OP_POWSUM, p, GR_MODE_EXACT), GR_SUCCESS);
    }
    /* out-of-range enums */
    ASSERT_EQ_I(v((gr_dtype_t)GR_DTYPE_COUNT, GR_OP_SUM, 1, GR_MODE_FAST), GR_ERR_INVALID_ARG);
    ASSERT_EQ_I(v((gr_dtype_t)-1, GR_OP_SUM, 1, GR_MODE_FAST), GR_ERR_INVALID_ARG);
    ASSERT_EQ_I(v(GR_F32, (gr_op_kind_t)GR_OP_KIND_COUNT, 1, GR_MODE_FAST), GR_ERR_INVALID_ARG);
    ASSERT_EQ_I(v(GR_F32, GR_OP_SUM, 1, (gr_mode_t)2), GR_ERR_INVALID_ARG);

    /* names round the enums */
    ASSERT_STREQ(gr_dtype_name(GR_F32), "f32");
    ASSERT_STREQ(gr_dtype_name(GR_I64), "i64");
    ASSERT_STREQ(gr_dtype_name(GR_F16), "f16");
    ASSERT_STREQ(gr_dtype_name(GR_BF16), "bf16");
    ASSERT_STREQ(gr_dtype_name((gr_dtype_t)GR_DTYPE_COUNT), "?");
    ASSERT_EQ_U(gr_dtype_size(GR_F16), 2);
    ASSERT_EQ_U(gr_dtype_size(GR_BF16), 2);
    ASSERT_EQ_U(gr_dtype_size(GR_F64), 8);
    ASSERT_EQ_U(gr_dtype_size(GR_I32), 4);
    ASSERT_STREQ(gr_op_name(GR_OP_POWSUM), "powsum");
    ASSERT_STREQ(gr_mode_name(GR_MODE_EXACT), "exact");
    ASSERT_STREQ(gr_gen_name(GR_GEN_STRESS), "stress");
    ASSERT_STREQ(gr_strerror(GR_SUCCESS), "success");
    ASSERT_STREQ(gr_strerror((gr_result_t)999), "unknown result code");
    printf("desc_validate: ok\n");
    return 0;
}
