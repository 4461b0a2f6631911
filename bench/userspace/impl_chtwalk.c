/** @file impl_chtwalk.c
 * `cht-walk-presized`: the `cht-presized` adapter (impl_cht.c) with the
 * lookup the kernel compiles, i.e. without libcht's
 * CHT_ENV_LOOKUP_STOP_AT_NEXT_DUMMY (common/include/adt/cht.h,
 * cht_find_fast()): a walk that reaches the next bucket's dummy reads it.
 * cht_find_fast() is inlined into this file's lookups, so the two adapters
 * compare the two walks on the same table code in one binary (`bench_us
 * misses`, tests/test_uspace_misses.py). The environment header is included
 * first and its switch undefined; its include guard keeps <cht.h> from
 * defining it again.
 */
#include <adt/cht_env_posix.h>
#undef CHT_ENV_LOOKUP_STOP_AT_NEXT_DUMMY
#define CHT_BENCH_WALK 1
#pragma GCC diagnostic ignored "-Wunused-function"
#include "impl_cht.c"
