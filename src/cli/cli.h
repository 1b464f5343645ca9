/* cli.h - the gpureduce command line: one option table, one report module. */
#ifndef GR_CLI_H
#define GR_CLI_H

#include "gpureduce.h"
#include "progress.h"

#include <stdio.h>

typedef enum cli_format { CLI_FMT_TABLE = 0, CLI_FMT_CSV = 1, CLI_FMT_JSON = 2 } cli_format_t;

/* Exit statuses: 0 ok, 1 runtime failure or failed --verify, 2 usage error. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

typedef struct cli_opts {
    const char *cmd;       /* "reduce" (default) or "scale" (argv[1]) */
    uint64_t n;
    int have_n;
    uint64_t per_rank;
    int have_per_rank;
    gr_desc_t desc;
    gr_gen_t gen;
    uint64_t seed;
    gr_config_t cfg;
    int repeat, warmup;
    cli_format_t format;
    int verify, help, version, topo;
    int scale_kind;        /* scale: CLI_SCALE_WEAK or CLI_SCALE_STRONG, 0 unset */
    uint64_t scale_size;   /* scale: elements per rank (weak) or in total (strong) */
    const char *input;     /* --input PATH: reduce a .npy or raw file (input.c) */
    const char *input2;    /* --input given a second time: y of --op dot (vec_run.c) */
    uint64_t offset;       /* --offset BYTES: raw files */
    uint64_t chunk;        /* --chunk SIZE: bytes per read/write per rank, 0 = default */
    const char *out;       /* gen: --out PATH */
    int force;             /* gen: overwrite --out */
    uint64_t given;        /* bit k: option k of the table was given (see cli_given) */
    int stats;             /* --op stats (input.c) */
    int quiet;             /* --quiet: no progress on stderr (progress.h) */
    const char *output;    /* --output PATH: results go to this file (rank 0), not stdout */
} cli_opts_t;

enum { CLI_SCALE_WEAK = 1, CLI_SCALE_STRONG = 2 };

/* --output PATH: collective; rank 0 sends stdout to a temporary file beside
 * PATH (0, or -1 after a one-line error on every rank, MPI finalized).
 * cli_output_finish(status), after MPI_Finalize: flushes, syncs and closes
 * stdout, checking each step, and renames the temporary file to PATH; on any
 * failure it says so on stderr, removes the temporary file and returns
 * CLI_EXIT_FAIL, else status. Without --output it still checks that stdout
 * took every byte (a full disk under `> file`). */
int cli_output_begin(const char *path);
int cli_output_finish(int status);
void cli_output_discard(void);

/* How a reduce run ends: rank 0's verdict to every rank, one line when it is a
 * failure (--verify, or repeats that differ), MPI_Finalize; the exit status. */
int cli_end_run(int verify_fail, int repeatable);

/* A runtime failure: one line on this rank, then MPI_Abort (exit status 1). */
void cli_die(const char *cmd, gr_result_t r, const char *what);
/* A usage error: rank 0 says why with a hint; returns CLI_EXIT_USAGE after MPI_Finalize. */
int cli_usage_error(const char *cmd, const char *msg);

/* At least min_runs untimed reductions, and at least 0.25 s of them on GPUs
 * (clocks settle); collective over comm, which must be ctx's communicator.
 * report: a progress phase of its own (progress.h); 0 inside a sweep. */
void cli_warmup(const char *cmd, gr_ctx_t ctx, MPI_Comm comm, gr_buffer_t buf, const gr_desc_t *d, int min_runs,
                int report);

/* The one argv walker: match argv[*i] ("--name", "--name=value", "--name
 * value", "-h") against a table whose entries start with {name, arg}
 * (stride bytes apart); sets *which and *val (NULL for flags) and advances *i
 * past a separate value. CLI_EXIT_USAGE with a message in err otherwise. */
int cli_next_option(int argc, char **argv, int *i, const void *table, size_t stride, int n, const char *prefix,
                    int *which, const char **val, char *err, size_t len);

/* Integer option value in [lo, hi]: 0, or -1 when a is not one. */
int cli_parse_int(const char *a, int lo, int hi, int *v);
/* The result and its repeat flag live on the root; rank 0 prints: move them there. */
void cli_root_to_rank0(int root, void *result, size_t bytes, int *repeatable);

/* A synthetic dataset's element count (--n, or --per-rank x np) into *n, once
 * the generator suits the dtype: 0, or the usage error's status. */
int cli_synthetic_count(const cli_opts_t *o, int np, uint64_t *n);

/* Parse argv into o. Returns 0, or CLI_EXIT_USAGE with a message in err. */
int cli_parse(int argc, char **argv, cli_opts_t *o, char *err, size_t errlen);
void cli_usage(FILE *f);
/* Non-zero when option `name` (without "--") was on the command line. */
int cli_given(const cli_opts_t *o, const char *name);

/* ---- vec_run.c ---- */

/* `gpureduce --op dot|nrm2|argmin|argmax`, synthetic or --input (twice for dot). */
int cli_vec_run(cli_opts_t *o);

/* ---- input.c ---- */

/* `gpureduce --input PATH`: reduce a file's values; `gpureduce gen`: write a
 * synthetic dataset as .npy. Called after MPI_Init; call MPI_Finalize;
 * return the exit status. */
int cli_input_run(cli_opts_t *o);
int cli_gen_run(cli_opts_t *o);

/* What --op stats reports, for --input files and for synthetic data. */
typedef struct cli_stats_report {
    int np, repeat, repeatable;
    const char *input, *shape;       /* --input: the file; input NULL for synthetic data */
    const char *storage;             /* --input: storage name when not native, else NULL */
    const char *storage_json;        /* --input: storage name */
    uint64_t n, seed;                /* synthetic data */
    gr_gen_t gen;
    const char *dtype, *backend;
    const char *t1_name;             /* "read" (--input) or "local" */
    double t1, total;                /* seconds, medians of the slowest rank */
    double bytes;                    /* bytes of input, all ranks */
    gr_stats_t st;
} cli_stats_report_t;
/* Collective over MPI_COMM_WORLD (the placement is gathered): every rank calls it,
 * rank 0 with the report (r is not read elsewhere) and prints. */
void cli_print_stats(FILE *out, cli_format_t fmt, const cli_stats_report_t *r, gr_ctx_t ctx);
/* Every field of two results, bit for bit. */
int cli_same_stats(const gr_stats_t *a, const gr_stats_t *b);
/* After R timed --op stats runs (vals and the two per-run times t1, t2 of
 * this rank): the slowest rank's times per run into m1, m2 at rank 0, and the
 * root's result and whether its R results were the same bits, moved to rank 0. */
void cli_stats_gather(int root, int rank, int R, const gr_stats_t *vals, double *t1, double *t2, double *m1,
                      double *m2, gr_stats_t *st, int *repeatable);

/* ---- stats_run.c ---- */

/* `gpureduce --op stats` on synthetic data (--gen/--n, any backend). Calls
 * MPI_Finalize; returns the exit status. */
int cli_stats_run(cli_opts_t *o);

/* ---- scale.c ---- */

/* `gpureduce scale`: the sweep over sub-communicators of 1, 2, 4, ..., np
 * ranks. Called after MPI_Init; calls MPI_Finalize; returns the exit status. */
int cli_scale_run(cli_opts_t *o);

/* ---- bench/bench.c (the gpureduce-bench program) ---- */

/* gpureduce-bench's main after MPI_Init (argv[0] is the program): sweeps,
 * checks and times the benchmark rows. Calls MPI_Finalize; returns the exit
 * status. */
int cli_bench_main(int argc, char **argv);

/* ---- report.c ---- */

/* Streams every rank's placement to rank 0, which prints it; collective.
 * JSON: prints `"placement": [ ... ]` (no trailing comma). */
void report_placements(gr_ctx_t ctx, MPI_Comm comm, cli_format_t fmt, FILE *f);
void json_string(FILE *f, const char *s);
void csv_string(FILE *f, const char *s);
/* median/min/max of v[0..n) (v is reordered). */
void stats3(double *v, int n, double *med, double *min, double *max);
/* The table's "repeatable" line: the verdict of R runs, or "1 run" plainly
 * (one run proves nothing about repeatability). */
void cli_print_repeatable(FILE *f, int repeatable, int R);
/* JSON "repeatable": true, false, or null for a single run. */
const char *cli_repeatable_json(int repeatable, int R);
/* The progress phase of generating n synthetic elements (progress.h). */
void cli_progress_generating(uint64_t n, gr_dtype_t t, gr_gen_t g);
/* Value as decimal and exact hex text. */
void value_text(const gr_value_t *v, char *dec, size_t dlen, char *hex, size_t hlen);

#endif /* GR_CLI_H */
