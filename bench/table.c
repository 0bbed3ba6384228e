/* table.c - what a run prints as it goes: the table's rows on the table stream, and progress
 * with an ETA on stderr. */
#include "table.h"

#include <stdio.h>

#define CASE_COLUMN 72

void table_header(FILE *out) {
    fprintf(out, "%-*s %-10s %12s %10s %8s  %s\n", CASE_COLUMN, "case", "strategy", "median", "GB/s", "% copy",
            "check");
}

void table_row(FILE *out, const bench_case *c, const case_result *r, const run_results *results) {
    char median[32], key[sizeof c->name];
    snprintf(key, sizeof key, "%.*s", (int)case_key_length(c), c->name);
    fprintf(out, "%-*s %-10s ", CASE_COLUMN, key, strategy_name(c->strategy));
    if (r->timed) {
        double copy = r->copy_index >= 0 ? results->copies[r->copy_index].time.median : 0.0;
        format_seconds(median, sizeof median, r->time.median);
        fprintf(out, "%12s %10.1f %7.1f%%  %s\n", median, (double)case_bytes_moved(c) / r->time.median / 1e9,
                100.0 * copy / r->time.median, "ok");
    } else if (r->status == CASE_SKIPPED) {
        fprintf(out, "skipped: %s\n", r->message);
    } else {
        fprintf(out, "FAILED: %s\n", r->message);
    }
    fflush(out);
}

static void format_duration(char *buf, size_t len, double s) {
    long total = (long)(s + 0.5);
    if (total >= 60) snprintf(buf, len, "%ldm%02lds", total / 60, total % 60);
    else snprintf(buf, len, "%lds", total);
}

double case_weight(const bench_case *c) { return (double)case_bytes_moved(c) + (double)(1 << 26); }

void progress_update(progress *p, const bench_case *c, size_t done, size_t count) {
    double now = bench_now(), elapsed, eta;
    char elapsed_text[32], eta_text[32];
    p->done_weight += case_weight(c);
    if (now - p->last < 2.0 && done < count) return;
    if (done == count && now - p->start < 2.0) return;
    p->last = now;
    elapsed = now - p->start;
    eta = elapsed * (p->total_weight - p->done_weight) / p->done_weight;
    format_duration(elapsed_text, sizeof elapsed_text, elapsed);
    format_duration(eta_text, sizeof eta_text, eta);
    fprintf(stderr, "[%zu/%zu] %3.0f%%  elapsed %s  ETA %s  %s\n", done, count,
            100.0 * p->done_weight / p->total_weight, elapsed_text, eta_text, c->name);
}
