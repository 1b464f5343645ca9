/* util.c - names, descriptors, sharding. */
#include "gr_internal.h"

#include <stdio.h>
#include <string.h>

_Static_assert((int)GR_F32 == (int)GR_C_F32 && (int)GR_F64 == (int)GR_C_F64 && (int)GR_I32 == (int)GR_C_I32 && (int)GR_I64 == (int)GR_C_I64 &&
                   (int)GR_F16 == (int)GR_C_F16 && (int)GR_BF16 == (int)GR_C_BF16 && GR_DTYPE_COUNT == 6,
               "dtype numbers shared with kernels");
_Static_assert((int)GR_OP_SUM == (int)GR_C_SUM && (int)GR_OP_MIN == (int)GR_C_MIN && (int)GR_OP_MAX == (int)GR_C_MAX &&
                   (int)GR_OP_ABSSUM == (int)GR_C_ABSSUM && (int)GR_OP_SUMSQ == (int)GR_C_SUMSQ && (int)GR_OP_POWSUM == (int)GR_C_POWSUM,
               "op numbers shared with kernels");
_Static_assert((int)GR_GEN_ONES == (int)GR_C_ONES && (int)GR_GEN_IOTA == (int)GR_C_IOTA && (int)GR_GEN_UNIFORM == (int)GR_C_UNIFORM &&
                   (int)GR_GEN_NORMAL == (int)GR_C_NORMAL && (int)GR_GEN_RANDINT == (int)GR_C_RANDINT && (int)GR_GEN_STRESS == (int)GR_C_STRESS,
               "generator numbers shared with kernels");

const char *gr_strerror(gr_result_t r)
{
    switch (r) {
#define GR_RESULT_CASE_(name, value, msg) \
    case name:                            \
        return msg;
        GR_RESULT_LIST(GR_RESULT_CASE_)
#undef GR_RESULT_CASE_
    }
    return "unknown result code";
}

const char *gr_version(void) { return GR_VERSION_STRING; }

const char *gr_dtype_name(gr_dtype_t t)
{
    static const char *n[GR_DTYPE_COUNT] = {"f32", "f64", "i32", "i64", "f16", "bf16"};
    return (unsigned)t < GR_DTYPE_COUNT ? n[t] : "?";
}

size_t gr_dtype_size(gr_dtype_t t)
{
    static const size_t s[GR_DTYPE_COUNT] = {4, 8, 4, 8, 2, 2};
    return (unsigned)t < GR_DTYPE_COUNT ? s[t] : 0;
}

const char *gr_op_name(gr_op_kind_t k)
{
    static const char *n[GR_OP_KIND_COUNT] = {"sum",  "min",  "max",    "abssum", "sumsq",
                                              "powsum", "dot", "nrm2", "argmin", "argmax"};
    return (unsigned)k < GR_OP_KIND_COUNT ? n[k] : "?";
}

const char *gr_mode_name(gr_mode_t m) { return m == GR_MODE_EXACT ? "exact" : "fast"; }

const char *gr_backend_name(gr_backend_t b)
{
    switch (b) {
    case GR_BACKEND_CUDA:
        return "cuda";
    case GR_BACKEND_CPU:
        return "cpu";
    default:
        return "auto";
    }
}

const char *gr_gen_name(gr_gen_t g)
{
    static const char *n[] = {"ones", "iota", "uniform", "normal", "randint", "stress"};
    return (unsigned)g < GR_GEN_COUNT ? n[g] : "?";
}

void gr_config_init(gr_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->size = sizeof(*cfg);
    cfg->backend = GR_BACKEND_AUTO;
    /* an application owns its process: binding only when asked (the CLI asks) */
    cfg->bind = GR_BIND_NONE;
    cfg->device = GR_DEVICE_AUTO;
    cfg->stream = NULL;
}

void gr_call_init(gr_call_t *call)
{
    memset(call, 0, sizeof(*call));
    call->size = sizeof(*call);
}

void gr_desc_init(gr_desc_t *d)
{
    memset(d, 0, sizeof(*d));
    d->dtype = GR_F32;
    d->op.kind = GR_OP_SUM;
    d->op.power = 1;
    d->mode = GR_MODE_FAST;
}

static int is_float(gr_dtype_t t) { return gr_c_is_float((int)t); }

gr_result_t gr_desc_check(const gr_desc_t *d, char *msg, size_t len)
{
#define GR_DESC_BAD(res, ...)                   \
    do {                                        \
        if (msg && len)                         \
            snprintf(msg, len, __VA_ARGS__);    \
        return (res);                           \
    } while (0)
    if ((unsigned)d->dtype >= GR_DTYPE_COUNT)
        GR_DESC_BAD(GR_ERR_INVALID_ARG, "unknown dtype %d; use f32, f64, i32, i64, f16 or bf16", (int)d->dtype);
    if ((unsigned)d->op.kind >= GR_OP_KIND_COUNT)
        GR_DESC_BAD(GR_ERR_INVALID_ARG, "unknown op %d", (int)d->op.kind);
    if (d->op.kind == GR_OP_POWSUM && (d->op.power < 1 || d->op.power > 8))
        GR_DESC_BAD(GR_ERR_INVALID_ARG, "powsum power %d is outside 1..8", d->op.power);
    if (d->mode != GR_MODE_FAST && d->mode != GR_MODE_EXACT)
        GR_DESC_BAD(GR_ERR_INVALID_ARG, "unknown mode %d", (int)d->mode);
    if (d->mode == GR_MODE_EXACT && is_float(d->dtype) && (unsigned)d->op.kind < GR_OP_COUNT) {
        /* Exact for terms that are exact in f64: x, |x|, and x^2 of f32, f16
         * and bf16 (24-, 11- and 8-bit significands; bf16 squares need f64's
         * exponent range, which the f64 term has); x^2 of f64 is summed as
         * exact TwoProduct pairs in the wide accumulator (vecop.c). */
        int sq_ok = 1;
        int ok = d->op.kind == GR_OP_SUM || d->op.kind == GR_OP_ABSSUM || d->op.kind == GR_OP_MIN ||
                 d->op.kind == GR_OP_MAX || (d->op.kind == GR_OP_SUMSQ && sq_ok) ||
                 (d->op.kind == GR_OP_POWSUM && d->op.power == 1) ||
                 (d->op.kind == GR_OP_POWSUM && d->op.power == 2 && sq_ok);
        if (!ok)
            GR_DESC_BAD(GR_ERR_UNSUPPORTED,
                        "--mode exact supports sum, abssum, min, max, sumsq (powsum 2), dot, nrm2, argmin and argmax "
                        "(x^%d of %s is not exact); use --mode fast for this op",
                        d->op.kind == GR_OP_SUMSQ ? 2 : d->op.power, gr_dtype_name(d->dtype));
    }
    if (msg && len)
        msg[0] = 0;
    return GR_SUCCESS;
#undef GR_DESC_BAD
}

gr_result_t gr_desc_validate(const gr_desc_t *d)
{
    char msg[256];
    gr_result_t r = gr_desc_check(d, msg, sizeof(msg));
    if (r != GR_SUCCESS)
        GR_FAIL(r, "%s", msg);
    return GR_SUCCESS;
}

void gr_shard_range(uint64_t n, int np, int r, uint64_t *begin, uint64_t *end)
{
    /* floor(r*N/np) without overflow for any N < 2^64 */
    unsigned __int128 b = (unsigned __int128)n * (unsigned)r / (unsigned)np;
    unsigned __int128 e = (unsigned __int128)n * (unsigned)(r + 1) / (unsigned)np;
    *begin = (uint64_t)b;
    *end = (uint64_t)e;
}

gr_result_t gr_parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return GR_ERR_INVALID_ARG;
    const char *p = s;
    uint64_t v = 0;
    if (*p < '0' || *p > '9')
        return GR_ERR_INVALID_ARG;
    while (*p >= '0' && *p <= '9') {
        uint64_t dgt = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - dgt) / 10)
            return GR_ERR_INVALID_ARG;
        v = v * 10 + dgt;
        ++p;
    }
    if (*p == '^') {
        /* base^k, base 2 only: "2^30" */
        ++p;
        if (v != 2 || *p < '0' || *p > '9')
            return GR_ERR_INVALID_ARG;
        unsigned k = 0;
        while (*p >= '0' && *p <= '9') {
            k = k * 10 + (unsigned)(*p - '0');
            if (k > 63)
                return GR_ERR_INVALID_ARG;
            ++p;
        }
        if (*p)
            return GR_ERR_INVALID_ARG;
        *out = (uint64_t)1 << k;
        return GR_SUCCESS;
    }
    unsigned shift = 0;
    switch (*p) {
    case '\0':
        break;
    case 'k': case 'K':
        shift = 10;
        break;
    case 'm': case 'M':
        shift = 20;
        break;
    case 'g': case 'G':
        shift = 30;
        break;
    case 't': case 'T':
        shift = 40;
        break;
    default:
        return GR_ERR_INVALID_ARG;
    }
    if (shift) {
        ++p;
        if (*p)
            return GR_ERR_INVALID_ARG;
        if (v > (UINT64_MAX >> shift))
            return GR_ERR_INVALID_ARG;
        v <<= shift;
    }
    *out = v;
    return GR_SUCCESS;
}
