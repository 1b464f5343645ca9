/*
 * test.h - tiny assertion harness (libuv style): each test is its own
 * process; a failed ASSERT prints both sides with file:line and exits 1;
 * GR_TEST_SKIP exits 77, which CTest reports as skipped.
 */
#ifndef GR_TEST_H
#define GR_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GR_TEST_SKIP_CODE 77

#define GR_TEST_FAIL_(...)                                               \
    do {                                                                 \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);             \
        fprintf(stderr, __VA_ARGS__);                                    \
        fprintf(stderr, "\n");                                           \
        exit(1);                                                         \
    } while (0)

#define GR_TEST_SKIP(...)                                                \
    do {                                                                 \
        printf("SKIP: ");                                                \
        printf(__VA_ARGS__);                                             \
        printf("\n");                                                    \
        fflush(stdout);                                                  \
        exit(GR_TEST_SKIP_CODE);                                         \
    } while (0)

#define ASSERT(cond)                                                     \
    do {                                                                 \
        if (!(cond))                                                     \
            GR_TEST_FAIL_("assertion failed: %s", #cond);                \
    } while (0)

#define ASSERT_EQ_I(a, b)                                                \
    do {                                                                 \
        long long a_ = (long long)(a), b_ = (long long)(b);              \
        if (a_ != b_)                                                    \
            GR_TEST_FAIL_("%s == %s: %lld != %lld", #a, #b, a_, b_);     \
    } while (0)

#define ASSERT_EQ_U(a, b)                                                \
    do {                                                                 \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
        if (a_ != b_)                                                    \
            GR_TEST_FAIL_("%s == %s: %llu != %llu", #a, #b, a_, b_);     \
    } while (0)

/* Bitwise equality of doubles (NaN equals NaN of the same bits). */
#define ASSERT_BITS_EQ(a, b)                                             \
    do {                                                                 \
        double a_ = (a), b_ = (b);                                       \
        if (memcmp(&a_, &b_, sizeof(double)) != 0)                       \
            GR_TEST_FAIL_("%s bits == %s bits: %.17g (%a) != %.17g (%a)", #a, #b, a_, a_, b_, b_); \
    } while (0)

#define ASSERT_NEAR(a, b, rel)                                           \
    do {                                                                 \
        double a_ = (a), b_ = (b);                                       \
        double s_ = fabs(b_) > 1 ? fabs(b_) : 1;                         \
        if (!(fabs(a_ - b_) <= (rel) * s_))                              \
            GR_TEST_FAIL_("%s ~ %s (rel %g): %.17g != %.17g", #a, #b, (double)(rel), a_, b_); \
    } while (0)

#define ASSERT_STREQ(a, b)                                               \
    do {                                                                 \
        const char *a_ = (a), *b_ = (b);                                 \
        if (strcmp(a_, b_) != 0)                                         \
            GR_TEST_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b, a_, b_); \
    } while (0)

#endif /* GR_TEST_H */
