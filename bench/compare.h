/* compare.h - `tscan-bench compare BASE.json NEW.json`: the regression verdicts. */
#ifndef TSCAN_BENCH_COMPARE_H
#define TSCAN_BENCH_COMPARE_H

/* argv[0] is "compare". Prints a markdown table and a summary on stdout; returns the exit
 * status: 0, 1 when a case is SLOW, 2 on a usage error or an unreadable or incompatible
 * report. */
int compare_main(int argc, char **argv);

#endif
