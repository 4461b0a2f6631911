/** @file chtbench.h
 * Entry points of the `chtbench` benchmarks (kernel/test/bench/
 * chtbench/, docs/CHTBENCH.md) for the console command
 * (kernel/generic/src/console/cmd_bench.c).
 */
#ifndef KERN_BENCH_CHTBENCH_H_
#define KERN_BENCH_CHTBENCH_H_

#include <typedefs.h>

/** Longest run `-t` accepts, in seconds. */
#define CHTBENCH_MAX_SECONDS 3600
/** Run length without `-t`, in seconds. */
#define CHTBENCH_DEFAULT_SECONDS 10

/**
 * Prints the benchmark table, the one list of benchmark ids: a usage line,
 * a header, one line per benchmark "  ID  NAME  FLAGS  DESCRIPTION" (FLAGS:
 * 'u' takes the update percentage, 'r' runs a resizer thread, '1' runs
 * updates on one CPU only, '-' none of them), then a line explaining the
 * flags. The host side (tools/kconsole.py parse_chtbench_table()) reads the
 * ids, names and flags from it. Thread context.
 */
void chtbench_list(void);

/**
 * Prints the usage, preceded by "chtbench: @a msg" unless @a msg is NULL.
 * Thread context.
 */
void chtbench_usage(const char *msg);

/**
 * Runs benchmark @a id on CPUs 0 .. @a cpus - 1 (wired to them when
 * @a wired) with @a update_pct percent updates (ids that take updates) for
 * @a seconds seconds (1 .. CHTBENCH_MAX_SECONDS), then prints a line per
 * thread and one `result:` line. Arguments that do not fit the table (unknown
 * id, cpus not between 1 and the online CPUs, percent not in 0..100, updates
 * on more than one CPU for the single-CPU baseline) print the usage and run
 * nothing. With @a slabmap, after the run and before the teardown, prints the
 * slab allocator's ranges (`slabmap NAME desc|slab START BYTES`, every cache's
 * descriptor and slabs, for naming the sharing counter's heap lines:
 * docs/SHARING.md). Thread context (the kconsole thread); sleeps for the run,
 * creates and joins threads.
 */
void chtbench_run(int64_t id, int64_t cpus, int64_t update_pct, bool wired,
    unsigned seconds, bool slabmap);

#endif
