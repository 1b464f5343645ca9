/* test_parse_size.c - every accepted form of a SIZE and every reject. */
#include "gpureduce.h"
#include "test.h"

static void ok(const char *s, uint64_t want)
{
    uint64_t v = 0xDEADBEEF;
    gr_result_t r = gr_parse_size(s, &v);
    if (r != GR_SUCCESS)
        GR_TEST_FAIL_("\"%s\" rejected (%d), want %llu", s, (int)r, (unsigned long long)want);
    if (v != want)
        GR_TEST_FAIL_("\"%s\" -> %llu, want %llu", s, (unsigned long long)v, (unsigned long long)want);
}

static void bad(const char *s)
{
    uint64_t v = 0;
    gr_result_t r = gr_parse_size(s, &v);
    if (r != GR_ERR_INVALID_ARG)
        GR_TEST_FAIL_("\"%s\" gave %d (value %llu), want GR_ERR_INVALID_ARG", s, (int)r, (unsigned long long)v);
}

int main(void)
{
    ok("0", 0);
    ok("1", 1);
    ok("1000", 1000);
    ok("1000003", 1000003);
    ok("007", 7);
    ok("18446744073709551615", UINT64_MAX);
    for (unsigned k = 0; k < 64; ++k) {
        char buf[16];
        snprintf(buf, sizeof(buf), "2^%u", k);
        ok(buf, 1ull << k);
    }
    ok("2^030", 1ull << 30);
    ok("1K", 1024);
    ok("4M", 4194304);
    ok("3G", 3ull << 30);
    ok("2T", 2ull << 40);
    ok("1k", 1024);
    ok("5m", 5ull << 20);
    ok("7g", 7ull << 30);
    ok("1t", 1ull << 40);
    ok("0K", 0);
    ok("16777215T", 16777215ull << 40); /* largest T that fits */
    ok("17179869183G", 17179869183ull << 30);

    bad("");
    bad("-1");
    bad("+1");
    bad(" 1");
    bad("1 ");
    bad("1.5");
    bad("1e6");
    bad("0x10");
    bad("2^64");
    bad("2^100");
    bad("2^99999999999999999999");
    bad("2^");
    bad("^3");
    bad("2^-1");
    bad("2^3K");
    bad("3^2");
    bad("0^2");
    bad("12Q");
    bad("K");
    bad("1KK");
    bad("1KB");
    bad("1Ki");
    bad("16777216T");
    bad("17179869184G");
    bad("18446744073709551616");
    bad("99999999999999999999999");
    ASSERT_EQ_I(gr_parse_size(NULL, NULL), GR_ERR_INVALID_ARG);
    printf("parse_size: ok\n");
    return 0;
}
