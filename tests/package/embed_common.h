/*
 * embed_common.h - shared by the embedding tests (test_embed.c,
 * test_embed_gpu.c): a check that ends the test on an unexpected result
 * code, and a comparison of two results field by field, bits for floats.
 */
#ifndef GR_TEST_EMBED_COMMON_H
#define GR_TEST_EMBED_COMMON_H

#include "gpureduce.h"
#include "test.h"

#include <mpi.h>

#define EXPECT_R(call, want)                                                                       \
    do {                                                                                           \
        gr_result_t r_ = (call);                                                                   \
        if (r_ != (want))                                                                          \
            GR_TEST_FAIL_("%s returned %s, expected %s", #call, gr_strerror(r_), gr_strerror(want)); \
    } while (0)
#define OK(call) EXPECT_R(call, GR_SUCCESS)

/* a and b are the same result: every field, floats by their bits */
static inline void assert_same_value(const gr_value_t *a, const gr_value_t *b, const char *what)
{
    if (a->valid != b->valid || a->is_integer != b->is_integer || a->overflow != b->overflow || a->i != b->i ||
        a->count != b->count || a->nan_count != b->nan_count || (a->valid && a->dtype != b->dtype) ||
        memcmp(&a->f, &b->f, sizeof(double)) != 0)
        GR_TEST_FAIL_("%s: results differ: valid %d/%d f %.17g (%a) / %.17g (%a) i %lld/%lld count %llu/%llu", what,
                      a->valid, b->valid, a->f, a->f, b->f, b->f, (long long)a->i, (long long)b->i,
                      (unsigned long long)a->count, (unsigned long long)b->count);
}

/* A context of the cpu backend on MPI_COMM_WORLD with `threads` threads, gr_config_init's other defaults */
static inline gr_ctx_t embed_cpu_ctx(int threads)
{
    gr_config_t cfg;
    gr_config_init(&cfg);
    cfg.backend = GR_BACKEND_CPU;
    cfg.cpu_threads = threads;
    gr_ctx_t ctx = NULL;
    OK(gr_ctx_create(MPI_COMM_WORLD, &cfg, &ctx));
    return ctx;
}

#endif /* GR_TEST_EMBED_COMMON_H */
