/*
 * test_npy_parse.c - the .npy header parser and writer on hand-made headers:
 * every accepted form, every refusal with its reason, and parse(format(x)) = x.
 */
#include "gr_npy.h"
#include "test.h"

/* Build a header the way a test wants it: version, dict text, header length
 * (the real one + hlen_delta), padded like numpy to a multiple of 64. */
static size_t make(unsigned char *buf, size_t cap, int major, const char *dict, long hlen_delta)
{
    size_t pre = major == 1 ? 10 : 12;
    size_t dl = strlen(dict);
    size_t total = (pre + dl + 1 + 63) / 64 * 64;
    ASSERT(total <= cap);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    unsigned long hlen = (unsigned long)((long)(total - pre) + hlen_delta);
    buf[8] = (unsigned char)(hlen & 0xFF);
    buf[9] = (unsigned char)((hlen >> 8) & 0xFF);
    if (pre == 12) {
        buf[10] = (unsigned char)((hlen >> 16) & 0xFF);
        buf[11] = (unsigned char)((hlen >> 24) & 0xFF);
    }
    memcpy(buf + pre, dict, dl);
    memset(buf + pre + dl, ' ', total - pre - dl - 1);
    buf[total - 1] = '\n';
    return total;
}

static unsigned char B[1 << 16];
static char err[512];

static gr_result_t parse_dict(int major, const char *dict, gr_npy_header_t *h)
{
    size_t n = make(B, sizeof(B), major, dict, 0);
    return gr_npy_parse(B, n, h, err, sizeof(err));
}

static void expect_ok(int major, const char *dict, gr_npy_type_t type, uint64_t count)
{
    gr_npy_header_t h;
    gr_result_t r = parse_dict(major, dict, &h);
    if (r != GR_SUCCESS)
        GR_TEST_FAIL_("v%d %s: refused: %s", major, dict, err);
    ASSERT_EQ_I(h.major, major);
    ASSERT_EQ_I(h.type, type);
    ASSERT_EQ_U(h.count, count);
    ASSERT_EQ_U(h.data_offset % 64, 0);
}

static void expect_bad(int major, const char *dict, const char *why)
{
    gr_npy_header_t h;
    gr_result_t r = parse_dict(major, dict, &h);
    if (r == GR_SUCCESS)
        GR_TEST_FAIL_("v%d %s: accepted, expected a refusal mentioning '%s'", major, dict, why);
    ASSERT_EQ_I(r, GR_ERR_IO);
    if (!strstr(err, why))
        GR_TEST_FAIL_("v%d %s: message \"%s\" lacks '%s'", major, dict, err, why);
}

static void expect_bad_bytes(const unsigned char *b, size_t n, const char *why)
{
    gr_npy_header_t h;
    gr_result_t r = gr_npy_parse(b, n, &h, err, sizeof(err));
    if (r == GR_SUCCESS)
        GR_TEST_FAIL_("accepted, expected a refusal mentioning '%s'", why);
    if (!strstr(err, why))
        GR_TEST_FAIL_("message \"%s\" lacks '%s'", err, why);
}

int main(void)
{
    /* versions, element types, byte orders */
    for (int v = 1; v <= 3; ++v) {
        expect_ok(v, "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", GR_NPY_F32, 10);
        expect_ok(v, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4, 5), }", GR_NPY_F64, 60);
        expect_ok(v, "{'descr': '<i4', 'fortran_order': False, 'shape': (), }", GR_NPY_I32, 1);
        expect_ok(v, "{'descr': '<i8', 'fortran_order': False, 'shape': (0,), }", GR_NPY_I64, 0);
        expect_ok(v, "{'descr': '<f2', 'fortran_order': False, 'shape': (7,), }", GR_NPY_F16, 7);
    }
    expect_ok(1, "{'descr': '=f4', 'fortran_order': False, 'shape': (2,), }", GR_NPY_F32, 2);
    expect_ok(1, "{'descr': '|i8', 'fortran_order': False, 'shape': (2,), }", GR_NPY_I64, 2);
    expect_ok(1, "{'descr': 'bfloat16', 'fortran_order': False, 'shape': (4,), }", GR_NPY_BF16, 4);
    expect_ok(1, "{'descr': '<V2', 'fortran_order': False, 'shape': (4,), }", GR_NPY_V2, 4);
    expect_ok(1, "{'descr': '|V2', 'fortran_order': False, 'shape': (4,), }", GR_NPY_V2, 4);
    /* other spellings numpy accepts: key order, double quotes, no trailing
     * comma, Python 2 long suffix, 0 inside a shape */
    expect_ok(1, "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}", GR_NPY_F32, 6);
    expect_ok(1, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (5,)}", GR_NPY_F32, 5);
    expect_ok(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3L, 2L), }", GR_NPY_I64, 6);
    expect_ok(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 0, 18446744073709551615), }", GR_NPY_F32,
              0);
    /* a 1-D fortran_order False with the dict split over lines */
    expect_ok(2, "{\n 'descr': '<f8',\n 'fortran_order': False,\n 'shape': (9,)\n}", GR_NPY_F64, 9);

    /* refusals, each with its reason */
    expect_bad(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (10,), }", "big-endian");
    expect_bad(1, "{'descr': '>i8', 'fortran_order': False, 'shape': (10,), }", "big-endian");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", "fortran_order is True");
    expect_bad(1, "{'descr': '|O', 'fortran_order': False, 'shape': (10,), }", "object array");
    expect_bad(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (10,), }", "unsupported dtype '<u4'");
    expect_bad(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (10,), }", "unsupported dtype");
    expect_bad(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (10,), }", "unsupported dtype");
    expect_bad(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (10,), }", "structured dtype");
    expect_bad(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", "overflows");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952, 2), }", "overflows");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", "64 bits");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }", "non-negative");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (5), }", "comma");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': [5], }", "not a tuple");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': False}", "lacks 'shape'");
    expect_bad(1, "{'descr': '<f8', 'shape': (1,)}", "lacks 'fortran_order'");
    expect_bad(1, "{'fortran_order': False, 'shape': (1,)}", "lacks 'descr'");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unexpected key 'extra'");
    expect_bad(1, "{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "twice");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': maybe, 'shape': (1,)}", "neither True nor False");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': Falsey, 'shape': (1,)}", "neither True nor False");
    expect_bad(1, "['descr', '<f8']", "not a dict");
    expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} junk", "non-padding");
    expect_bad(1, "{'descr': '<f8' 'fortran_order': False, 'shape': (1,)}", "malformed");
    expect_bad(1, "{'descr': '', 'fortran_order': False, 'shape': (1,)}", "empty");
    {
        char dict[256];
        snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (1,)}",
                 "<f4xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        expect_bad(1, dict, "unsupported dtype");
    }
    {
        char dict[300];
        size_t o = (size_t)snprintf(dict, sizeof(dict), "{'descr': '<f4', 'fortran_order': False, 'shape': (");
        for (int k = 0; k < 65; ++k)
            o += (size_t)snprintf(dict + o, sizeof(dict) - o, "1,");
        snprintf(dict + o, sizeof(dict) - o, ")}");
        expect_bad(1, dict, "more than 64 dimensions");
    }

    /* the preamble */
    expect_bad_bytes((const unsigned char *)"", 0, "empty");
    expect_bad_bytes((const unsigned char *)"\x93NUMPZ\x01\x00", 8, "bad magic");
    expect_bad_bytes((const unsigned char *)"PK\x03\x04", 4, "bad magic"); /* an .npz (zip) */
    expect_bad_bytes((const unsigned char *)"\x93NUM", 4, "truncated .npy preamble"); /* cut inside the magic */
    expect_bad_bytes((const unsigned char *)"\x93NUMPY\x01", 7, "truncated .npy preamble");
    expect_bad_bytes((const unsigned char *)"\x93NUMPY\x04\x00\x10\x00", 10, "unsupported .npy format version 4.0");
    expect_bad_bytes((const unsigned char *)"\x93NUMPY\x01\x01\x10\x00", 10, "version 1.1");
    expect_bad_bytes((const unsigned char *)"\x93NUMPY\x02\x00\x10\x00", 10, "truncated .npy preamble");
    expect_bad_bytes((const unsigned char *)"\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12, "implausibly large");
    {
        /* a length that lies: longer than the file, shorter than the dict */
        size_t n = make(B, sizeof(B), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", 64);
        expect_bad_bytes(B, n, "runs past the end");
        n = make(B, sizeof(B), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", -70);
        expect_bad_bytes(B, n, "cut short");
        n = make(B, sizeof(B), 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", -64);
        expect_bad_bytes(B, n, "cut short");
        /* shorter, but only into the padding: the final '\n' is missing */
        n = make(B, sizeof(B), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", -10);
        expect_bad_bytes(B, n, "does not end with");
        /* longer, into data that follows the '\n' */
        n = make(B, sizeof(B), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", 0);
        B[n] = 'x';
        B[n + 1] = '\n';
        B[8] = (unsigned char)(B[8] + 2);
        expect_bad_bytes(B, n + 2, "non-padding bytes");
    }

    /* writer: what numpy writes, and parse(format(x)) == x */
    {
        char hb[4096];
        uint64_t shape1[1] = {1000};
        size_t n = gr_npy_format_header(hb, sizeof(hb), "<f4", shape1, 1);
        ASSERT_EQ_U(n, 128);
        static const char want[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), }";
        ASSERT(memcmp(hb, want, sizeof(want) - 1) == 0);
        ASSERT(hb[127] == '\n');
        uint64_t shapes[][3] = {{0, 0, 0}, {7, 0, 0}, {2, 3, 4}, {UINT64_MAX / 8, 0, 0}};
        int ndims[] = {0, 1, 3, 1};
        const char *descrs[] = {"<f4", "<f8", "<i4", "<i8"};
        for (int s = 0; s < 4; ++s) {
            for (int d = 0; d < 4; ++d) {
                n = gr_npy_format_header(hb, sizeof(hb), descrs[d], shapes[s], ndims[s]);
                ASSERT(n > 0 && n % 64 == 0);
                gr_npy_header_t h;
                if (gr_npy_parse(hb, n, &h, err, sizeof(err)) != GR_SUCCESS)
                    GR_TEST_FAIL_("parse(format()) refused: %s", err);
                ASSERT_STREQ(h.descr, descrs[d]);
                ASSERT_EQ_I(h.ndim, ndims[s]);
                for (int k = 0; k < ndims[s]; ++k)
                    ASSERT_EQ_U(h.shape[k], shapes[s][k]);
                ASSERT_EQ_U(h.data_offset, n);
            }
        }
        ASSERT_EQ_U(gr_npy_format_header(hb, 64, "<f4", shape1, 1), 0); /* too small a buffer */
    }
    ASSERT_STREQ(gr_npy_descr_of(GR_F32), "<f4");
    ASSERT_STREQ(gr_npy_descr_of(GR_I64), "<i8");
    ASSERT_STREQ(gr_npy_descr_of(GR_F16), "<f2");
    ASSERT_STREQ(gr_npy_descr_of(GR_BF16), "bfloat16");
    ASSERT_EQ_I(gr_npy_type_to_dtype(GR_NPY_F16), GR_F16);
    ASSERT_EQ_I(gr_npy_type_to_dtype(GR_NPY_BF16), GR_BF16);
    ASSERT_EQ_I(gr_npy_type_to_dtype(GR_NPY_V2), -1); /* bfloat16 only when the caller says so */
    ASSERT_EQ_I(gr_npy_type_to_dtype(GR_NPY_I32), GR_I32);
    printf("npy parser: ok\n");
    return 0;
}
