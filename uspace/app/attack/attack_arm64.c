/** @file attack_arm64.c
 * The arm64 variants of `attack` (attack.c has the amd64 ones): raw
 * instructions at EL0 against the EL1 boundary. Each variant prints
 * `attack: VARIANT: what it does`, then does it; the kernel must kill only
 * this task with its report or, where the architecture lets EL0 do it, let
 * it go on; either way the kernel stays up. `attack list` prints every
 * variant with the outcome this kernel gives it on QEMU's cortex-a72:
 *
 *   kill CLASS   the task is killed with the report of class CLASS
 *                (task_user_fault()); the program would print
 *                `attack: survived VARIANT` and exit 1 if it came back
 *   ok           legitimate at EL0: prints `attack: returned from VARIANT`
 *                and exits 0
 *
 * What decides each outcome (kernel/arch/arm64: SCTLR_EL1 in start.S,
 * sync_dispatch() in arch.c): EL1 system registers and instructions
 * (MSR/MRS of *_EL1, ERET, HVC, SMC, AT, TLBI, DC IVAC, MSR SPSel) are
 * UNDEFINED at EL0 (ESR EC 0: "invalid instruction"); the EL0-accessible
 * ones that SCTLR_EL1 traps (UMA: DAIF; UCI: DC CIVAC/CVAU, IC IVAU; DZE:
 * DC ZVA; UCT: CTR_EL0), the counters and timers CNTKCTL_EL1 and
 * PMUSERENR_EL0 do not open (the kernel sets both to 0 on every CPU), and
 * WFI with SCTLR_EL1.nTWI clear, trap to EL1 (EC 0x18 / 0x01: "protection
 * fault", as amd64's #GP for cli or hlt); WFE is allowed (nTWE set).
 * FP/SIMD is EL0's own (CPACR_EL1.FPEN 0b11, per-thread state since issue
 * 38); SVE and SME are not (CPACR_EL1.ZEN, SMEN 0: EC 0x19 and 0x1d under
 * -cpu max, UNDEFINED on the Cortex-A72: "invalid instruction").
 * Kernel addresses (the kernel image, the direct map of RAM, the UART's
 * page) are neither accessible nor executable at EL0 (AP[1] clear, UXN
 * set): an access or a branch there is a page fault with no area. `svc`
 * ignores its immediate (the number is x8), and a system call on a junk
 * stack pointer works (the kernel runs on SP_EL1).
 */
#ifdef __aarch64__

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys.h>

/** The direct map (TTBR1): physical 0 at this address. */
#define PHYS_MAP_BASE 0xffff800000000000UL
/** A RAM page of the direct map past the kernel image (RAM at 1 GiB). */
#define LINEAR_RAM (PHYS_MAP_BASE + 0x48000000UL)
/** The PL011 UART's page in the direct map (Device memory). */
#define LINEAR_UART (PHYS_MAP_BASE + 0x09000000UL)

typedef struct {
	const char *name;
	const char *what;
	/** "ok" or the class of the report that must kill the task. */
	const char *outcome;
	void (*fn)(void);
} variant_t;

static volatile uint64_t sink;
/** A word for the exclusive and atomic variants. */
static uint64_t words[4] __attribute__((aligned(16)));

#define ASM_FN(fname, body) \
	static void fname(void) \
	{ \
		__asm__ volatile (body ::: "x0", "x1", "x2", "memory"); \
	}

/** fname executes `insn` with %0 = the address @a addr. */
#define ASM_ADDR_FN(fname, addr, insn) \
	static void fname(void) \
	{ \
		__asm__ volatile (insn :: "r" (addr) : "memory"); \
	}

/* EL1 system registers and instructions: UNDEFINED at EL0. */
ASM_FN(v_msr_ttbr0, "msr ttbr0_el1, xzr")
ASM_FN(v_mrs_ttbr1, "mrs x0, ttbr1_el1")
ASM_FN(v_msr_vbar, "msr vbar_el1, xzr")
ASM_FN(v_mrs_sctlr, "mrs x0, sctlr_el1")
ASM_FN(v_msr_sctlr, "msr sctlr_el1, xzr")
ASM_FN(v_mrs_tpidr1, "mrs x0, tpidr_el1")
ASM_FN(v_msr_spsel, "msr spsel, #1")
ASM_FN(v_msr_tpidrro, "msr tpidrro_el0, xzr")
ASM_FN(v_eret, "eret")
ASM_FN(v_hvc, "hvc #0")
ASM_FN(v_smc, "smc #0")
ASM_ADDR_FN(v_at, KERNEL_IMAGE_ADDR, "at s1e1r, %0")
ASM_FN(v_tlbi, "tlbi vmalle1is")
ASM_ADDR_FN(v_dc_ivac, LINEAR_RAM, "dc ivac, %0")
ASM_FN(v_udf, "udf #0")
/* SVE and SME: trapped by CPACR_EL1.ZEN/SMEN (EC 0x19, 0x1d) or UNDEFINED. */
ASM_FN(v_sve, ".arch armv8.2-a+sve\n rdvl x0, #1\n .arch armv8-a")
ASM_FN(v_sme, ".arch armv9-a+sme\n smstart\n .arch armv8-a")
/* Trapped by SCTLR_EL1, CNTKCTL_EL1, PMUSERENR_EL0. */
ASM_FN(v_daif, "msr daif, xzr")
ASM_FN(v_daifclr, "msr daifclr, #0xf")
ASM_FN(v_wfi, "wfi")
ASM_ADDR_FN(v_dc_zva, KERNEL_IMAGE_ADDR, "dc zva, %0")
ASM_ADDR_FN(v_dc_civac, KERNEL_IMAGE_ADDR, "dc civac, %0")
ASM_ADDR_FN(v_ic_ivau, KERNEL_IMAGE_ADDR, "ic ivau, %0")
ASM_FN(v_mrs_ctr, "mrs x0, ctr_el0")
ASM_FN(v_mrs_cntvct, "mrs x0, cntvct_el0")
ASM_FN(v_mrs_cntfrq, "mrs x0, cntfrq_el0")
ASM_FN(v_mrs_pmccntr, "mrs x0, pmccntr_el0")
ASM_FN(v_msr_cntv_ctl, "msr cntv_ctl_el0, xzr")
/* Breakpoints. */
ASM_FN(v_brk, "brk #0")
ASM_FN(v_brk_div, "brk #0x5503")

/* Kernel addresses: loads, stores, branches. */
static void v_load_kernel(void)
{
	sink = *(volatile uint64_t *) KERNEL_IMAGE_ADDR;
}

static void v_store_kernel(void)
{
	*(volatile uint64_t *) KERNEL_IMAGE_ADDR = 0;
}

static void v_load_linear(void)
{
	sink = *(volatile uint64_t *) LINEAR_RAM;
}

static void v_store_linear(void)
{
	*(volatile uint64_t *) LINEAR_RAM = 0;
}

static void v_load_uart(void)
{
	sink = *(volatile uint32_t *) LINEAR_UART;
}

static void v_store_uart(void)
{
	/* The PL011's data register: a character, if EL0 could write it. */
	*(volatile uint32_t *) LINEAR_UART = 'X';
}

static void v_jump_kernel(void)
{
	((void (*)(void)) KERNEL_IMAGE_ADDR)();
}

static void v_jump_linear(void)
{
	((void (*)(void)) LINEAR_RAM)();
}

/* Alignment. */
static void v_pc_align(void)
{
	/* A branch to main + 2: PC alignment fault (EC 0x22). */
	__asm__ volatile ("adr x0, 1f; add x0, x0, #2; br x0; 1: nop"
	    ::: "x0", "memory");
}

static void v_ldxr_align(void)
{
	/* Exclusives need natural alignment whatever SCTLR_EL1.A says. */
	__asm__ volatile ("ldxr x1, [%0]" :: "r" ((uintptr_t) words + 4)
	    : "x1", "memory");
}

static void v_sp_align(void)
{
	/*
	 * A load through a misaligned SP, then the SP restored. Permitted
	 * here: SCTLR_EL1.SA0 is clear (no SP alignment check at EL0), and
	 * QEMU omits the check even when it is set (translate-a64.c,
	 * gen_check_sp_alignment()). With SA0 set on hardware it would be an
	 * SP alignment fault (EC 0x26), which sync_dispatch() reports as an
	 * "alignment fault".
	 */
	__asm__ volatile (
	    "mov x2, sp\n"
	    "sub x0, x2, #24\n"
	    "mov sp, x0\n"
	    "ldr x1, [sp]\n"
	    "mov sp, x2\n" ::: "x0", "x1", "x2", "memory");
}

static void v_sp_kernel(void)
{
	/* The stack pointer in the kernel image, then a push. */
	__asm__ volatile (
	    "mov x2, sp\n"
	    "mov sp, %0\n"
	    "stp x2, x2, [sp, #-16]!\n"
	    "mov sp, x2\n" :: "r" (KERNEL_IMAGE_ADDR) : "x2", "memory");
}

/* Legitimate at EL0. */
static void v_svc_imm(void)
{
	/* svc with a junk immediate: the kernel reads the number from x8. */
	register long x8 __asm__("x8") = SYS_TASK_ID;
	register long x0 __asm__("x0") = 0;
	__asm__ volatile ("svc #0x1234" : "+r" (x0) : "r" (x8) : "memory");
	if (x0 != sys_task_id()) {
		printf("attack: svc #0x1234 returned %ld\n", x0);
		exit(1);
	}
}

static void v_svc_junk(void)
{
	static const long nrs[] = { SYS_COUNT, 1000, -1, 1L << 31, 1L << 32,
	    (long) (1UL << 63), 0x7fffffffffffffffL };
	for (unsigned i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		long rc = __syscall5(nrs[i], -1, -1, -1, -1, -1);
		if (rc != ENOTSUP) {
			printf("attack: system call %#lx returned %ld\n", nrs[i], rc);
			exit(1);
		}
	}
}

static void v_svc_sp(void)
{
	/*
	 * SYS_YIELD with SP at 0 and at a kernel address, the frame pointer
	 * and the link register junk too: the kernel takes nothing from them.
	 */
	register uint64_t kaddr __asm__("x9") = KERNEL_IMAGE_ADDR;
	__asm__ volatile (
	    "mov x2, sp\n"
	    "mov x3, x29\n"
	    "mov x4, x30\n"
	    "mov x8, #" "10" "\n"     /* SYS_YIELD */
	    "mov x0, #0\n"
	    "mov sp, x0\n"
	    "mov x29, #-1\n"
	    "mov x30, #-1\n"
	    "svc #0\n"
	    "mov sp, x9\n"
	    "mov x8, #" "10" "\n"
	    "svc #0\n"
	    "mov sp, x2\n"
	    "mov x29, x3\n"
	    "mov x30, x4\n"
	    :: "r" (kaddr) : "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7",
	    "x8", "memory");
}
_Static_assert(SYS_YIELD == 10, "v_svc_sp's system call");

static void v_tpidr(void)
{
	/* TPIDR_EL0 is EL0's own; TPIDRRO_EL0 is readable and 0 (arch.c). */
	uint64_t v = 0x1234567890abcdefUL, r, ro;
	__asm__ volatile ("msr tpidr_el0, %1; mrs %0, tpidr_el0; "
	    "mrs %2, tpidrro_el0" : "=r" (r), "+r" (v), "=r" (ro));
	if (r != v || ro != 0) {
		printf("attack: tpidr_el0 read %#lx, tpidrro_el0 %#lx\n",
		    (unsigned long) r, (unsigned long) ro);
		exit(1);
	}
}

static void v_fp(void)
{
	/* FP/SIMD is EL0's own (CPACR_EL1.FPEN 0b11): 1.5 + 1.5 = 3.0. */
	uint64_t r;
	__asm__ volatile ("fmov d0, #1.5\n fadd d0, d0, d0\n fmov %0, d0\n"
	    "movi v1.16b, #0\n" : "=r" (r) :: "memory");
	if (r != 0x4008000000000000UL) {
		printf("attack: 1.5 + 1.5 gave %#lx\n", (unsigned long) r);
		exit(1);
	}
}

static void v_wfe(void)
{
	/* WFE: a spin-wait hint EL0 may use (SCTLR_EL1.nTWE is set). */
	__asm__ volatile ("sevl; wfe" ::: "memory");
}

static void v_nzcv(void)
{
	/* NZCV: EL0's own condition flags. */
	uint64_t v;
	__asm__ volatile ("mrs %0, nzcv; msr nzcv, %0" : "=r" (v));
}

static void v_ldadd(void)
{
	/* LSE atomics are ARMv8.1: the A72 has none (UNDEFINED). */
	__asm__ volatile (".arch armv8.1-a\n ldadd x0, x1, [%0]\n .arch armv8-a"
	    :: "r" (words) : "x0", "x1", "memory");
}

#define INVALID "invalid instruction"
#define PROT "protection fault"
#define NOAREA "page fault: no area at that address"

static const variant_t variants[] = {
	{ "msr-ttbr0", "msr ttbr0_el1, xzr (the user page table base)",
	    INVALID, v_msr_ttbr0 },
	{ "mrs-ttbr1", "mrs ttbr1_el1 (the kernel's page table base)",
	    INVALID, v_mrs_ttbr1 },
	{ "msr-vbar", "msr vbar_el1, xzr (the exception vectors)", INVALID,
	    v_msr_vbar },
	{ "mrs-sctlr", "mrs sctlr_el1", INVALID, v_mrs_sctlr },
	{ "msr-sctlr", "msr sctlr_el1, xzr (MMU off)", INVALID, v_msr_sctlr },
	{ "mrs-tpidr1", "mrs tpidr_el1 (the per-CPU base)", INVALID,
	    v_mrs_tpidr1 },
	{ "msr-spsel", "msr spsel, #1 (the kernel's stack)", INVALID,
	    v_msr_spsel },
	{ "msr-tpidrro", "msr tpidrro_el0 (read-only at EL0)", INVALID,
	    v_msr_tpidrro },
	{ "eret", "eret from EL0", INVALID, v_eret },
	{ "hvc", "hvc #0", INVALID, v_hvc },
	{ "smc", "smc #0", INVALID, v_smc },
	{ "at", "at s1e1r (translate a kernel address)", INVALID, v_at },
	{ "tlbi", "tlbi vmalle1is", INVALID, v_tlbi },
	{ "dc-ivac", "dc ivac on kernel RAM (discard without clean)", INVALID,
	    v_dc_ivac },
	{ "udf", "udf #0", INVALID, v_udf },
	{ "sve", "rdvl (SVE: CPACR_EL1.ZEN traps it, or none)", INVALID,
	    v_sve },
	{ "sme", "smstart (SME: CPACR_EL1.SMEN traps it, or none)", INVALID,
	    v_sme },
	{ "ldadd", "ldadd (ARMv8.1 LSE: not on the Cortex-A72)", INVALID,
	    v_ldadd },
	{ "daif", "msr daif, xzr (unmask every interrupt)", PROT, v_daif },
	{ "daifclr", "msr daifclr, #0xf", PROT, v_daifclr },
	{ "wfi", "wfi", PROT, v_wfi },
	{ "dc-zva", "dc zva on the kernel image", PROT, v_dc_zva },
	{ "dc-civac", "dc civac on the kernel image", PROT, v_dc_civac },
	{ "ic-ivau", "ic ivau on the kernel image", PROT, v_ic_ivau },
	{ "mrs-ctr", "mrs ctr_el0", PROT, v_mrs_ctr },
	{ "mrs-cntvct", "mrs cntvct_el0 (the virtual counter)", PROT,
	    v_mrs_cntvct },
	{ "mrs-cntfrq", "mrs cntfrq_el0", PROT, v_mrs_cntfrq },
	{ "mrs-pmccntr", "mrs pmccntr_el0 (the cycle counter)", PROT,
	    v_mrs_pmccntr },
	{ "msr-cntv-ctl", "msr cntv_ctl_el0, xzr (stop the kernel's timer)",
	    PROT, v_msr_cntv_ctl },
	{ "brk", "brk #0", "breakpoint", v_brk },
	{ "brk-div", "brk #0x5503 (a checked division by zero)",
	    "divide error", v_brk_div },
	{ "load-kernel", "ldr from the kernel image", NOAREA, v_load_kernel },
	{ "store-kernel", "str to the kernel image", NOAREA, v_store_kernel },
	{ "load-linear", "ldr from the direct map of RAM", NOAREA,
	    v_load_linear },
	{ "store-linear", "str to the direct map of RAM", NOAREA,
	    v_store_linear },
	{ "load-uart", "ldr from the UART's registers", NOAREA, v_load_uart },
	{ "store-uart", "str to the UART's data register", NOAREA,
	    v_store_uart },
	{ "jump-kernel", "br to the kernel image", NOAREA, v_jump_kernel },
	{ "jump-linear", "br to the direct map of RAM", NOAREA,
	    v_jump_linear },
	{ "sp-kernel", "stp through SP in the kernel image", NOAREA,
	    v_sp_kernel },
	{ "pc-align", "br to an address + 2", "alignment fault", v_pc_align },
	{ "ldxr-align", "ldxr from a misaligned address", "alignment fault",
	    v_ldxr_align },
	{ "sp-align", "ldr through a misaligned SP (SA0 clear)", "ok",
	    v_sp_align },
	{ "svc-imm", "svc #0x1234 (SYS_TASK_ID in x8)", "ok", v_svc_imm },
	{ "svc-junk", "svc #0 with junk numbers in x8 (ENOTSUP)", "ok",
	    v_svc_junk },
	{ "svc-sp", "svc #0 with SP 0, then SP in the kernel image", "ok",
	    v_svc_sp },
	{ "tpidr", "msr/mrs tpidr_el0, mrs tpidrro_el0", "ok", v_tpidr },
	{ "fp", "fmov, fadd, movi (FP/SIMD is EL0's own)", "ok", v_fp },
	{ "wfe", "sevl; wfe", "ok", v_wfe },
	{ "nzcv", "mrs/msr nzcv", "ok", v_nzcv },
};

#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "list") == 0) {
		for (unsigned i = 0; i < NVARIANTS; i++)
			printf("attack: %s: %s\n", variants[i].name,
			    variants[i].outcome);
		return argc < 2 ? 2 : 0;
	}
	for (unsigned i = 0; i < NVARIANTS; i++) {
		const variant_t *v = &variants[i];
		if (strcmp(argv[1], v->name) != 0)
			continue;
		printf("attack: %s: %s\n", v->name, v->what);
		v->fn();
		if (strcmp(v->outcome, "ok") == 0) {
			printf("attack: returned from %s\n", v->name);
			return 0;
		}
		printf("attack: survived %s\n", v->name);
		return 1;
	}
	printf("attack: unknown variant %s (attack list)\n", argv[1]);
	return 2;
}

#endif
