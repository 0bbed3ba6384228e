/*
 * summary.h - the distribution of a report's cases: % of copy of one strategy (AUTO on the
 * GPU) over every case, overall and per element size, and AUTO against the best forced
 * strategy. Computed from the report's JSON, so that `tscan-bench summary REPORT.json` gives
 * for any report what a run writes in its own (bench/REPORT.md, summary.distribution).
 */
#ifndef TSCAN_BENCH_SUMMARY_H
#define TSCAN_BENCH_SUMMARY_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* The strategy a report's distribution is of: "reference" on that backend, else "auto". */
const char *distribution_strategy(const char *backend);

/* summary.distribution of these benchmarks (a report's array), for `strategy`; NULL when out
 * of memory. */
cJSON *distribution_json(const cJSON *benchmarks, const char *strategy);

/* The distribution as a table. */
void distribution_print(FILE *out, const cJSON *distribution);

/* `tscan-bench summary REPORT.json [--json] [--strategy S]`; argv[0] is "summary". Returns
 * the exit status: 0, or 2 on a usage error or an unreadable report. */
int summary_main(int argc, char **argv);

#endif
