/* compare.h - `tscan-bench compare BASE.json NEW.json`: the regression verdicts, also used by
 * `tscan-bench ab` on the two reports it writes. */
#ifndef TSCAN_BENCH_COMPARE_H
#define TSCAN_BENCH_COMPARE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define SPREAD_FORMAT "tscan-bench-spread"
/* A case whose median is under this fraction of its copy's speed is off the copy bound: its
 * time follows latency and clocks more than bandwidth, and it gets the wider default spread. */
#define OFF_COPY_FRACTION 0.25

typedef struct compare_settings {
    double threshold;       /* %: the smallest change called FAST or SLOW */
    double noise_factor;    /* allowed grows to this x the combined within-run relative stdev */
    double spread;          /* %: run-to-run spread of a case near the copy, without history */
    double off_copy_spread; /* %: the same for a case off the copy bound */
    const char *spread_path; /* per-case spreads from history, or NULL */
    int allow_different_gpus;
    const char *base_strategy, *new_strategy; /* compare one strategy of each, or NULL */
} compare_settings;

void compare_settings_default(compare_settings *settings);

/* If argv[*i] is an option of the verdicts (threshold, noise, spreads, GPUs), takes it (and its
 * value, advancing *i) into settings and returns 1, with *error an exit status (EXIT_USAGE after
 * printing why); returns 0 for any other argument. */
int parse_compare_option(int argc, char **argv, int *i, compare_settings *settings, int *error);

/* Prints the verdicts of NEW against BASE as a markdown table and a summary on stdout; returns
 * the exit status: 0, 1 when a case is SLOW, 2 on an unreadable or incompatible report. */
int compare_reports(const char *base_path, const char *new_path, const compare_settings *settings);

/* argv[0] is "compare". */
int compare_main(int argc, char **argv);

/* Reads and parses a JSON file; NULL with a message naming the file when it cannot. */
cJSON *json_parse_file(const char *path, char *err, size_t errlen);

#endif
