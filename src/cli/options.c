/* options.c - the one option table of gpureduce. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

typedef int (*opt_setter)(cli_opts_t *o, const char *arg, char *err, size_t len);

typedef struct cli_option {
    const char *name;  /* without the leading "--" */
    const char *arg;   /* metavariable, NULL for a flag */
    const char *help;
    opt_setter set;
} cli_option_t;

#define ERR(...)                               \
    do {                                       \
        snprintf(err, len, __VA_ARGS__);       \
        return CLI_EXIT_USAGE;                 \
    } while (0)

static int lookup(const char *arg, const char *const *names, int count)
{
    for (int i = 0; i < count; ++i)
        if (!strcmp(arg, names[i]))
            return i;
    return -1;
}

static int set_n(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (gr_parse_size(a, &o->n) != GR_SUCCESS)
        ERR("--n: cannot parse size '%s' (use e.g. 1000000, 2^30, 16M, 4G)", a);
    o->have_n = 1;
    return 0;
}

static int set_per_rank(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (gr_parse_size(a, &o->per_rank) != GR_SUCCESS)
        ERR("--per-rank: cannot parse size '%s' (use e.g. 1000000, 2^30, 16M, 4G)", a);
    o->have_per_rank = 1;
    return 0;
}

static int set_scale(cli_opts_t *o, int kind, const char *a, char *err, size_t len)
{
    const char *name = kind == CLI_SCALE_WEAK ? "--weak" : "--strong";
    if (o->scale_kind && o->scale_kind != kind)
        ERR("--weak and --strong exclude each other: run one study per launch");
    if (gr_parse_size(a, &o->scale_size) != GR_SUCCESS || o->scale_size == 0)
        ERR("%s: cannot parse size '%s' (use e.g. 1000000, 2^30, 16M, 4G; not 0)", name, a);
    o->scale_kind = kind;
    return 0;
}

static int set_weak(cli_opts_t *o, const char *a, char *err, size_t len)
{
    return set_scale(o, CLI_SCALE_WEAK, a, err, len);
}

static int set_strong(cli_opts_t *o, const char *a, char *err, size_t len)
{
    return set_scale(o, CLI_SCALE_STRONG, a, err, len);
}

static int set_dtype(cli_opts_t *o, const char *a, char *err, size_t len)
{
    static const char *const names[GR_DTYPE_COUNT] = {"f32", "f64", "i32", "i64", "f16", "bf16"};
    int i = lookup(a, names, GR_DTYPE_COUNT);
    if (i < 0)
        ERR("--dtype: unknown type '%s' (use f32, f64, i32, i64, f16 or bf16)", a);
    o->desc.dtype = (gr_dtype_t)i;
    return 0;
}

static int set_op(cli_opts_t *o, const char *a, char *err, size_t len)
{
    static const char *const names[] = {"sum", "min", "max", "abssum", "sumsq"};
    int i = lookup(a, names, 5);
    if (i >= 0) {
        o->desc.op.kind = (gr_op_kind_t)i;
        o->desc.op.power = i == GR_OP_SUMSQ ? 2 : 1;
        return 0;
    }
    if (!strncmp(a, "powsum:", 7)) {
        const char *p = a + 7;
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (!*p || *end || v < 1 || v > 8)
            ERR("--op: '%s': powsum needs an integer power in 1..8, e.g. powsum:3", a);
        o->desc.op.kind = GR_OP_POWSUM;
        o->desc.op.power = (int)v;
        return 0;
    }
    static const char *const vec[] = {"dot", "nrm2", "argmin", "argmax"};
    i = lookup(a, vec, 4);
    if (i >= 0) {
        o->desc.op.kind = (gr_op_kind_t)(GR_OP_DOT + i);
        o->desc.op.power = 1;
        o->stats = 0;
        return 0;
    }
    if (!strcmp(a, "stats")) {
        o->stats = 1; /* a pass of its own (input.c, stats_run.c); the descriptor keeps sum */
        o->desc.op.kind = GR_OP_SUM;
        o->desc.op.power = 1;
        return 0;
    }
    ERR("--op: unknown op '%s' (use sum, min, max, abssum, sumsq, powsum:P with P in 1..8, stats, dot, nrm2, argmin or argmax)", a);
}

static int set_gen(cli_opts_t *o, const char *a, char *err, size_t len)
{
    static const char *const names[] = {"ones", "iota", "uniform", "normal", "randint", "stress"};
    int i = lookup(a, names, 6);
    if (i < 0)
        ERR("--gen: unknown generator '%s' (use ones, iota, uniform, normal, randint or stress)", a);
    o->gen = (gr_gen_t)i;
    return 0;
}

/* A decimal integer in 0..2^64-1: digits only (no sign, no 0x, no octal 0 prefix), no overflow. */
static int parse_u64(const char *a, uint64_t *v)
{
    if (!a || !*a)
        return -1;
    uint64_t x = 0;
    for (const char *p = a; *p; ++p) {
        if (*p < '0' || *p > '9')
            return -1;
        const uint64_t d = (uint64_t)(*p - '0');
        if (x > (UINT64_MAX - d) / 10u)
            return -1;
        x = x * 10u + d;
    }
    *v = x;
    return 0;
}

static int set_seed(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (parse_u64(a, &o->seed))
        ERR("--seed: '%s' is not a decimal integer in 0..18446744073709551615", a);
    return 0;
}

static int set_backend(cli_opts_t *o, const char *a, char *err, size_t len)
{
    static const char *const names[] = {"auto", "cuda", "cpu"};
    int i = lookup(a, names, 3);
    if (i < 0)
        ERR("--backend: unknown backend '%s' (use auto, cuda or cpu)", a);
    o->cfg.backend = (gr_backend_t)i;
    return 0;
}

static int set_mode(cli_opts_t *o, const char *a, char *err, size_t len)
{
    static const char *const names[] = {"fast", "exact"};
    int i = lookup(a, names, 2);
    if (i < 0)
        ERR("--mode: unknown mode '%s' (use fast or exact)", a);
    o->desc.mode = (gr_mode_t)i;
    return 0;
}

static int set_repeat(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (cli_parse_int(a, 1, 1000000, &o->repeat))
        ERR("--repeat: '%s' is not an integer in 1..1000000", a);
    return 0;
}

static int set_warmup(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (cli_parse_int(a, 0, 1000000, &o->warmup))
        ERR("--warmup: '%s' is not an integer in 0..1000000", a);
    return 0;
}

static int set_output(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (!*a)
        ERR("--output: the path is empty");
    o->output = a;
    return 0;
}

static int set_format(cli_opts_t *o, const char *a, char *err, size_t len)
{
    static const char *const names[] = {"table", "csv", "json"};
    int i = lookup(a, names, 3);
    if (i < 0)
        ERR("--format: unknown format '%s' (use table, csv or json)", a);
    o->format = (cli_format_t)i;
    return 0;
}

static int set_bind(cli_opts_t *o, const char *a, char *err, size_t len)
{
    static const char *const names[] = {"gpu", "launcher", "none"};
    int i = lookup(a, names, 3);
    if (i < 0)
        ERR("--bind: unknown policy '%s' (use gpu, launcher or none)", a);
    o->cfg.bind = (gr_bind_policy_t)i;
    return 0;
}

static int set_threads(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (cli_parse_int(a, 1, 256, &o->cfg.cpu_threads))
        ERR("--threads: '%s' is not an integer in 1..256", a);
    return 0;
}

static int set_root(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (cli_parse_int(a, 0, 1 << 30, &o->desc.root))
        ERR("--root: '%s' is not a rank number", a);
    return 0;
}

static int set_cuda_grid(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (cli_parse_int(a, 1, 1 << 20, &o->cfg.cuda_grid))
        ERR("--cuda-grid: '%s' is not a block count in 1..1048576 (exact mode: at most 16384, --op stats 4096)", a);
    return 0;
}

static int set_cuda_block(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (cli_parse_int(a, 128, 1024, &o->cfg.cuda_block) || (o->cfg.cuda_block & (o->cfg.cuda_block - 1)))
        ERR("--cuda-block: '%s' is not a built block size: 128, 256, 512 or 1024", a);
    return 0;
}

static int set_input(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (!*a)
        ERR("--input: the path is empty");
    if (o->input2)
        ERR("--input is given a third time: --op dot reads two files, every other op one");
    if (o->input)
        o->input2 = a; /* dot: x, then y */
    else
        o->input = a;
    return 0;
}

static int set_offset(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (gr_parse_size(a, &o->offset) != GR_SUCCESS)
        ERR("--offset: '%s' is not a byte count (a decimal integer, 2^k, or with K, M, G or T: 4096, 4K)", a);
    return 0;
}

static int set_chunk(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (gr_parse_size(a, &o->chunk) != GR_SUCCESS || o->chunk == 0 || o->chunk > GR_FILE_CHUNK_MAX)
        ERR("--chunk: '%s' is not a byte count in 1..1G (use e.g. 4M, 64M, 1G)", a);
    return 0;
}

static int set_out(cli_opts_t *o, const char *a, char *err, size_t len)
{
    if (!*a)
        ERR("--out: the path is empty");
    o->out = a;
    return 0;
}

#define FLAG_SETTER(fn, field)                                              \
    static int fn(cli_opts_t *o, const char *a, char *err, size_t len)      \
    {                                                                       \
        (void)a;                                                            \
        (void)err;                                                          \
        (void)len;                                                          \
        field = 1;                                                          \
        return 0;                                                           \
    }
FLAG_SETTER(set_verify, o->verify)
FLAG_SETTER(set_help, o->help)
FLAG_SETTER(set_version, o->version)
FLAG_SETTER(set_topo, o->topo)
FLAG_SETTER(set_share, o->cfg.share_gpus)
FLAG_SETTER(set_all_ranks, o->desc.all_ranks)
FLAG_SETTER(set_force, o->force)
FLAG_SETTER(set_quiet, o->quiet)

static const cli_option_t options[] = {
    {"n", "SIZE", "global element count (default 2^24); SIZE: 1000, 2^30, 16M, 4G (K M G T = 2^10..2^40)", set_n},
    {"per-rank", "SIZE", "element count per rank (weak scaling); N = SIZE x np", set_per_rank},
    {"dtype", "T", "f32 | f64 | i32 | i64 | f16 | bf16 (default f32)", set_dtype},
    {"op", "OP", "sum | min | max | abssum | sumsq | powsum:P, P in 1..8 | stats | dot | nrm2 | argmin | argmax "
           "(default sum; dot: y from --seed + 1, or a second --input)", set_op},
    {"gen", "G", "ones | iota | uniform | normal | randint | stress (default uniform)", set_gen},
    {"seed", "S", "generator seed (default 1)", set_seed},
    {"mode", "M", "fast | exact (default fast); see docs/NUMERICS.md", set_mode},
    {"backend", "B", "auto | cuda | cpu (default auto: cuda when a GPU is visible)", set_backend},
    {"repeat", "R", "timed runs (default 10)", set_repeat},
    {"warmup", "W", "untimed runs first (default 2)", set_warmup},
    {"format", "F", "table | csv | json (default table)", set_format},
    {"verify", NULL, "check against an exact CPU reference; fail where the answer must be exact", set_verify},
    {"root", "R", "rank that receives the result (default 0)", set_root},
    {"all-ranks", NULL, "every rank receives the result (MPI_Allreduce)", set_all_ranks},
    {"topo", NULL, "print every rank's placement (GPU, cores, NUMA) and exit", set_topo},
    {"bind", "P", "gpu | launcher | none (default gpu): bind cores+memory near the GPU", set_bind},
    {"share-gpus", NULL, "allow more ranks on a node than GPUs", set_share},
    {"threads", "N", "cpu backend threads (default: cores this rank may use)", set_threads},
    {"cuda-grid", "G", "debug: force the reduce kernel's grid size (1..1048576 blocks)", set_cuda_grid},
    {"cuda-block", "B", "debug: force the reduce kernel's block size (128, 256, 512, 1024)", set_cuda_block},
    {"weak", "SIZE", "scale: weak study, SIZE elements per rank on 1, 2, 4, ..., np ranks", set_weak},
    {"strong", "SIZE", "scale: strong study, SIZE elements in total on 1, 2, 4, ..., np ranks", set_strong},
    {"input", "PATH", "reduce the values of a .npy file, or a raw file with --dtype (see docs/INPUT.md); "
              "--op dot: give it twice, x then y",
     set_input},
    {"offset", "BYTES", "raw --input: bytes to skip before the first element (default 0)", set_offset},
    {"chunk", "SIZE", "--input / gen: bytes per read or write per rank (default 64M, at most 1G)", set_chunk},
    {"out", "PATH", "gen: the .npy file to write", set_out},
    {"output", "PATH", "write the results (table, csv or json) to PATH instead of stdout; checked, atomic", set_output},
    {"force", NULL, "gen: overwrite --out if it exists", set_force},
    {"quiet", NULL, "no progress lines on stderr (also GR_PROGRESS=off; see docs/CLI.md)", set_quiet},
    {"help", NULL, "this text", set_help},
    {"version", NULL, "print the version", set_version},
};
#define NOPTIONS ((int)(sizeof(options) / sizeof(options[0])))
_Static_assert(sizeof(options) / sizeof(options[0]) <= 64, "cli_opts_t.given has one bit per option");

void cli_usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np N gpureduce [options]\n"
               "       mpirun -np N gpureduce scale --weak SIZE | --strong SIZE [options]\n"
               "       mpirun -np N gpureduce --input PATH [--dtype T] [--offset BYTES] [--chunk SIZE] [options]\n"
               "       mpirun -np N gpureduce gen --out PATH --n SIZE|--per-rank SIZE [--gen G] [--dtype T]\n"
               "                                  [--seed S] [--chunk SIZE] [--force]\n"
               "       mpirun -np N gpureduce bench [bench options]   (gpureduce bench --help lists them)\n"
               "       gpureduce --help-env   (the environment variables it reads)\n\n"
               "Reduce a synthetic dataset spread over N ranks, one GPU per rank. 'scale' runs the\n"
               "same reduction on 1, 2, 4, ..., N ranks of one launch (weak or strong scaling).\n\noptions:\n");
    for (int i = 0; i < NOPTIONS; ++i) {
        char lhs[64];
        snprintf(lhs, sizeof(lhs), "--%s%s%s", options[i].name, options[i].arg ? " " : "",
                 options[i].arg ? options[i].arg : "");
        fprintf(f, "  %-20s %s\n", lhs, options[i].help);
    }
    fprintf(f, "\nexample: mpirun -np 2 gpureduce --n 2^28 --dtype f64 --op sum --verify\n");
}

int cli_parse(int argc, char **argv, cli_opts_t *o, char *err, size_t len)
{
    memset(o, 0, sizeof(*o));
    o->cmd = "reduce";
    gr_desc_init(&o->desc);
    gr_config_init(&o->cfg);
    o->cfg.bind = GR_BIND_GPU; /* the command owns its process: bind near the GPU unless told not to */
    o->n = (uint64_t)1 << 24;
    o->gen = GR_GEN_UNIFORM;
    o->seed = 1;
    o->repeat = 10;
    o->warmup = 2;
    int first = 1;
    if (argc > 1 && !strcmp(argv[1], "scale")) {
        o->cmd = "scale";
        first = 2;
    }
    if (argc > 1 && !strcmp(argv[1], "gen")) {
        o->cmd = "gen";
        first = 2;
    }
    for (int i = first; i < argc; ++i) {
        int k = 0;
        const char *val = NULL;
        if (cli_next_option(argc, argv, &i, options, sizeof(options[0]), NOPTIONS, "", &k, &val, err, len))
            return CLI_EXIT_USAGE;
        if (options[k].set(o, val, err, len))
            return CLI_EXIT_USAGE;
        o->given |= (uint64_t)1 << k;
    }
    if (o->have_n && o->have_per_rank)
        ERR("--n and --per-rank exclude each other: give the global count or the count per rank");
    if (o->scale_kind && strcmp(o->cmd, "scale") != 0)
        ERR("--weak and --strong belong to the scale command: gpureduce scale --weak SIZE | --strong SIZE");
    if ((cli_given(o, "offset") || cli_given(o, "chunk")) && !o->input && strcmp(o->cmd, "gen") != 0)
        ERR("--offset and --chunk belong to --input PATH (and --chunk to gen)");
    if ((o->out || o->force) && strcmp(o->cmd, "gen") != 0)
        ERR("--out and --force belong to the gen command: gpureduce gen --out PATH --n SIZE ...");
    return 0;
}

int cli_given(const cli_opts_t *o, const char *name)
{
    for (int k = 0; k < NOPTIONS; ++k)
        if (!strcmp(options[k].name, name))
            return (int)((o->given >> k) & 1u);
    return 0;
}
