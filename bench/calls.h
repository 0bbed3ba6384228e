/* calls.h - `tscan-bench calls`: what a call costs when calls come back to back. */
#ifndef TSCAN_BENCH_CALLS_H
#define TSCAN_BENCH_CALLS_H

int calls_main(int argc, char **argv);

#endif
