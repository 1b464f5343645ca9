/*
 * progress.h - what long work is doing, on stderr, from rank 0 only
 * (docs/CLI.md "Progress and --quiet").
 *
 * One phase at a time (generation, warm-up, timed runs, a file read, a
 * sweep). On a terminal its line is redrawn in place (at most 5 times a
 * second) once the phase has run GR_PROGRESS_AFTER seconds (default 0.5) and
 * ends with a newline. Elsewhere (a pipe, a batch log) a phase stays silent
 * unless it lasts longer (default 5 s), then prints one plain line every 10 s
 * and one when it ends. Never stdout, never CSV or JSON. --quiet or
 * GR_PROGRESS=off turn it off. A helper thread draws, so a single long call
 * still shows its elapsed time; it never calls MPI.
 */
#ifndef GR_CLI_PROGRESS_H
#define GR_CLI_PROGRESS_H

#include "gpureduce.h"

#include <stdint.h>

typedef enum cli_prog_kind {
    CLI_PROG_TIME = 0,  /* elapsed time only */
    CLI_PROG_RUNS = 1,  /* identical runs: "run i of n", with an ETA */
    CLI_PROG_STEPS = 2, /* a sweep's steps, unlike in cost: "row i of n", no ETA */
    CLI_PROG_BYTES = 3  /* bytes of a total: GB, %, GB/s and ETA */
} cli_prog_kind_t;

/* Once, after MPI_Init and the options: on for rank 0 of MPI_COMM_WORLD
 * unless quiet (--quiet) or GR_PROGRESS=off. */
void cli_progress_init(int quiet);
/* Non-zero when this process shows progress. */
int cli_progress_on(void);

/* A new phase (ends the one before): label, what is counted, and the total
 * (runs, steps or bytes; 0: unknown). unit names a step ("row", "step"); NULL
 * for "run". */
void cli_progress_begin(const char *label, cli_prog_kind_t kind, uint64_t total, const char *unit);
/* Runs or steps completed, or bytes done. */
void cli_progress_set(uint64_t done);
/* What the current step is, shown after its count (printf format). */
void cli_progress_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The phase is over: its final line, when it was shown or lasted past the threshold. */
void cli_progress_end(void);

/* Around output to stdout while a phase runs: take the line off the terminal
 * and draw nothing until resume. */
void cli_progress_pause(void);
void cli_progress_resume(void);
/* Before an error message on stderr: end a line left open on the terminal. */
void cli_progress_break_line(void);

/* cfg->progress = the library's reports feed the current CLI_PROG_BYTES
 * phase (done / total of rank 0's shard, times the phase's total); nothing
 * when progress is off. */
void cli_progress_attach(gr_config_t *cfg);

#endif /* GR_CLI_PROGRESS_H */
