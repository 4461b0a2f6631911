/** @file cht_env_os.h
 * The third environment of the concurrent hash table: the OS's own user
 * space (uspace/lib/c), for programs such as uspace/app/chtuser.
 *
 * The table's source is common/adt/cht.c, compiled unchanged
 * (docs/ARCHITECTURE.md, "One CHT, three environments"). The top-level
 * Makefile compiles the OS's libcht ($(BUILD)/os/libcht.a) and its programs
 * with this directory on the include path and names this header for
 * <adt/cht.h> (-DCHT_ENV_HEADER, UCHT_FLAGS).
 *
 * The names cht.c uses are declared as for Linux (the header included
 * below: libcht's user RCU, a worker thread for resizes, malloc/free,
 * assertions unless CHT_NDEBUG). What differs is underneath them, selected
 * by CHT_OS_BUILD (which the Makefile defines with this directory):
 *
 *   RCU            libcht's user RCU (uspace/lib/cht_rcu/src/rcu.c) over lib/c:
 *                  readers as on Linux (no fence, no RMW), the writers'
 *                  barrier SYS_MEMBARRIER, blocking on futex mutexes and
 *                  condition variables, the reader record in the thread
 *                  control block (lib/c thread_tcb(): no TLS register)
 *   deferred work  uspace/lib/cht/src/cht_env.c's worker, a lib/c thread
 *   clock, sleep   SYS_CLOCK_NS, a futex wait with a timeout
 *   failures       printed on the console; the task ends with status 134
 *
 * (uspace/lib/cht_rcu/include/cht_rcu_plat.h has the whole platform layer.)
 */
#ifndef USPACE_OS_CHT_ENV_H_
#define USPACE_OS_CHT_ENV_H_

#ifndef CHT_OS_BUILD
#error "the OS environment of the CHT needs CHT_OS_BUILD (see the Makefile)"
#endif

#include "../../env/adt/cht_env_posix.h"

#endif
