/** @file cmds.h
 * The kconsole commands, one file per subsystem in kernel/generic/src/console/:
 * cmd_system.c (help, version, cpus, uptime, threads, sched, halt), cmd_mm.c
 * (zones, slabs, as, page_ht), cmd_rcu.c (rcu), cmd_synch.c (lockstat),
 * cmd_workq.c (workq), cmd_cht.c (chtstat), cmd_test.c (test, rcutorture),
 * cmd_bench.c (chtbench), cmd_task.c (programs, run, tasks, kill), cmd_kcsan.c
 * (kcsan, KCSAN kernels only). Each is
 * built on its subsystem's statistics functions; no subsystem calls into the
 * console. Each function registers its file's commands (kconsole_init(), boot).
 */
#ifndef KERN_CONSOLE_CMDS_H_
#define KERN_CONSOLE_CMDS_H_

void cmd_system_init(void);
void cmd_mm_init(void);
void cmd_rcu_init(void);
void cmd_synch_init(void);
void cmd_workq_init(void);
void cmd_cht_init(void);
#ifdef CONFIG_TEST
/** test, rcutorture (cmd_test.c; kernels built with TESTS=1 only). */
void cmd_test_init(void);
/** chtbench (cmd_bench.c; kernels built with TESTS=1 only). */
void cmd_bench_init(void);
#endif
/** programs, run, tasks, kill (cmd_task.c; user tasks). */
void cmd_task_init(void);
#ifdef CONFIG_KCSAN
/** kcsan (cmd_kcsan.c; make SANITIZE=kcsan kernels only). */
void cmd_kcsan_init(void);
#endif

#endif
