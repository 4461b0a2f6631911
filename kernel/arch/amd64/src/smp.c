/** @file smp.c
 * AP start-up with INIT-SIPI-SIPI, one CPU at a time.
 */
#include <arch/smp_arch.h>
#include <arch/apic.h>
#include <arch/asm.h>
#include <arch/boot.h>
#include <arch/mm.h>
#include <arch/cpu_arch.h>
#include <arch/interrupt.h>
#include <time/delay.h>
#include <mm/frame.h>
#include <main/main.h>
#include <cpu.h>
#include <print.h>
#include <lib/str.h>

extern const char ap_trampoline_start[];
extern const char ap_trampoline_end[];
extern uint64_t ap_tramp_cr3;
extern uint64_t ap_tramp_stack;
extern uint64_t ap_tramp_entry;
extern uint64_t ap_tramp_cpu;

/** Milliseconds to wait for an AP to come online before giving up on it. */
#define AP_START_TIMEOUT_MS 5000

/**
 * Set by the BSP once the identity map is gone; APs spin until then before they
 * reload CR3 (flushing their stale identity translations). Atomics.
 */
static bool identity_unmapped;

static uint64_t tramp_slot_offset(const void *slot)
{
	return (uintptr_t) slot - (uintptr_t) ap_trampoline_start;
}

static void tramp_write(const void *slot, uint64_t value)
{
	uint64_t *dst = PA2KA(AP_TRAMPOLINE + tramp_slot_offset(slot));
	__atomic_store_n(dst, value, __ATOMIC_RELEASE);
}

static bool wait_online(cpu_t *c, uint64_t timeout_us)
{
	uint64_t start = uptime_us();
	while (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != CPU_ONLINE) {
		if (uptime_us() - start > timeout_us)
			return false;
		cpu_relax();
	}
	return true;
}

unsigned smp_start_aps(void)
{
	size_t tsize = ap_trampoline_end - ap_trampoline_start;
	memcpy(PA2KA(AP_TRAMPOLINE), ap_trampoline_start, tsize);
	tramp_write(&ap_tramp_cr3, KA2PA(boot_pml4));
	tramp_write(&ap_tramp_entry, (uint64_t) ap_entry64);

	for (unsigned i = 1; i < cpu_count; i++) {
		cpu_t *c = &cpus[i];
		/* Each AP gets a kernel stack from the frame allocator. */
		uintptr_t stack = frame_alloc(KERNEL_STACK_SIZE / PAGE_SIZE, FRAME_ZERO);
		if (!stack) {
			printf("smp: no memory for the stack of CPU %u\n", i);
			c->state = CPU_FAILED;
			continue;
		}
		c->stack_top = (uintptr_t) PA2KA(stack) + KERNEL_STACK_SIZE;
		tramp_write(&ap_tramp_stack, c->stack_top);
		tramp_write(&ap_tramp_cpu, (uint64_t) c);
		__atomic_store_n(&c->state, CPU_STARTING, __ATOMIC_RELEASE);

		lapic_send_init(c->arch_id);
		udelay(10000);
		lapic_send_startup(c->arch_id, AP_TRAMPOLINE >> 12);
		if (!wait_online(c, 1000)) {
			lapic_send_startup(c->arch_id, AP_TRAMPOLINE >> 12);
			if (!wait_online(c, AP_START_TIMEOUT_MS * 1000UL)) {
				printf("smp: CPU %u (APIC id %u) did not start\n", i,
				    c->arch_id);
				/*
				 * Failed CPUs keep their stack: the AP might still
				 * wake up and use it.
				 */
				__atomic_store_n(&c->state, CPU_FAILED,
				    __ATOMIC_RELEASE);
				continue;
			}
		}
	}
	return (unsigned) atomic_get(&cpu_active_count);
}

void smp_boot_finish(void)
{
	boot_pml4[0] = 0;
	write_cr3(read_cr3());
	__atomic_store_n(&identity_unmapped, true, __ATOMIC_RELEASE);
}

void ap_entry64(cpu_t *cpu)
{
	cpu_arch_init(cpu);
	lapic_init_ap();
	lapic_timer_start();
	atomic_inc(&cpu_active_count);
	/* Acknowledge: the BSP goes on with the next AP. */
	__atomic_store_n(&cpu->state, CPU_ONLINE, __ATOMIC_RELEASE);

	while (!__atomic_load_n(&identity_unmapped, __ATOMIC_ACQUIRE))
		cpu_relax();
	write_cr3(read_cr3());

	main_ap();
}
