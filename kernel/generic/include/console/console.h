/** @file console.h
 * The kernel console device: output to the console UART (console_hw_*, arch.h), input ring filled by the UART
 * interrupt (with polling as a fallback).
 */
#ifndef KERN_CONSOLE_H_
#define KERN_CONSOLE_H_

#include <typedefs.h>

/** Early console set-up (polled output). BSP, before anything prints. */
void console_init(void);
/** Routes the UART interrupt to the BSP and enables it. BSP, after arch_cpus_init(). */
void console_enable_input_irq(void);

/**
 * Reads one input byte, halting the CPU until input arrives. Only the kconsole
 * thread reads. May be called with interrupts enabled only.
 */
char console_getchar(void);

/** Begins an atomic output sequence (several printf calls form one block). */
void console_lock(void);
void console_unlock(void);
/** Writes raw bytes; caller holds the console lock (or panics). */
void console_write_locked(const char *s, size_t n);

#endif
