/*
 * gr_xacc.h - exact fixed-point accumulator (a "large superaccumulator" in
 * the sense of Neal, arXiv 1505.05571) spanning every f64 value and sums of up
 * to 2^64 of them.
 *
 * value = sum_k limb[k] * 2^(32 k - GR_XACC_BIAS)
 *
 * Each limb carries a 32-bit digit in an int64, which leaves 2^31 additions
 * of headroom before a carry pass (gr_xacc_normalize) is needed. Limbs add
 * associatively and commutatively, so any tree of additions (threads, blocks,
 * ranks, any MPI reduce algorithm) gives the same state, and rounding that
 * state once gives the same bits everywhere.
 */
#ifndef GR_XACC_H
#define GR_XACC_H

#include <stdint.h>

#define GR_XACC_LIMBS 70
#define GR_XACC_BIAS 1088 /* bit index of 2^0; a multiple of 32: limb 34 holds 2^0..2^31 */
/* Additions of normalised states or of single doubles allowed between two
 * normalisations (each adds < 2^32 to a limb). */
#define GR_XACC_HEADROOM (1u << 30)

typedef struct gr_xacc {
    int64_t limb[GR_XACC_LIMBS];
} gr_xacc_t;

void gr_xacc_zero(gr_xacc_t *x);
/* Add a finite double exactly (no-op for +-0). */
void gr_xacc_add_double(gr_xacc_t *x, double d);
/* Subtract: add -d. */
void gr_xacc_sub_double(gr_xacc_t *x, double d);
/* Add the 128-bit two's complement integer hi:lo. */
void gr_xacc_add_i128(gr_xacc_t *x, uint64_t lo, int64_t hi);
/* x += y, limb by limb (both must be normalised or within headroom). */
void gr_xacc_add(gr_xacc_t *x, const gr_xacc_t *y);
/* Carry pass: every limb but the top in [0, 2^32), the top limb signed. */
void gr_xacc_normalize(gr_xacc_t *x);
/* -1, 0 or +1. */
int gr_xacc_sign(const gr_xacc_t *x);
/*
 * Round the exact value once, to nearest with ties to even, into a binary
 * format of `prec` significant bits whose smallest subnormal is 2^emin_lsb and
 * whose largest exponent is emax: f64 is (53, -1074, 1023), f32 (24, -149,
 * 127). Beyond the range the result is +-Inf. A zero state gives +0.0.
 */
double gr_xacc_round(const gr_xacc_t *x, int prec, int emin_lsb, int emax);
static inline double gr_xacc_to_double(const gr_xacc_t *x) { return gr_xacc_round(x, 53, -1074, 1023); }
static inline float gr_xacc_to_float(const gr_xacc_t *x) { return (float)gr_xacc_round(x, 24, -149, 127); }
/* (prec, emin_lsb, emax) of binary16 and bfloat16, for gr_xacc_round. */
#define GR_XACC_F16_ROUND 11, -24, 15
#define GR_XACC_BF16_ROUND 8, -133, 127
/*
 * The exact value rounded once to the format exact mode reports for a dtype
 * (GR_C_* of gr_common.h): f32, f16 or bf16 as above (the result is a value
 * of that type, held in a double), anything else to f64.
 */
double gr_xacc_round_dtype(const gr_xacc_t *x, int dtype);
/* Integer value when the state is an integer that fits int64: returns 1; else 0. */
int gr_xacc_to_i64(const gr_xacc_t *x, int64_t *out);

#endif /* GR_XACC_H */
