# Top-level Makefile: builds the kernel (build/kernel.elf), the GRUB ISO
# (build/image.iso), runs it (make run) and tests it (make test).
#
# Variables:
#   ARCH           amd64 (default) or arm64 (AArch64, QEMU virt; cross
#                  compiler aarch64-linux-gnu-, output in build/arm64)
#   CROSS_COMPILE  toolchain prefix (empty on an x86-64 host for amd64)
#   DEBUG          1 (default): asserts on, -O1; 0: release build, -O2, asserts off
#   SMP            CPUs for `make run` (default 4)
#   MEM            memory for `make run` (default 512M)
#   RCU            a-rcu (default) or podzimek-rcu
#   PAGE_HT        cht (default): the page hash table is a CHT; locked: the
#                  previous design, one chained table under a global lock
#   BROKEN         the negative controls (never for real use), a
#                  comma-separated list of fault-injection points and reverted
#                  defects: tests/controls/controls.mk, docs/CONTROLS.md
#   RCU_BROKEN     1: the same as BROKEN=rcu (kept as an alias)
#   LOCK_STAT      1: lock statistics per lock class (the `lockstat` command;
#                  hold and wait times in cycle-counter units (amd64: TSC
#                  cycles, arm64: generic-timer ticks), instructions under
#                  -icount); 0 (default): none, spinlocks unchanged
#   LOCKDEP        1 (default in debug builds): the lock-dependency validator
#                  (synch/lockdep.h, the `lockdep` command); 0: none. Release
#                  builds (DEBUG=0) never have it
#   TESTS          1 (default): the kernel tests and benchmarks (kernel/test/,
#                  the `test`, `rcutorture` and `chtbench` commands; defines
#                  CONFIG_TEST); 0: a production kernel without them
#   BUILD          output directory (default build; the test harness builds the
#                  other configurations in build/<config>)
#   PYTHON         Python 3 used by the build helpers and the test harness
#   SPARSE         the sparse command of make check (default sparse)
#   CCACHE         the ccache command in front of the compiler (default: ccache
#                  when installed; CCACHE= compiles without it); its cache is
#                  build/ccache (CCACHE_DIR)
#   SANITIZE       a kernel sanitizer (docs/SANITIZERS.md): kasan (address
#                  sanitizer: shadow memory, redzones, RCU-aware quarantine),
#                  ubsan (undefined behaviour), kcsan (data races: GCC's
#                  -fsanitize=thread calls, debug/kcsan.c's soft watchpoints,
#                  docs/SANITIZERS_KCSAN.md); empty (default): none. The
#                  harness's builds are in build/<config>-<sanitizer>

ARCH ?= amd64
ifeq ($(ARCH),arm64)
CROSS_COMPILE ?= aarch64-linux-gnu-
QEMU ?= qemu-system-aarch64
BUILD ?= build/arm64
else ifeq ($(ARCH),amd64)
CROSS_COMPILE ?=
else
$(error ARCH must be amd64 or arm64)
endif
DEBUG ?= 1
RCU ?= a-rcu
PAGE_HT ?= cht
RCU_BROKEN ?= 0
BROKEN ?=
LOCK_STAT ?= 0
LOCKDEP ?= 1
TESTS ?= 1
SMP ?= 4
MEM ?= 512M
PYTHON ?= python3
QEMU ?= qemu-system-x86_64

# ccache (Debian's ccache; tools/ensure-deps.sh test installs it) in front of
# every compile of the kernel and its programs, when present: the many
# configurations (flavours, controls, arm64) share each object that their
# knobs do not change. Preprocessor mode: a -D that does not change a file's
# preprocessed text does not change its cache key. The cache is
# build/ccache of the tree where make started (CCACHE_DIR, exported, so that
# a sub-make in a copy of the tree shares it; the compile commands name
# sources by relative paths and the directory is not hashed, so copies hit
# too). CCACHE= (empty) compiles without it.
CCACHE ?= $(shell command -v ccache 2>/dev/null)
CCACHE_DIR ?= $(CURDIR)/build/ccache
export CCACHE_DIR
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
export CCACHE_MAXSIZE ?= 2G
CC      := $(if $(CCACHE),$(CCACHE) )$(CROSS_COMPILE)gcc
LD      := $(CROSS_COMPILE)ld
NM      := $(CROSS_COMPILE)nm
OBJCOPY := $(CROSS_COMPILE)objcopy

BUILD ?= build
VERSION := 0.1.0
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

ARCH_DIR := kernel/arch/$(ARCH)
GENARCH_DIR := kernel/genarch
GENERIC_DIR := kernel/generic
TEST_DIR := kernel/test
# Sources and headers compiled into more than one of the kernel, lib/c and
# libcht (common/include: the freestanding C headers, the syscall ABI, errno
# and the CHT; common/adt/cht.c, common/print/printf_core.c,
# common/test/cht_sanity.c).
COMMON_DIR := common

# kernel/test is on the include path only in kernels with the tests
# (TESTS=1), so that nothing else can include a test's header.
INCLUDES := -I$(GENERIC_DIR)/include -I$(ARCH_DIR)/include -I$(GENARCH_DIR)/include \
	-I$(COMMON_DIR)/include \
	$(if $(filter 1,$(TESTS)),-I$(TEST_DIR) -I$(COMMON_DIR)/test)

ifeq ($(ARCH),arm64)
# armv8-a (Cortex-A72: no LSE atomics, so GCC's __atomic become LL/SC
# loops; no out-of-line atomics helpers, which live in libgcc);
# general registers only (no FP/SIMD state to save in the kernel);
# x18 reserved: it holds the running thread's A-RCU reader count
# (arch/arm64/include/arch/rcu_arch.h), so no compiled code may use it.
ARCH_CFLAGS := -march=armv8-a -mgeneral-regs-only -mno-outline-atomics \
	-mcmodel=small -ffixed-x18
else
ARCH_CFLAGS := -mno-red-zone -mcmodel=kernel -mno-sse -mno-sse2 -mno-mmx \
	-mno-3dnow -mno-avx -msoft-float
endif

CFLAGS := -std=gnu11 -ffreestanding -nostdinc -fno-builtin -fno-pic -fno-pie \
	$(ARCH_CFLAGS) -fno-stack-protector -fno-omit-frame-pointer -fno-strict-aliasing \
	-fno-asynchronous-unwind-tables -ffunction-sections -fdata-sections \
	-Wall -Wextra -Werror -Wno-unused-parameter -Wmissing-prototypes \
	-Wstrict-prototypes -Wshadow -Wpointer-arith -g $(INCLUDES) \
	-DKERNEL_VERSION='"$(VERSION)"' -DKERNEL_GIT_REV='"$(GIT_REV)"' \
	-DCHT_ENV_HEADER='"adt/cht_env_kernel.h"'

ifeq ($(DEBUG),1)
CFLAGS += -O1 -DCONFIG_DEBUG
BUILD_KIND := debug
else
CFLAGS += -O2
BUILD_KIND := release
endif
CFLAGS += -DCONFIG_BUILD='"$(BUILD_KIND)"'

# The RCU algorithm's own file (synch/rcu_arcu.c or synch/rcu_podzimek.c, over
# the shared synch/rcu.c): RCU_SRC_$(RCU) of kernel/generic/src/Makefile.inc.
ifeq ($(RCU),a-rcu)
CFLAGS += -DCONFIG_RCU_A_RCU
else ifeq ($(RCU),podzimek-rcu)
CFLAGS += -DCONFIG_RCU_PODZIMEK
else
$(error RCU must be a-rcu or podzimek-rcu)
endif
CFLAGS += -DCONFIG_RCU_NAME='"$(RCU)"'
# BROKEN=: the negative controls (fault points, reverted-defect patches).
include tests/controls/controls.mk
ifeq ($(LOCK_STAT),1)
CFLAGS += -DCONFIG_LOCK_STAT
LOCKSTAT_NAME := -lockstat
endif
ifeq ($(DEBUG)$(LOCKDEP),11)
CFLAGS += -DCONFIG_LOCKDEP
LOCKDEP_NAME := -lockdep
endif
# SANITIZE=kcsan: every kernel C file except SAN_EXCLUDE is compiled with
# GCC's ThreadSanitizer instrumentation as Linux's KCSAN does with GCC: a
# __tsan_{read,write}N/_range call before each plain access, volatile accesses
# told apart (__tsan_volatile_*), no function entry/exit calls; the __atomic
# builtins become __tsan_atomic* calls, which debug/kcsan.c performs (GCC has
# no parameter to leave them alone), __atomic_thread_fence too (-Wno-tsan:
# GCC warns that user-space TSan cannot model a fence; the call is the fence).
# Not instrumented (each fragment's *_SAN_EXCLUDE_kcsan): the runtime, what
# prints its report (console, printf, the UARTs, symtab, panic), lib/str.c
# (memset, memcpy and memmove check their whole range once,
# kcsan_check_*()) and the architecture's code (boot, entry and exception
# paths, the per-CPU base).
SANITIZE ?=
ifeq ($(SANITIZE),kcsan)
CFLAGS += -DCONFIG_KCSAN
KCSAN_CFLAGS := -fsanitize=thread --param tsan-distinguish-volatile=1 \
	--param tsan-instrument-func-entry-exit=0 -Wno-tsan
endif
ifeq ($(TESTS),1)
CFLAGS += -DCONFIG_TEST
else ifeq ($(TESTS),0)
NOTESTS_NAME := -notests
else
$(error TESTS must be 0 or 1)
endif
# Sanitizers (SANITIZE=; docs/SANITIZERS.md). SAN_CFLAGS instrument every
# kernel C file except those in SAN_EXCLUDE (the runtimes, and code that runs
# before the shadow exists or handles free memory itself). Each directory's
# Makefile.inc lists its part: *_SAN_SRC_<name> (the runtimes, added to the
# kernel's sources) and *_SAN_EXCLUDE_<name>; SAN_EXCLUDE is read below.
SANITIZE ?=
SAN_CFLAGS :=
ifeq ($(SANITIZE),kasan)
# The shadow of address a is at (a >> 3) + KASAN_SHADOW_OFFSET
# (-fasan-shadow-offset), per architecture: amd64's kernel half has its
# shadow in [0xffffec0000000000, 0xfffffc0000000000) (PML4 slots 472-503);
# arm64's upper half (48 bits) in [0xffff600000000000, 0xffff800000000000),
# right below the direct map (each kasan_shadow.c says why).
KASAN_SHADOW_OFFSET_amd64 := 0xdffffc0000000000
KASAN_SHADOW_OFFSET_arm64 := 0xdfff800000000000
KASAN_SHADOW_OFFSET := $(KASAN_SHADOW_OFFSET_$(ARCH))
# Inline checks (the shadow of every kernel-half address is mapped: zero
# where nothing is tracked), stack and global redzones. KASAN_OUTLINE=1: a
# call per access instead (smaller code, about twice the instructions).
KASAN_OUTLINE ?= 0
SAN_CFLAGS := -fsanitize=kernel-address -fasan-shadow-offset=$(KASAN_SHADOW_OFFSET) \
	--param asan-globals=1 --param asan-stack=1 \
	--param asan-instrumentation-with-call-threshold=$(if $(filter 1,$(KASAN_OUTLINE)),0,10000)
CFLAGS += -DCONFIG_SANITIZE -DCONFIG_KASAN -DKASAN_SHADOW_OFFSET=$(KASAN_SHADOW_OFFSET)UL
else ifeq ($(SANITIZE),ubsan)
SAN_CFLAGS := -fsanitize=shift,integer-divide-by-zero,unreachable,vla-bound,null \
	-fsanitize=signed-integer-overflow,bounds,alignment,object-size,bool,enum \
	-fsanitize=nonnull-attribute,returns-nonnull-attribute,pointer-overflow,builtin
CFLAGS += -DCONFIG_SANITIZE -DCONFIG_UBSAN
else ifneq ($(filter-out kcsan,$(SANITIZE)),)
$(error SANITIZE must be kasan, ubsan, kcsan or empty)
endif
SAN_NAME := $(if $(SANITIZE),-$(SANITIZE))$(if $(filter kasan,$(SANITIZE)),$(if $(filter 1,$(KASAN_OUTLINE)),-outline))
# The sanitizer flags of one source file $(1).
san_flags = $(if $(filter $(SAN_EXCLUDE),$(1)),,$(SAN_CFLAGS))
# The page hash table's design has its own file (genarch/src/mm/page_ht_cht.c
# or page_ht_locked.c, over the shared page_ht_impl.h), as RCU's algorithm:
# PAGE_HT_SRC_$(PAGE_HT) of kernel/genarch/src/Makefile.inc.
ifeq ($(PAGE_HT),cht)
CFLAGS += -DCONFIG_PAGE_HT_CHT
else ifeq ($(PAGE_HT),locked)
CFLAGS += -DCONFIG_PAGE_HT_LOCKED
else
$(error PAGE_HT must be cht or locked)
endif
# The OS's user programs (ELF64, ring 3): uspace/app/NAME/*.c linked with
# uspace/lib/c into $(BUILD)/programs/NAME, booted as multiboot modules
# (-initrd for -kernel boots, GRUB module lines in the ISO). The Linux build
# of libcht (make -C uspace) does not look at these directories. Each
# program's directory has a Makefile.inc that adds its name to USPACE_APPS
# (and to USPACE_CHT_APPS if it uses the CHT, see below): a directory of
# uspace/app without one (example: libcht's Linux example) is not an OS
# program. In the order of their names.
# A Makefile.inc may set USPACE_SRCS_NAME (the program's sources, default
# its directory's *.c) and add NAME to USPACE_CHT_NOWAIT_APPS instead (linked
# with libcht-nowait.a, the fault-injection build of libcht's RCU: a negative
# control, uspace/app/chtnowait).
USPACE_APPS :=
USPACE_CHT_APPS :=
USPACE_CHT_NOWAIT_APPS :=
include $(sort $(wildcard uspace/app/*/Makefile.inc))
uapp_srcs = $(or $(USPACE_SRCS_$(1)),$(wildcard uspace/app/$(1)/*.c))
ULIBC := uspace/lib/c
ifeq ($(ARCH),arm64)
UARCH_CFLAGS := -march=armv8-a -mgeneral-regs-only -mno-outline-atomics
UCRT0 := crt0-arm64.S
else
UARCH_CFLAGS := -mno-sse -mno-sse2 -mno-mmx -mno-3dnow -mno-avx -msoft-float
UCRT0 := crt0.S
endif
UCFLAGS := -std=gnu11 -ffreestanding -nostdinc -fno-builtin -fno-pic -fno-pie \
	-fno-stack-protector $(UARCH_CFLAGS) -fno-asynchronous-unwind-tables -fno-omit-frame-pointer \
	-O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	-I$(ULIBC)/include -I$(COMMON_DIR)/include
ULDFLAGS := -nostdlib -static -z max-page-size=0x1000 \
	-z noexecstack --no-warn-rwx-segments
# printf_core.c is the kernel's own formatter, compiled again for user space.
ULIBC_SRC := $(ULIBC)/src/$(UCRT0) $(ULIBC)/src/libc.c $(ULIBC)/src/thread.c \
	$(COMMON_DIR)/print/printf_core.c
ULIBC_OBJS := $(patsubst %,$(BUILD)/os/%.o,$(ULIBC_SRC))
# The OS's libcht: the shared common/adt/cht.c again, over the third environment
# (uspace/lib/cht/osenv/adt/cht_env_os.h, named by CHT_ENV_HEADER) and libcht's
# user RCU built for lib/c (CHT_OS_BUILD, see uspace/lib/cht_rcu). Programs
# listed in USPACE_CHT_APPS (by their Makefile.inc) are compiled with the
# same include path and linked with $(BUILD)/os/libcht.a.
UCHT_FLAGS := -DCHT_OS_BUILD -DCHT_ENV_HEADER='"adt/cht_env_os.h"' \
	-Iuspace/lib/cht/osenv -Iuspace/lib/cht_rcu/include \
	$(if $(filter 0,$(DEBUG)),-DCHT_NDEBUG)
ULIBCHT_SRC := $(COMMON_DIR)/adt/cht.c uspace/lib/cht/src/cht_env.c \
	uspace/lib/cht_rcu/src/rcu.c
ULIBCHT_OBJS := $(patsubst %,$(BUILD)/os/%.o,$(ULIBCHT_SRC))
# libcht-nowait.a: the same objects but rcu.c, compiled again with
# CHT_RCU_FI_NO_WAIT configured (bit 0 of CHT_RCU_FAULT_INJECT).
ULIBCHT_NOWAIT_RCU := $(BUILD)/os/nowait/uspace/lib/cht_rcu/src/rcu.c.o
ULIBCHT_NOWAIT_OBJS := $(filter-out %/rcu.c.o,$(ULIBCHT_OBJS)) \
	$(ULIBCHT_NOWAIT_RCU)
UCHT_APP_OBJS := $(foreach a,$(USPACE_CHT_APPS) $(USPACE_CHT_NOWAIT_APPS),\
	$(patsubst %,$(BUILD)/os/%.o,$(call uapp_srcs,$(a))))
$(ULIBCHT_OBJS) $(UCHT_APP_OBJS) $(ULIBCHT_NOWAIT_RCU): \
	UCFLAGS_PRE := $(UCHT_FLAGS)
# On arm64 the same programs are linked into the kernel image
# ($(BUILD)/progimage.S, arch_boot_memory() registers them); attack has one
# source per architecture (attack.c, attack_arm64.c).
PROGRAMS := $(patsubst %,$(BUILD)/programs/%,$(USPACE_APPS))
UDEPS := $(ULIBC_OBJS:.o=.d) $(ULIBCHT_OBJS:.o=.d) $(ULIBCHT_NOWAIT_RCU:.o=.d) \
	$(foreach a,$(USPACE_APPS),\
	$(patsubst %,$(BUILD)/os/%.d,$(call uapp_srcs,$(a))))

CONFIG_NAME := $(BUILD_KIND)-$(RCU)-broken-$(BROKEN_NAME)-page_ht$(PAGE_HT)$(LOCKSTAT_NAME)$(LOCKDEP_NAME)$(NOTESTS_NAME)$(SAN_NAME)

ASFLAGS := $(filter-out -std=gnu11,$(CFLAGS)) -D__ASSEMBLY__
LDFLAGS := -nostdlib -z max-page-size=0x1000 -z noexecstack --no-warn-rwx-segments \
	-T $(ARCH_DIR)/_link.ld

# The kernel's sources: each component lists its own, in link order, in a
# Makefile.inc of its directory (a file not listed is not built;
# tests/test_tree.py checks that every kernel source is listed), with paths
# relative to that directory:
#   kernel/arch/ARCH/src/Makefile.inc  ARCH_SRC_ARCH (every architecture's
#                                      fragment is read, for list-sources)
#   kernel/genarch/src/Makefile.inc    GENARCH_SRC_ARCH (the platform drivers
#                                      each architecture uses, the page hash
#                                      table, PAGE_HT_SRC_<PAGE_HT>)
#   kernel/generic/src/Makefile.inc    GENERIC_SRC, GENERIC_TEST_SRC (TESTS=1),
#                                      RCU_SRC_<RCU>
#   kernel/test/Makefile.inc           TEST_SRC (TESTS=1)
#   common/Makefile.inc                COMMON_SRC, COMMON_TEST_SRC (TESTS=1)
# and for SANITIZE=<name>: ARCH_SAN_SRC_ARCH_<name>, GENERIC_SAN_SRC_<name>
# (the runtimes) and each directory's *_SAN_EXCLUDE_<name>.
ARCHES := $(sort $(patsubst kernel/arch/%/src/Makefile.inc,%,$(wildcard \
	kernel/arch/*/src/Makefile.inc)))
include $(foreach a,$(ARCHES),kernel/arch/$(a)/src/Makefile.inc)
include $(GENARCH_DIR)/src/Makefile.inc $(GENERIC_DIR)/src/Makefile.inc \
	$(TEST_DIR)/Makefile.inc $(COMMON_DIR)/Makefile.inc
ARCH_SRC := $(ARCH_SRC_$(ARCH)) $(ARCH_SAN_SRC_$(ARCH)_$(SANITIZE))
GENERIC_SRC += $(GENERIC_SAN_SRC_$(SANITIZE))
# The files compiled without SANITIZE='s instrumentation, each directory's
# *_SAN_EXCLUDE_$(SANITIZE).
SAN_EXCLUDE := $(addprefix $(ARCH_DIR)/src/,$(ARCH_SAN_EXCLUDE_$(ARCH)_$(SANITIZE))) \
	$(addprefix $(COMMON_DIR)/,$(COMMON_SAN_EXCLUDE_$(SANITIZE))) \
	$(addprefix $(GENARCH_DIR)/src/,$(GENARCH_SAN_EXCLUDE_$(SANITIZE))) \
	$(addprefix $(GENERIC_DIR)/src/,$(GENERIC_SAN_EXCLUDE_$(SANITIZE))) \
	$(addprefix $(TEST_DIR)/,$(TEST_SAN_EXCLUDE_$(SANITIZE)))
GENARCH_SRC := $(GENARCH_SRC_$(ARCH))
KERNEL_SRC := $(addprefix $(ARCH_DIR)/src/,$(ARCH_SRC)) \
	$(addprefix $(COMMON_DIR)/,$(COMMON_SRC)) \
	$(addprefix $(GENARCH_DIR)/src/,$(GENARCH_SRC)) \
	$(addprefix $(GENERIC_DIR)/src/,$(GENERIC_SRC))
ifeq ($(TESTS),1)
KERNEL_SRC += $(addprefix $(GENERIC_DIR)/src/,$(GENERIC_TEST_SRC)) \
	$(addprefix $(TEST_DIR)/,$(TEST_SRC)) \
	$(addprefix $(COMMON_DIR)/,$(COMMON_TEST_SRC))
endif
OBJS := $(patsubst %,$(BUILD)/obj/%.o,$(basename $(KERNEL_SRC)))
# The kernel's C files, what make check reads (tests/test_sparse.py checks a
# scratch file with make check-one SRC_C=FILE).
SRC_C := $(filter %.c,$(KERNEL_SRC))
ifeq ($(ARCH),arm64)
# The user programs inside the image: a table of (start, end, name) and
# each file by .incbin (page aligned), after the kernel's own objects.
PROGIMAGE_OBJ := $(BUILD)/progimage.o
endif
DEPS := $(OBJS:.o=.d)
ifeq ($(SANITIZE),kcsan)
$(patsubst %,$(BUILD)/obj/%.o,$(basename $(filter-out $(SAN_EXCLUDE),$(SRC_C)))): \
	CFLAGS += $(KCSAN_CFLAGS)
endif

# The build configuration is part of every object's inputs: switching DEBUG,
# RCU, PAGE_HT, BROKEN, LOCK_STAT, LOCKDEP or TESTS rebuilds everything.
CONFIG_STAMP := $(BUILD)/config.$(CONFIG_NAME).stamp

.PHONY: all kernel programs iso run run-iso test soak flavours controls arm64 clean deps \
	sanitizers sanitizers-soak kcsan kcsan-soak \
	check check-one verify verify-mutants help bench bench-quick bench-cost bench-goals bench-deps \
	memcached memcached-test memcached-bench plugin bench-sharing list-sources print-%

ifeq ($(ARCH),arm64)
all: kernel
# The ISO is a GRUB PC image (multiboot, isa-debug-exit): amd64 only.
ifneq ($(filter iso run-iso,$(MAKECMDGOALS)),)
$(error iso and run-iso are amd64-only (a GRUB PC ISO); on arm64 use make run ARCH=arm64)
endif
else
all: kernel iso ## (default) build/kernel.elf, the user programs and build/image.iso
endif

# Every target with a `## ` comment on its rule line is listed by `make help`,
# in the order of this file with the .mk fragments it includes in place
# (bench/bench.mk ...), then tests/controls/controls.mk's.
help: ## this list
	@echo "make [TARGET ...] [DEBUG=0|1] [RCU=...] [PAGE_HT=...] [TESTS=0|1] [BROKEN=...]"
	@echo "(variables: the comment at the top of the Makefile)"
	@awk '/^include [a-z\/]+\.mk$$/ && $$2 != "tests/controls/controls.mk" \
		{ while ((getline l < $$2) > 0) print l; next } { print }' \
		$(firstword $(MAKEFILE_LIST)) | cat - tests/controls/controls.mk | \
		grep -hE '^[a-z][a-zA-Z0-9_%-]*:.*## ' | \
		sed -E 's/^([a-zA-Z0-9_%-]+):.*## (.*)$$/\1\t\2/' | \
		awk -F'\t' '{ printf "  %-18s %s\n", $$1, $$2 }'

kernel: $(BUILD)/kernel.elf $(PROGRAMS) ## the kernel and the user programs, no ISO

programs: $(PROGRAMS) ## the user programs (uspace/app) only

$(BUILD)/os/%.c.o: %.c
	@mkdir -p $(dir $@)
	@echo "  UCC     $<"
	@$(CC) $(UCFLAGS_PRE) $(UCFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/os/%.S.o: %.S
	@mkdir -p $(dir $@)
	@echo "  UAS     $<"
	@$(CC) $(UCFLAGS) -D__ASSEMBLY__ -MMD -MP -c $< -o $@

$(BUILD)/os/libc.a: $(ULIBC_OBJS)
	@rm -f $@
	@$(CROSS_COMPILE)ar rcs $@ $^

$(BUILD)/os/libcht.a: $(ULIBCHT_OBJS)
	@rm -f $@
	@$(CROSS_COMPILE)ar rcs $@ $^

$(ULIBCHT_NOWAIT_RCU): uspace/lib/cht_rcu/src/rcu.c
	@mkdir -p $(dir $@)
	@echo "  UCC     $< [CHT_RCU_FI_NO_WAIT]"
	@$(CC) $(UCFLAGS_PRE) $(UCFLAGS) -DCHT_RCU_FAULT_INJECT=1u -MMD -MP -c $< -o $@

$(BUILD)/os/libcht-nowait.a: $(ULIBCHT_NOWAIT_OBJS)
	@rm -f $@
	@$(CROSS_COMPILE)ar rcs $@ $^

# A program's link script: an app.ld in its own directory if it has one
# (uspace/app/bigbss/app.ld: a deliberately malformed program), else lib/c's
# user.ld.
UAPP_LD = $(firstword $(wildcard uspace/app/$(1)/app.ld) $(ULIBC)/user.ld)
define USPACE_APP_RULE
$(BUILD)/programs/$(1): $(patsubst %,$(BUILD)/os/%.o,$(call uapp_srcs,$(1))) \
		$(if $(filter $(1),$(USPACE_CHT_APPS)),$(BUILD)/os/libcht.a) \
		$(if $(filter $(1),$(USPACE_CHT_NOWAIT_APPS)),$(BUILD)/os/libcht-nowait.a) \
		$(BUILD)/os/libc.a $(call UAPP_LD,$(1))
	@mkdir -p $$(dir $$@)
	@echo "  ULD     $$@"
	@$(LD) $(ULDFLAGS) -T $(call UAPP_LD,$(1)) -o $$@ $$(filter %.o,$$^) \
		$$(filter %/libcht.a %/libcht-nowait.a,$$^) $(BUILD)/os/libc.a
endef
$(foreach a,$(USPACE_APPS),$(eval $(call USPACE_APP_RULE,$(a))))

iso: $(BUILD)/image.iso ## the GRUB ISO (amd64 only)

$(CONFIG_STAMP):
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/config.*.stamp
	@touch $@

$(BUILD)/obj/%.o: %.c $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) $(call san_flags,$<) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: %.S $(CONFIG_STAMP)
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(CC) $(ASFLAGS) -MMD -MP -c $< -o $@

# arm64: the programs as one assembly file of .incbin blobs and a name table.
$(BUILD)/progimage.S: $(PROGRAMS) Makefile
	@mkdir -p $(BUILD)
	@{ echo '	.section .rodata.programs, "a"'; echo '	.balign 8'; \
	  echo '	.global arm64_programs'; echo 'arm64_programs:'; \
	  for p in $(USPACE_APPS); do echo "	.quad prog_$${p}_start, prog_$${p}_end, prog_$${p}_name"; done; \
	  echo '	.quad 0, 0, 0'; \
	  for p in $(USPACE_APPS); do echo "prog_$${p}_name: .asciz \"$$p\""; \
	    echo '	.balign 4096'; echo "prog_$${p}_start: .incbin \"$(BUILD)/programs/$$p\""; \
	    echo "prog_$${p}_end:"; done; } > $@

$(BUILD)/progimage.o: $(BUILD)/progimage.S
	@$(CC) $(ASFLAGS) -c $< -o $@

# Two-pass link: pass 1 without symbols gives the addresses, the symbol table is
# generated from it and placed after all code, so code addresses do not move.
$(BUILD)/kernel.pass1.elf: $(OBJS) $(PROGIMAGE_OBJ) $(BUILD)/ksyms.empty.o $(ARCH_DIR)/_link.ld
	@echo "  LD      $@"
	@$(LD) $(LDFLAGS) -o $@ $(OBJS) $(PROGIMAGE_OBJ) $(BUILD)/ksyms.empty.o

$(BUILD)/ksyms.empty.S: tools/gensyms.py
	@mkdir -p $(BUILD)
	@$(PYTHON) tools/gensyms.py --empty -o $@

$(BUILD)/ksyms.S: $(BUILD)/kernel.pass1.elf tools/gensyms.py
	@echo "  SYMS    $@"
	@$(NM) -n $< | $(PYTHON) tools/gensyms.py -o $@

$(BUILD)/ksyms.empty.o: $(BUILD)/ksyms.empty.S
	@$(CC) $(ASFLAGS) -c $< -o $@

$(BUILD)/ksyms.o: $(BUILD)/ksyms.S
	@$(CC) $(ASFLAGS) -c $< -o $@

$(BUILD)/kernel.elf: $(OBJS) $(PROGIMAGE_OBJ) $(BUILD)/ksyms.o $(ARCH_DIR)/_link.ld tools/check_image.py
	@echo "  LD      $@"
	@$(LD) $(LDFLAGS) -o $@ $(OBJS) $(PROGIMAGE_OBJ) $(BUILD)/ksyms.o
	@$(NM) -n $@ | $(PYTHON) tools/gensyms.py --compare $(BUILD)/ksyms.S
	@$(if $(filter amd64,$(ARCH)),$(PYTHON) tools/check_image.py $@,true)

# grub.cfg gets one `module` line per program after the multiboot line.
$(BUILD)/image.iso: $(BUILD)/kernel.elf $(PROGRAMS) boot/grub.cfg
	@echo "  ISO     $@"
	@command -v grub-mkrescue >/dev/null 2>&1 || PYTHON=$(PYTHON) bash tools/ensure-deps.sh test
	@rm -rf $(BUILD)/iso && mkdir -p $(BUILD)/iso/boot/grub $(BUILD)/iso/boot/programs
	@cp $(BUILD)/kernel.elf $(BUILD)/iso/boot/kernel.elf
	@cp $(PROGRAMS) $(BUILD)/iso/boot/programs/
	@awk '{ print } /^[ \t]*multiboot / { n = split("$(USPACE_APPS)", a, " "); \
		for (i = 1; i <= n; i++) printf "\tmodule /boot/programs/%s %s\n", a[i], a[i] }' \
		boot/grub.cfg > $(BUILD)/iso/boot/grub/grub.cfg
	@grub-mkrescue -o $@ $(BUILD)/iso >$(BUILD)/grub-mkrescue.log 2>&1 || \
		{ cat $(BUILD)/grub-mkrescue.log; exit 1; }

# Every kernel source the fragments name (both RCU algorithms, both page
# hash designs and the sanitizer runtimes), one per line (tests/test_tree.py
# compares the lists of TESTS=1 with the tree).
list-sources: ## the kernel's source files, one per line (every architecture)
	@printf '%s\n' $(sort $(KERNEL_SRC) $(addprefix $(GENERIC_DIR)/src/,$(foreach \
		v,$(filter RCU_SRC_%,$(.VARIABLES)),$($(v)))) $(addprefix \
		$(GENARCH_DIR)/src/,$(foreach v,$(filter PAGE_HT_SRC_%,$(.VARIABLES)),$($(v)))) \
		$(foreach a,$(ARCHES),$(addprefix kernel/arch/$(a)/src/,$(ARCH_SRC_$(a))) \
		$(addprefix $(GENARCH_DIR)/src/,$(GENARCH_SRC_$(a)))) \
		$(addprefix $(GENERIC_DIR)/src/,$(foreach v,$(filter GENERIC_SAN_SRC_%, \
		$(.VARIABLES)),$($(v)))) $(foreach a,$(ARCHES),$(addprefix \
		kernel/arch/$(a)/src/,$(foreach v,$(filter ARCH_SAN_SRC_$(a)_%, \
		$(.VARIABLES)),$($(v))))))

deps: ## install what building and testing need (QEMU, GRUB, pexpect ...)
	@PYTHON=$(PYTHON) bash tools/ensure-deps.sh test

# The value of a variable (make print-UCFLAGS), for tests/test_tree.py.
print-%: ## print-VAR: the value of a Makefile variable
	@echo '$($*)'

# -serial mon:stdio: the console on this terminal; Ctrl-A X quits QEMU.
# -cpu max: the CPU model with SMEP and SMAP (the default qemu64 has neither),
# so that a hand-run kernel enforces them as the tests' boots do.
QEMU_FLAGS := -accel tcg,thread=multi -cpu max -smp $(SMP) -m $(MEM) -display none \
	-serial mon:stdio -no-reboot \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04

# The programs go in as multiboot modules (-initrd, comma-separated).
comma_list = $(subst $(space),$(comma),$(strip $(1)))
ifeq ($(ARCH),arm64)
# QEMU's virt board, Cortex-A72, entered at EL1 (no EL2/EL3: PSCI by HVC...
# QEMU's virt then implements PSCI itself and the DT names the conduit).
run: deps all
	@echo "Booting arm64 with $(SMP) CPUs; type 'help' at kconsole>, 'halt' to quit."
	@$(QEMU) -M virt -cpu cortex-a72 -smp $(SMP) -m $(MEM) -nographic \
		-no-reboot -kernel $(BUILD)/kernel.elf
else
run: deps all ## boot into kconsole on this terminal, SMP=4, ARCH=arm64 too (quit: Ctrl-A X)
	@echo "Booting with $(SMP) CPUs; type 'help' at kconsole>, 'halt' to quit."
	@$(QEMU) -kernel $(BUILD)/kernel.elf -initrd "$(call comma_list,$(PROGRAMS))" \
		$(QEMU_FLAGS) || [ $$? -eq 33 ]
endif

run-iso: deps all ## the same, booting the ISO (amd64 only)
	@$(QEMU) -cdrom $(BUILD)/image.iso $(QEMU_FLAGS) || [ $$? -eq 33 ]

# Each configuration below is NAME:VAR=VALUE,... built into build/NAME over the
# defaults RCU=a-rcu PAGE_HT=cht and no BROKEN= knob. The configurations the
# tests boot besides the negative controls (FLAVOUR_CONFIGS,
# ARM64_FLAVOUR_CONFIGS, ARM64_SOAK_CONFIGS) are listed in tests/configs.mk.
include tests/configs.mk
# $(call build_configs,CONFIGS): one sub-make per configuration, in order
# (`+`: a recursive make, which shares the jobserver of -jN),
# stopping at the first that fails.
config_name = $(word 1,$(subst :, ,$(1)))
config_vars = $(subst $(comma), ,$(word 2,$(subst :, ,$(1))))
# $(call build_configs_sh,CONFIGS,VARS): the same as shell commands, each
# sub-make given VARS too (ARCH=arm64 for ARM64_CONFIGS).
define build_configs
	+@set -e; $(call build_configs_sh,$(1))
endef
build_configs_sh = $(foreach c,$(1),$(MAKE) --no-print-directory $(2) \
		BUILD=build/$(call config_name,$(c)) RCU=a-rcu RCU_BROKEN=0 BROKEN= \
		PAGE_HT=cht SANITIZE= $(call config_vars,$(c)) kernel;)

# The other configurations the harness boots: the Podzimek flavour, the locked
# page hash table, the release builds (DEBUG=0: -O2, asserts off) with the
# CHT and with the locked page hash table (tests/test_cost.py compares them)
# and the lock statistics build (LOCK_STAT=1, tests/test_lockstat.py).
flavours: ## the other configurations the tests boot (build/podzimek ...)
	$(call build_configs,$(FLAVOUR_CONFIGS))

# The sanitizer kernels (docs/SANITIZERS.md): SANITIZER_CONFIGS,
# ARM64_SANITIZER_CONFIGS (ARCH=arm64, built when the cross compiler is there,
# as make arm64), SANITIZER_SOAK_CONFIGS and ARM64_SANITIZER_SOAK_CONFIGS in
# tests/configs.mk.
sanitizers: ## the KASAN and UBSAN kernels make test boots (build/debug-kasan, build/debug-ubsan, build/arm64-kasan, build/arm64-ubsan)
	$(call build_configs,$(SANITIZER_CONFIGS))
	$(call build_arm64_configs,$(ARM64_SANITIZER_CONFIGS))

sanitizers-soak: ## the Podzimek (locked page hash) KASAN and UBSAN kernels make soak boots, amd64 and arm64
	$(call build_configs,$(SANITIZER_SOAK_CONFIGS))
	$(call build_arm64_configs,$(ARM64_SANITIZER_SOAK_CONFIGS))

# The arm64 configurations (ARM64_CONFIGS and ARM64_SOAK_CONFIGS in
# tests/configs.mk), built with ARCH=arm64 into build/NAME. Skipped with a
# message when the cross compiler is missing (the tests then skip too).
# ARM64_CONTROL_CONFIGS: every other BROKEN= knob (make arm64-controls;
# tests/controls/controls.mk, not booted by the tests). The release builds
# make bench-cost ARCH=arm64 measures are its own (build/bench-arm64-*).
ARM64_CC := aarch64-linux-gnu-gcc
define build_arm64_configs
	+@if ! command -v $(ARM64_CC) >/dev/null 2>&1; then \
		echo "arm64: $(ARM64_CC) missing (apt-get install gcc-aarch64-linux-gnu): not built"; \
	else \
		set -e; $(call build_configs_sh,$(1),ARCH=arm64) \
	fi
endef
arm64: ## the arm64 kernels make test boots (A-RCU, Podzimek, locked page hash, release, BROKEN=rcu, BROKEN=shootdown)
	$(call build_arm64_configs,$(ARM64_CONFIGS))

arm64-soak: ## the arm64 kernels only make soak boots (Podzimek over the locked page hash)
	$(call build_arm64_configs,$(ARM64_SOAK_CONFIGS))

# KCSAN (SANITIZE=kcsan, docs/SANITIZERS_KCSAN.md): the KCSAN_* lists in
# tests/configs.mk.
kcsan: ## the KCSAN kernels make test boots (build/kcsan, build/arm64-kcsan)
	$(call build_configs,$(KCSAN_CONFIGS))
	$(call build_arm64_configs,$(ARM64_KCSAN_CONFIGS))

kcsan-soak: kcsan ## and the Podzimek KCSAN kernels make soak boots
	$(call build_configs,$(KCSAN_SOAK_CONFIGS))
	$(call build_arm64_configs,$(ARM64_KCSAN_SOAK_CONFIGS))

# make test builds its prerequisites with one job per CPU unless the command
# line already gave -j (the builds are a quarter of make test's time on 2 CPUs:
# about 4.5 minutes one job at a time), then runs pytest.
NPROC := $(shell nproc 2>/dev/null || echo 1)
TEST_JOBS := $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))

# pytest in two runs: first the tests that may share the CPUs (marked
# `concurrent` by tests/conftest.py: host-only tests, -smp 1 boots, a few
# boots that need no interleaving) two at a time under pytest-xdist
# (--dist loadgroup: one boot's steps, or one module's builds, on one
# worker), then the others one at a time (the -smp 2 and 4 boots, whose race
# tests need the vCPUs to interleave, the negative controls, the sharing
# counts). Both runs always run; make test fails if either failed. One run
# at a time without pytest-xdist or on one CPU.
PYTEST_FLAGS := -v -rs --tb=short --durations=25
TEST_XDIST := $(if $(filter 1,$(NPROC)),true,$(PYTHON) -c 'import xdist' \
	>/dev/null 2>&1 && echo '-n 2 --dist loadgroup')
TEST_PATHS := tests/ bench/test_bench.py

test: deps ## build everything and run every test (pytest in tests/)
	+@$(MAKE) --no-print-directory $(TEST_JOBS) all flavours controls plugin arm64 \
		sanitizers kcsan
	@PYTHON=$(PYTHON) bash tools/ensure-deps.sh test-user
	@rc=0; xdist=$$($(TEST_XDIST)); \
	KTEST_NO_BUILD=1 KTEST_RCU=$(RCU) $(PYTHON) -m pytest $(PYTEST_FLAGS) \
		$$xdist -m concurrent $(TEST_PATHS) || rc=1; \
	KTEST_NO_BUILD=1 KTEST_RCU=$(RCU) $(PYTHON) -m pytest $(PYTEST_FLAGS) \
		-m 'not concurrent' $(TEST_PATHS) || rc=1; \
	exit $$rc

include tools/check.mk

include verify/verify.mk

# Long runs: ten boots per flavour, rcutorture -t 30, single-threaded TCG.
soak: deps all flavours controls arm64 arm64-soak sanitizers sanitizers-soak kcsan-soak ## long runs: many boots, rcutorture -t 30, the arm64 test * matrix
	@KTEST_NO_BUILD=1 KTEST_RCU=$(RCU) KTEST_SOAK=1 $(PYTHON) -m pytest -v -rs \
		--tb=short -m soak tests/

include bench/bench.mk

include contrib/memcached/memcached.mk

clean: ## remove build/ (or the BUILD= directory)
	rm -rf $(BUILD)

-include $(DEPS) $(UDEPS)
