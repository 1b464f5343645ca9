/*
 * io_npy.c - the .npy header parser and writer (see gr_npy.h).
 *
 * The parser reads only a subset of Python literal syntax, the one numpy
 * writes: a dict of three keys whose values are a quoted string, True or
 * False, and a tuple of non-negative integers (Python 2 files may carry an
 * 'L' suffix). Every index is checked against len before it is read.
 */
#include "gr_npy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gpureduce reads .npy data in the host's byte order and supports little-endian hosts only"
#endif

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static gr_result_t bad(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static gr_result_t bad(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return GR_ERR_IO;
}

/* Printable rendering of up to n bytes for messages ("\x93NUMPZ"). */
static void show_bytes(const unsigned char *p, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = 0;
    for (size_t i = 0; i < n && o + 5 < cap; ++i) {
        if (p[i] >= 0x20 && p[i] < 0x7F && p[i] != '\\')
            out[o++] = (char)p[i];
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", p[i]);
    }
    out[o < cap ? o : cap - 1] = 0;
}

gr_result_t gr_npy_header_size(const void *buf, size_t len, uint64_t *total, char *err, size_t errlen)
{
    const unsigned char *b = (const unsigned char *)buf;
    if (len == 0)
        return bad(err, errlen, "the file is empty (0 bytes)");
    size_t m = len < sizeof(npy_magic) ? len : sizeof(npy_magic);
    if (memcmp(b, npy_magic, m) != 0) {
        char shown[64];
        show_bytes(b, m, shown, sizeof(shown));
        return bad(err, errlen, "not a .npy file: bad magic '%s' (a .npy file starts with '\\x93NUMPY')", shown);
    }
    if (len < 8)
        return bad(err, errlen, "truncated .npy preamble: %zu bytes, need at least 10", len);
    int major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        return bad(err, errlen, "unsupported .npy format version %d.%d (supported: 1.0, 2.0, 3.0)", major, minor);
    size_t pre = major == 1 ? 10 : 12;
    if (len < pre)
        return bad(err, errlen, "truncated .npy preamble: %zu bytes, version %d.0 needs %zu", len, major, pre);
    uint64_t hlen = major == 1 ? (uint64_t)b[8] | (uint64_t)b[9] << 8
                               : (uint64_t)b[8] | (uint64_t)b[9] << 8 | (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
    if (hlen > GR_NPY_HEADER_MAX)
        return bad(err, errlen, "header length %llu is implausibly large (more than %llu bytes); the file is corrupt",
                   (unsigned long long)hlen, (unsigned long long)GR_NPY_HEADER_MAX);
    *total = (uint64_t)pre + hlen;
    return GR_SUCCESS;
}

/* ---- the dict ------------------------------------------------------------ */

typedef struct lexer {
    const char *s;
    size_t i, n;
} lexer_t;

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void skip_ws(lexer_t *x)
{
    while (x->i < x->n && is_ws(x->s[x->i]))
        x->i++;
}

static int peek(const lexer_t *x) { return x->i < x->n ? (unsigned char)x->s[x->i] : -1; }

/* A quoted string without escapes into out (cap bytes). 0 ok, -1 malformed, -2 too long. */
static int lex_string(lexer_t *x, char *out, size_t cap)
{
    int q = peek(x);
    if (q != '\'' && q != '"')
        return -1;
    x->i++;
    size_t o = 0;
    int too_long = 0;
    while (x->i < x->n && x->s[x->i] != (char)q) {
        char c = x->s[x->i];
        if (c == '\\' || c == '\n' || c == '\0')
            return -1;
        if (o + 1 < cap)
            out[o++] = c;
        else
            too_long = 1;
        x->i++;
    }
    if (x->i >= x->n)
        return -1;
    x->i++; /* closing quote */
    out[o] = 0;
    return too_long ? -2 : 0;
}

static int lex_word(lexer_t *x, const char *w)
{
    size_t k = strlen(w);
    if (x->n - x->i < k || memcmp(x->s + x->i, w, k) != 0)
        return 0;
    /* a whole word: not "Truex" */
    if (x->i + k < x->n) {
        char c = x->s[x->i + k];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
            return 0;
    }
    x->i += k;
    return 1;
}

/* A non-negative decimal integer, optional Python 2 'L'. 0 ok, -1 malformed, -2 overflow. */
static int lex_uint(lexer_t *x, uint64_t *v)
{
    int c = peek(x);
    if (c < '0' || c > '9')
        return -1;
    uint64_t r = 0;
    int over = 0;
    while ((c = peek(x)) >= '0' && c <= '9') {
        uint64_t d = (uint64_t)(c - '0');
        if (r > (UINT64_MAX - d) / 10)
            over = 1;
        else
            r = r * 10 + d;
        x->i++;
    }
    if (peek(x) == 'L')
        x->i++;
    *v = r;
    return over ? -2 : 0;
}

static gr_result_t parse_shape(lexer_t *x, gr_npy_header_t *h, char *err, size_t errlen)
{
    if (peek(x) != '(')
        return bad(err, errlen, "header 'shape' is not a tuple of integers");
    x->i++;
    h->ndim = 0;
    for (;;) {
        skip_ws(x);
        if (peek(x) == ')') {
            x->i++;
            return GR_SUCCESS;
        }
        if (h->ndim >= GR_NPY_MAXDIMS)
            return bad(err, errlen, "header 'shape' has more than %d dimensions", GR_NPY_MAXDIMS);
        uint64_t v = 0;
        int rc = lex_uint(x, &v);
        if (rc == -2)
            return bad(err, errlen, "header 'shape' dimension %d does not fit in 64 bits", h->ndim);
        if (rc != 0)
            return bad(err, errlen, "header 'shape' is not a tuple of non-negative integers");
        h->shape[h->ndim++] = v;
        skip_ws(x);
        if (peek(x) == ',') {
            x->i++;
            continue;
        }
        if (peek(x) == ')') {
            x->i++;
            /* Python: (5) is an int, not a tuple; numpy always writes (5,) */
            if (h->ndim == 1)
                return bad(err, errlen, "header 'shape' is '(N)' without the comma a 1-tuple needs");
            return GR_SUCCESS;
        }
        return bad(err, errlen, "header 'shape' is not a tuple of non-negative integers");
    }
}

static gr_result_t classify_descr(gr_npy_header_t *h, char *err, size_t errlen)
{
    const char *d = h->descr;
    if (!strcmp(d, "bfloat16")) {
        h->type = GR_NPY_BF16;
        h->itemsize = 2;
        return GR_SUCCESS;
    }
    char order = '=';
    const char *t = d;
    if (*t == '<' || *t == '>' || *t == '|' || *t == '=')
        order = *t++;
    static const struct {
        const char *code;
        gr_npy_type_t type;
        size_t size;
    } known[] = {{"f2", GR_NPY_F16, 2}, {"f4", GR_NPY_F32, 4}, {"f8", GR_NPY_F64, 8},
                 {"i4", GR_NPY_I32, 4}, {"i8", GR_NPY_I64, 8}, {"V2", GR_NPY_V2, 2}};
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); ++k) {
        if (strcmp(t, known[k].code) != 0)
            continue;
        if (order == '>' && known[k].type != GR_NPY_V2)
            return bad(err, errlen, "big-endian data (descr '%s') is not supported; convert it with numpy: "
                                    "np.save(path, a.astype('<%s'))", d, t);
        h->type = known[k].type;
        h->itemsize = known[k].size;
        return GR_SUCCESS;
    }
    if (*t == 'O')
        return bad(err, errlen, "object array (descr '%s'): the file holds pickled Python objects, not numbers", d);
    if (d[0] == 0)
        return bad(err, errlen, "header 'descr' is empty");
    return bad(err, errlen, "unsupported dtype '%s' (supported: <f2 <f4 <f8 <i4 <i8, and bfloat16 as 'bfloat16' "
                            "or '<V2' with --dtype bf16)", d);
}

/* The dict: exactly 'descr', 'fortran_order' and 'shape', then only padding. */
static gr_result_t parse_dict(lexer_t *x, gr_npy_header_t *h, int *fortran, int *closed, char *err, size_t errlen)
{
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    gr_result_t r;
    skip_ws(x);
    if (peek(x) != '{')
        return bad(err, errlen, "header is not a dict literal (it starts with neither '{' nor spaces)");
    x->i++;
    for (;;) {
        skip_ws(x);
        if (peek(x) == '}') {
            x->i++;
            *closed = 1;
            break;
        }
        char key[32];
        int rc = lex_string(x, key, sizeof(key));
        if (rc == -2)
            return bad(err, errlen, "header has an unexpected key (numpy writes only 'descr', 'fortran_order' and "
                                    "'shape')");
        if (rc != 0)
            return bad(err, errlen, "header dict is malformed or cut short (a key is not a quoted string); "
                                    "the header length may be wrong");
        skip_ws(x);
        if (peek(x) != ':')
            return bad(err, errlen, "header dict is malformed or cut short after key '%s'", key);
        x->i++;
        skip_ws(x);
        if (!strcmp(key, "descr")) {
            if (have_descr)
                return bad(err, errlen, "header has 'descr' twice");
            have_descr = 1;
            if (peek(x) == '[')
                return bad(err, errlen, "structured dtype (a list of fields in 'descr') is not supported: "
                                        "give a plain numeric array");
            rc = lex_string(x, h->descr, sizeof(h->descr));
            if (rc == -2)
                return bad(err, errlen, "unsupported dtype '%.31s...' (supported: <f2 <f4 <f8 <i4 <i8, bfloat16)",
                           h->descr);
            if (rc != 0)
                return bad(err, errlen, "header 'descr' is not a quoted string (or the header is cut short)");
        } else if (!strcmp(key, "fortran_order")) {
            if (have_fortran)
                return bad(err, errlen, "header has 'fortran_order' twice");
            have_fortran = 1;
            if (lex_word(x, "True"))
                *fortran = 1;
            else if (lex_word(x, "False"))
                *fortran = 0;
            else
                return bad(err, errlen, "header 'fortran_order' is neither True nor False");
        } else if (!strcmp(key, "shape")) {
            if (have_shape)
                return bad(err, errlen, "header has 'shape' twice");
            have_shape = 1;
            r = parse_shape(x, h, err, errlen);
            if (r != GR_SUCCESS)
                return r;
        } else {
            return bad(err, errlen, "header has an unexpected key '%s' (numpy writes only 'descr', "
                                    "'fortran_order' and 'shape')", key);
        }
        skip_ws(x);
        if (peek(x) == ',') {
            x->i++;
            continue;
        }
        if (peek(x) == '}') {
            x->i++;
            *closed = 1;
            break;
        }
        return bad(err, errlen, "header dict is malformed or cut short after '%s'; the header length may be wrong",
                   key);
    }
    /* numpy pads the dict with spaces and a final '\n'; anything else means
     * the length field claims bytes that belong to the data */
    for (; x->i < x->n; ++x->i)
        if (!is_ws(x->s[x->i]))
            return bad(err, errlen, "header length %zu is wrong: non-padding bytes follow the header dict at "
                                    "byte %zu of the header", x->n, x->i);
    if (!have_descr || !have_fortran || !have_shape)
        return bad(err, errlen, "header lacks '%s'", !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
    return GR_SUCCESS;
}

gr_result_t gr_npy_parse(const void *buf, size_t len, gr_npy_header_t *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof(*h));
    uint64_t total = 0;
    gr_result_t r = gr_npy_header_size(buf, len, &total, err, errlen);
    if (r != GR_SUCCESS)
        return r;
    const unsigned char *b = (const unsigned char *)buf;
    h->major = b[6];
    h->minor = b[7];
    size_t pre = h->major == 1 ? 10 : 12;
    if (total > len)
        return bad(err, errlen, "header length %llu runs past the end of the file (%zu bytes after the %zu-byte "
                                "preamble); the length field is wrong or the file is truncated",
                   (unsigned long long)(total - pre), len - pre, pre);
    h->data_offset = total;

    lexer_t x = {(const char *)b + pre, 0, (size_t)(total - pre)};
    int fortran = 0, closed = 0;
    r = parse_dict(&x, h, &fortran, &closed, err, errlen);
    if (r != GR_SUCCESS) {
        /* no '}' after where parsing stopped: the length ends inside the dict */
        if (!closed && !memchr(x.s + x.i, '}', x.n - x.i)) {
            char why[256];
            snprintf(why, sizeof(why), "%s", err ? err : "");
            return bad(err, errlen, "header length %llu is wrong: the header dict is cut short (%s)",
                       (unsigned long long)(total - pre), why);
        }
        return r;
    }
    /* numpy.lib.format: the header "is terminated by a newline (\n) and
     * padded with spaces"; a length that ends anywhere else is wrong */
    if (x.n == 0 || x.s[x.n - 1] != '\n')
        return bad(err, errlen, "header length %llu is wrong: the header does not end with '\\n' where the length "
                                "says", (unsigned long long)(total - pre));
    r = classify_descr(h, err, errlen);
    if (r != GR_SUCCESS)
        return r;
    if (fortran)
        return bad(err, errlen, "fortran_order is True (column-major data); only C order is supported: save "
                                "np.ascontiguousarray(a) instead");
    uint64_t count = 1;
    int zero = 0;
    for (int k = 0; k < h->ndim; ++k) {
        if (h->shape[k] == 0)
            zero = 1;
        else if (!zero && count > UINT64_MAX / h->shape[k])
            zero = -1;
        if (zero == 0)
            count *= h->shape[k];
    }
    if (zero == 1)
        count = 0;
    else if (zero == -1)
        return bad(err, errlen, "shape's element count overflows 64 bits; the header is corrupt");
    if (count > UINT64_MAX / h->itemsize)
        return bad(err, errlen, "shape's size in bytes (%llu elements of %zu bytes) overflows 64 bits; the header "
                                "is corrupt", (unsigned long long)count, h->itemsize);
    h->count = count;
    h->data_bytes = count * (uint64_t)h->itemsize;
    return GR_SUCCESS;
}

const char *gr_npy_type_name(gr_npy_type_t t)
{
    switch (t) {
    case GR_NPY_F16:
        return "f16";
    case GR_NPY_BF16:
        return "bf16";
    case GR_NPY_F32:
        return "f32";
    case GR_NPY_F64:
        return "f64";
    case GR_NPY_I32:
        return "i32";
    case GR_NPY_I64:
        return "i64";
    case GR_NPY_V2:
        return "v2";
    }
    return "?";
}

int gr_npy_type_to_dtype(gr_npy_type_t t)
{
    switch (t) {
    case GR_NPY_F32:
        return GR_F32;
    case GR_NPY_F64:
        return GR_F64;
    case GR_NPY_I32:
        return GR_I32;
    case GR_NPY_I64:
        return GR_I64;
    case GR_NPY_F16:
        return GR_F16;
    case GR_NPY_BF16:
        return GR_BF16;
    default:
        return -1;
    }
}

const char *gr_npy_descr_of(gr_dtype_t t)
{
    switch (t) {
    case GR_F32:
        return "<f4";
    case GR_F64:
        return "<f8";
    case GR_I32:
        return "<i4";
    case GR_I64:
        return "<i8";
    case GR_F16:
        return "<f2";
    case GR_BF16:
        return "bfloat16"; /* ml_dtypes' name; see gr_npy.h */
    }
    return NULL;
}

size_t gr_npy_format_header(char *buf, size_t cap, const char *descr, const uint64_t *shape, int ndim)
{
    if (!buf || !descr || strlen(descr) > 16 || ndim < 0 || ndim > GR_NPY_MAXDIMS || (ndim > 0 && !shape))
        return 0;
    /* What numpy.lib.format writes (numpy >= 1.24): the keys sorted, repr()
     * of each value, ", " after each, then spaces so the first axis can grow
     * to 21 digits in place, then padding to a multiple of 64 bytes (1..64
     * spaces) and '\n'. */
    char dict[128 + 24 * GR_NPY_MAXDIMS];
    size_t o = (size_t)snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int k = 0; k < ndim; ++k)
        o += (size_t)snprintf(dict + o, sizeof(dict) - o, k + 1 < ndim ? "%llu, " : ndim == 1 ? "%llu," : "%llu",
                              (unsigned long long)shape[k]);
    o += (size_t)snprintf(dict + o, sizeof(dict) - o, "), }");
    if (ndim > 0) {
        char first[24];
        int digits = snprintf(first, sizeof(first), "%llu", (unsigned long long)shape[0]);
        for (int k = digits; k < 21; ++k)
            dict[o++] = ' ';
        dict[o] = 0;
    }
    size_t pre = 10;
    size_t hlen = o + 1; /* the dict and '\n' */
    size_t pad = 64 - (pre + hlen) % 64;
    if (hlen + pad > 65535) {
        pre = 12;
        pad = 64 - (pre + hlen) % 64;
    }
    size_t total = pre + hlen + pad;
    if (total > cap)
        return 0;
    size_t field = hlen + pad;
    memcpy(buf, npy_magic, sizeof(npy_magic));
    buf[6] = pre == 10 ? 1 : 2;
    buf[7] = 0;
    buf[8] = (char)(field & 0xFF);
    buf[9] = (char)((field >> 8) & 0xFF);
    if (pre == 12) {
        buf[10] = (char)((field >> 16) & 0xFF);
        buf[11] = (char)((field >> 24) & 0xFF);
    }
    memcpy(buf + pre, dict, o);
    memset(buf + pre + o, ' ', pad);
    buf[total - 1] = '\n';
    return total;
}
