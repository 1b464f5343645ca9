/* report.c - placement table, statistics and value text for the CLI. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* A CSV field (RFC 4180): in double quotes, a quote inside doubled. */
void csv_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void value_text(const gr_value_t *v, char *dec, size_t dlen, char *hex, size_t hlen)
{
    if (v->is_integer && !v->overflow) {
        snprintf(dec, dlen, "%lld", (long long)v->i);
        if (v->i < 0)
            snprintf(hex, hlen, "-0x%llx", (unsigned long long)(0 - (uint64_t)v->i));
        else
            snprintf(hex, hlen, "0x%llx", (unsigned long long)v->i);
        return;
    }
    snprintf(dec, dlen, "%.17g", v->f);
    /* f16/bf16 input and a value of that type (exact mode, min, max): its bits after the %a
     * form, "0x1p+0 (f16 0x3c00)", so the first word still parses as a float */
    uint16_t bits = 0;
    if (gr_value_half_bits(v, &bits)) {
        snprintf(hex, hlen, "%a (%s 0x%04x)", v->f, v->dtype == GR_BF16 ? "bf16" : "f16", (unsigned)bits);
        return;
    }
    snprintf(hex, hlen, "%a", v->f);
}

void cli_print_repeatable(FILE *f, int repeatable, int R)
{
    if (R < 2)
        fprintf(f, "%-12s not checked: 1 run (--repeat 2 or more compares runs bit for bit)\n", "repeatable");
    else
        fprintf(f, "%-12s %s (%d runs)\n", "repeatable", repeatable ? "yes, same bits every run" : "NO", R);
}

const char *cli_repeatable_json(int repeatable, int R)
{
    return R < 2 ? "null" : repeatable ? "true" : "false";
}

void cli_progress_generating(uint64_t n, gr_dtype_t t, gr_gen_t g)
{
    char what[96];
    snprintf(what, sizeof(what), "generating %llu %s elements (%s)", (unsigned long long)n, gr_dtype_name(t),
             gr_gen_name(g));
    cli_progress_begin(what, CLI_PROG_BYTES, n * (uint64_t)gr_dtype_size(t), NULL);
}

static void print_placement_row(const gr_placement_t *p, cli_format_t fmt, FILE *f, int first)
{
    if (fmt == CLI_FMT_JSON) {
        fprintf(f, "%s\n    {\"rank\": %d, \"host\": ", first ? "" : ",", p->rank);
        json_string(f, p->host);
        fprintf(f, ", \"pid\": %d, \"local_rank\": %d, \"gpu\": %d, \"gpu_name\": ", p->pid, p->local_rank, p->gpu);
        json_string(f, p->gpu_name);
        fprintf(f, ", \"pci_bus_id\": ");
        json_string(f, p->pci_bus_id);
        fprintf(f, ", \"cpuset\": ");
        json_string(f, p->cpuset);
        fprintf(f, ", \"numa\": %d, \"bound\": ", p->numa);
        json_string(f, p->bound);
        fprintf(f, ", \"gpu_choice\": ");
        json_string(f, p->gpu_choice);
        fprintf(f, "}");
    } else if (fmt == CLI_FMT_CSV) {
        fprintf(f, "%d,", p->rank);
        csv_string(f, p->host);
        fprintf(f, ",%d,%d,%d,", p->pid, p->local_rank, p->gpu);
        csv_string(f, p->gpu_name);
        fprintf(f, ",%s,", p->pci_bus_id);
        csv_string(f, p->cpuset);
        fprintf(f, ",%d,", p->numa);
        csv_string(f, p->bound);
        fputc(',', f);
        csv_string(f, p->gpu_choice);
        fputc('\n', f);
    } else {
        fprintf(f, "#  %4d  %-16s %8d %5d %4d  %-13s %-16s %4d  %s | %s | %s\n", p->rank, p->host, p->pid,
                p->local_rank, p->gpu, p->pci_bus_id[0] ? p->pci_bus_id : "-", p->cpuset[0] ? p->cpuset : "-",
                p->numa, p->gpu_name[0] ? p->gpu_name : "-", p->bound, p->gpu_choice);
    }
}

/* Rank 0 receives one record at a time, in rank order: O(1) memory. */
void report_placements(gr_ctx_t ctx, MPI_Comm comm, cli_format_t fmt, FILE *f)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const gr_placement_t *mine = gr_ctx_placement(ctx);
    if (rank != 0) {
        /* rank 0 asks first, so at most one record is in flight */
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 7101, comm, MPI_STATUS_IGNORE);
        MPI_Send(mine, (int)sizeof(*mine), MPI_BYTE, 0, 7102, comm);
        return;
    }
    if (fmt == CLI_FMT_JSON)
        fprintf(f, "  \"placement\": [");
    else if (fmt == CLI_FMT_CSV)
        fprintf(f, "rank,host,pid,local_rank,gpu,gpu_name,pci_bus_id,cpuset,numa,bound,gpu_choice\n");
    else
        fprintf(f, "#  rank  host                  pid local  gpu  pci bus id    cpuset           numa  "
                   "gpu name | bound | gpu choice\n");
    print_placement_row(mine, fmt, f, 1);
    for (int r = 1; r < size; ++r) {
        gr_placement_t p;
        MPI_Send(NULL, 0, MPI_BYTE, r, 7101, comm);
        MPI_Recv(&p, (int)sizeof(p), MPI_BYTE, r, 7102, comm, MPI_STATUS_IGNORE);
        p.host[sizeof(p.host) - 1] = 0;
        print_placement_row(&p, fmt, f, 0);
    }
    if (fmt == CLI_FMT_JSON)
        fprintf(f, "\n  ]");
}
