/* argext.c - argmin/argmax: the (value, global index) combine; see gr_vec.h. */
#include "gr_vec.h"

#include <math.h>

void gr_argext_init(gr_argext_t *a)
{
    a->fmin = INFINITY;
    a->fmax = -INFINITY;
    a->imin = INT64_MAX;
    a->imax = INT64_MIN;
    /* the identity loses every tie: no real element has index INT64_MAX */
    a->fmin_i = a->fmax_i = a->imin_i = a->imax_i = INT64_MAX;
    a->nan_i = INT64_MAX;
}

void gr_argext_merge(gr_argext_t *a, const gr_argext_t *b)
{
    if (b->nan_i < a->nan_i)
        a->nan_i = b->nan_i;
    if (b->fmin < a->fmin || (b->fmin == a->fmin && b->fmin_i < a->fmin_i)) {
        a->fmin = b->fmin;
        a->fmin_i = b->fmin_i;
    }
    if (b->fmax > a->fmax || (b->fmax == a->fmax && b->fmax_i < a->fmax_i)) {
        a->fmax = b->fmax;
        a->fmax_i = b->fmax_i;
    }
    if (b->imin < a->imin || (b->imin == a->imin && b->imin_i < a->imin_i)) {
        a->imin = b->imin;
        a->imin_i = b->imin_i;
    }
    if (b->imax > a->imax || (b->imax == a->imax && b->imax_i < a->imax_i)) {
        a->imax = b->imax;
        a->imax_i = b->imax_i;
    }
}

void gr_argext_finish(const gr_argext_t *a, const gr_desc_t *d, uint64_t count, gr_value_t *out)
{
    int is_min = d->op.kind == GR_OP_ARGMIN;
    out->index = -1;
    if (gr_c_is_float((int)d->dtype)) {
        if (count == 0) {
            out->f = NAN;
        } else if (a->nan_i != INT64_MAX) { /* numpy: the first NaN is the extreme */
            out->f = NAN;
            out->index = a->nan_i;
        } else {
            out->f = is_min ? a->fmin : a->fmax;
            out->index = is_min ? a->fmin_i : a->fmax_i;
        }
        return;
    }
    out->is_integer = 1;
    if (count == 0)
        return;
    out->i = is_min ? a->imin : a->imax;
    out->f = (double)out->i;
    out->index = is_min ? a->imin_i : a->imax_i;
}
