/* compare.h - `tscan-bench compare BASE.json NEW.json`: the regression verdicts. */
#ifndef TSCAN_BENCH_COMPARE_H
#define TSCAN_BENCH_COMPARE_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* argv[0] is "compare". Prints a markdown table and a summary on stdout; returns the exit
 * status: 0, 1 when a case is SLOW, 2 on a usage error or an unreadable or incompatible
 * report. */
int compare_main(int argc, char **argv);

/* Reads and parses a JSON file; NULL with a message naming the file when it cannot. */
cJSON *json_parse_file(const char *path, char *err, size_t errlen);

#endif
