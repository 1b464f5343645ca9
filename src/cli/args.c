/* args.c - the argv walker and number parsing shared by gpureduce and
 * gpureduce-bench (linked into both through gr_cliutil). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define ERR(...)                               \
    do {                                       \
        snprintf(err, len, __VA_ARGS__);       \
        return CLI_EXIT_USAGE;                 \
    } while (0)

int cli_parse_int(const char *a, int lo, int hi, int *v)
{
    if (!a || !*a)
        return -1;
    char *end = NULL;
    long x = strtol(a, &end, 10);
    if (*end || x < lo || x > hi)
        return -1;
    *v = (int)x;
    return 0;
}

/* Entries of every option table start with these two fields. */
typedef struct cli_optname {
    const char *name;
    const char *arg;
} cli_optname_t;

int cli_next_option(int argc, char **argv, int *i, const void *table, size_t stride, int n, const char *prefix,
                    int *which, const char **val, char *err, size_t len)
{
    const char *a = argv[*i];
    if (!strcmp(a, "-h"))
        a = "--help";
    if (strncmp(a, "--", 2) != 0)
        ERR("%sunexpected argument '%s'", prefix, a);
    const char *name = a + 2;
    const char *eq = strchr(name, '=');
    size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
    const cli_optname_t *opt = NULL;
    for (int k = 0; k < n; ++k) {
        const cli_optname_t *e = (const cli_optname_t *)(const void *)((const char *)table + (size_t)k * stride);
        if (strlen(e->name) == nlen && !strncmp(e->name, name, nlen)) {
            opt = e;
            *which = k;
        }
    }
    if (!opt)
        ERR("%sunknown option '%.*s'", prefix, (int)(nlen + 2), a);
    *val = NULL;
    if (opt->arg) {
        if (eq)
            *val = eq + 1;
        else if (*i + 1 < argc)
            *val = argv[++*i];
        else
            ERR("--%s needs a value (%s)", opt->name, opt->arg);
    } else if (eq) {
        ERR("--%s takes no value", opt->name);
    }
    return 0;
}
