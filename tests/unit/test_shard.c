/* test_shard.c - gr_shard_range: rank r owns [floor(r N/np), floor((r+1) N/np)). */
#include "gpureduce.h"
#include "test.h"

/* floor(r*n/np) by a different route than the library: n = q np + m. */
static uint64_t floor_share(uint64_t n, uint64_t np, uint64_t r)
{
    uint64_t q = n / np, m = n % np;
    /* r*m < np^2 <= 2^62 for np < 2^31 */
    return r * q + (r * m) / np;
}

static void check_cover(uint64_t n, int np)
{
    uint64_t prev_end = 0, lo = UINT64_MAX, hi = 0;
    for (int r = 0; r < np; ++r) {
        uint64_t b = 1, e = 0;
        gr_shard_range(n, np, r, &b, &e);
        if (b != prev_end)
            GR_TEST_FAIL_("n=%llu np=%d r=%d: begin %llu != previous end %llu", (unsigned long long)n, np, r,
                          (unsigned long long)b, (unsigned long long)prev_end);
        ASSERT(b <= e);
        ASSERT_EQ_U(b, floor_share(n, (uint64_t)np, (uint64_t)r));
        uint64_t sz = e - b;
        lo = sz < lo ? sz : lo;
        hi = sz > hi ? sz : hi;
        prev_end = e;
    }
    if (prev_end != n)
        GR_TEST_FAIL_("n=%llu np=%d: last end %llu", (unsigned long long)n, np, (unsigned long long)prev_end);
    ASSERT(hi - lo <= 1); /* balanced */
}

int main(void)
{
    static const uint64_t ns[] = {0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 100, 1000, 1000003, 65536, (1ull << 31) - 1,
                                  1ull << 32, (1ull << 32) + 1, 1ull << 40, (1ull << 63) - 1, 1ull << 63,
                                  (1ull << 63) + 1, UINT64_MAX - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); ++i)
        for (int np = 1; np <= 40; ++np)
            check_cover(ns[i], np);
    /* np far beyond N: every rank but N of them is empty */
    for (uint64_t n = 0; n < 5; ++n) {
        check_cover(n, 1000);
        uint64_t nonempty = 0;
        for (int r = 0; r < 1000; ++r) {
            uint64_t b, e;
            gr_shard_range(n, 1000, r, &b, &e);
            nonempty += e > b;
        }
        ASSERT_EQ_U(nonempty, n);
    }
    /* a huge communicator: spot checks, the last rank ends at N */
    const int big = 2147483647;
    static const int rs[] = {0, 1, 2, 12345, 1073741823, 2147483645, 2147483646};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); ++i)
        for (size_t j = 0; j < sizeof(rs) / sizeof(rs[0]); ++j) {
            uint64_t b, e;
            gr_shard_range(ns[i], big, rs[j], &b, &e);
            ASSERT_EQ_U(b, floor_share(ns[i], (uint64_t)big, (uint64_t)rs[j]));
            ASSERT_EQ_U(e, floor_share(ns[i], (uint64_t)big, (uint64_t)rs[j] + 1));
            if (rs[j] == big - 1)
                ASSERT_EQ_U(e, ns[i]);
        }
    /* the documented examples */
    uint64_t b, e;
    gr_shard_range(10, 3, 0, &b, &e);
    ASSERT_EQ_U(b, 0);
    ASSERT_EQ_U(e, 3);
    gr_shard_range(10, 3, 1, &b, &e);
    ASSERT_EQ_U(b, 3);
    ASSERT_EQ_U(e, 6);
    gr_shard_range(10, 3, 2, &b, &e);
    ASSERT_EQ_U(b, 6);
    ASSERT_EQ_U(e, 10);
    gr_shard_range(UINT64_MAX, 2, 1, &b, &e);
    ASSERT_EQ_U(b, (1ull << 63) - 1); /* floor((2^64-1)/2) */
    ASSERT_EQ_U(e, UINT64_MAX);
    printf("shard: ok\n");
    return 0;
}
