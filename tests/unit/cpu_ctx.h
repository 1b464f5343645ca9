/*
 * cpu_ctx.h - shared by the tests that go through the public API: a cpu
 * backend context on MPI_COMM_WORLD and one-line reduce helpers that fail the
 * test on an unexpected result code.
 */
#ifndef GR_TEST_CPU_CTX_H
#define GR_TEST_CPU_CTX_H

#include "gpureduce.h"
#include "test.h"

#include <mpi.h>

static inline gr_ctx_t test_cpu_ctx(int threads)
{
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.backend = GR_BACKEND_CPU;
    cfg.bind = GR_BIND_NONE;
    cfg.cpu_threads = threads;
    gr_ctx_t ctx = NULL;
    gr_result_t r = gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx);
    if (r != GR_SUCCESS)
        GR_TEST_FAIL_("gr_ctx_create(cpu, %d threads): %s", threads, gr_strerror(r));
    ASSERT(gr_ctx_backend(ctx) == GR_BACKEND_CPU);
    return ctx;
}

static inline gr_desc_t test_desc(gr_dtype_t t, gr_op_kind_t k, int power, gr_mode_t m)
{
    gr_desc_t d;
    gr_desc_init(&d);
    d.dtype = t;
    d.op.kind = k;
    d.op.power = power;
    d.mode = m;
    return d;
}

static inline gr_value_t test_host(gr_ctx_t ctx, const void *p, uint64_t n, gr_dtype_t t, gr_op_kind_t k, int power,
                                   gr_mode_t m)
{
    gr_desc_t d = test_desc(t, k, power, m);
    gr_value_t v;
    memset(&v, 0xA5, sizeof(v));
    gr_result_t r = gr_reduce_host(ctx, p, n, &d, &v, NULL);
    if (r != GR_SUCCESS)
        GR_TEST_FAIL_("gr_reduce_host(%s %s:%d %s, n=%llu): %s", gr_dtype_name(t), gr_op_name(k), power,
                      gr_mode_name(m), (unsigned long long)n, gr_strerror(r));
    return v;
}

static inline gr_value_t test_syn(gr_ctx_t ctx, gr_gen_t g, uint64_t seed, uint64_t n, gr_dtype_t t,
                                  gr_op_kind_t k, int power, gr_mode_t m)
{
    gr_desc_t d = test_desc(t, k, power, m);
    gr_value_t v;
    memset(&v, 0xA5, sizeof(v));
    gr_result_t r = gr_reduce_synthetic(ctx, g, seed, n, &d, &v, NULL);
    if (r != GR_SUCCESS)
        GR_TEST_FAIL_("gr_reduce_synthetic(%s %s %s:%d %s, n=%llu): %s", gr_gen_name(g), gr_dtype_name(t),
                      gr_op_name(k), power, gr_mode_name(m), (unsigned long long)n, gr_strerror(r));
    return v;
}

/* Two results are the same in every field a caller reads. */
static inline int test_value_same(const gr_value_t *a, const gr_value_t *b)
{
    return a->valid == b->valid && a->is_integer == b->is_integer && a->overflow == b->overflow &&
           memcmp(&a->f, &b->f, sizeof(double)) == 0 && a->i == b->i && a->count == b->count &&
           a->nan_count == b->nan_count;
}

#endif /* GR_TEST_CPU_CTX_H */
