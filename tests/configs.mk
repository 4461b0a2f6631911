# The build configurations the tests boot besides the default build
# (build/kernel.elf) and the negative controls (CONTROL_CONFIGS in
# tests/controls/controls.mk): NAME:VAR=VALUE,... each, built into build/NAME over the
# defaults RCU=a-rcu PAGE_HT=cht, no BROKEN= knob (the top Makefile includes
# this file), one line each. tests/conftest.py names the kernels it boots (FLAVOUR_KERNELS,
# ARM64_BUILDS; tests/test_arm64.py checks the arm64 lists against it).

# make flavours (amd64): the Podzimek flavour, the locked page hash table,
# the release builds (DEBUG=0: -O2, asserts off) with the CHT and with the
# locked page hash table (tests/test_cost.py compares them), the lock
# statistics build (LOCK_STAT=1, tests/test_lockstat.py).
FLAVOUR_CONFIGS :=
FLAVOUR_CONFIGS += podzimek:RCU=podzimek-rcu
FLAVOUR_CONFIGS += locked:PAGE_HT=locked
FLAVOUR_CONFIGS += release:DEBUG=0
FLAVOUR_CONFIGS += release-locked:DEBUG=0,PAGE_HT=locked
FLAVOUR_CONFIGS += lockstat:LOCK_STAT=1

# make arm64 (ARCH=arm64; with the arm64 negative controls of ARM64_CONFIGS
# below): A-RCU and Podzimek over the CHT, A-RCU over the locked page
# hash table, the release build.
ARM64_FLAVOUR_CONFIGS :=
ARM64_FLAVOUR_CONFIGS += arm64:
ARM64_FLAVOUR_CONFIGS += arm64-podzimek:RCU=podzimek-rcu
ARM64_FLAVOUR_CONFIGS += arm64-locked:PAGE_HT=locked
ARM64_FLAVOUR_CONFIGS += arm64-release:DEBUG=0

# make arm64-soak: only make soak boots them (Podzimek over the locked page
# hash table).
ARM64_SOAK_CONFIGS :=
ARM64_SOAK_CONFIGS += arm64-podzimek-locked:RCU=podzimek-rcu,PAGE_HT=locked

# make arm64: the arm64 kernels make test boots, NAME:VAR=VALUE,... as
# FLAVOUR_CONFIGS, built with ARCH=arm64 into build/NAME: the flavours above
# and the broken-RCU controls and BROKEN=shootdown (the non-broadcast TLBI,
# the control of tlb_shootdown() in mm/as.c) with BROKEN=asid (a released
# ASID reused without invalidation, arm64 only: one boot runs both
# controls' tests). tests/test_arm64.py boots them
# (make test: test * on a few, a short look at locked and release; make soak:
# test * at -smp 1, 2, 4, 8 on the four debug builds).
ARM64_CONFIGS := $(ARM64_FLAVOUR_CONFIGS) \
	arm64-rcu-broken:BROKEN=rcu \
	arm64-podzimek-broken:RCU=podzimek-rcu,BROKEN=rcu \
	arm64-broken-shootdown:BROKEN=shootdown+asid

# make sanitizers / sanitizers-soak: the sanitizer kernels (docs/SANITIZERS.md)
# in build/<config>-<sanitizer>: make test boots debug-kasan and debug-ubsan
# (tests/test_sanitizers.py: a clean subset and the negative controls), make
# soak also the Podzimek ones (test * at -smp 4 under each sanitizer). The
# arm64 ones (ARCH=arm64): build/arm64-kasan and build/arm64-ubsan, booted
# the same way. The soak's Podzimek builds, on both architectures and for
# every sanitizer (KCSAN's below too), run over the locked page hash table:
# with the A-RCU ones over the CHT, two builds per sanitizer and architecture
# cover both RCU flavours and both page-hash back ends.
SANITIZER_CONFIGS := debug-kasan:SANITIZE=kasan debug-ubsan:SANITIZE=ubsan
ARM64_SANITIZER_CONFIGS := arm64-kasan:SANITIZE=kasan arm64-ubsan:SANITIZE=ubsan
SANITIZER_SOAK_CONFIGS := \
	podzimek-locked-kasan:RCU=podzimek-rcu,PAGE_HT=locked,SANITIZE=kasan \
	podzimek-locked-ubsan:RCU=podzimek-rcu,PAGE_HT=locked,SANITIZE=ubsan
ARM64_SANITIZER_SOAK_CONFIGS := \
	arm64-podzimek-locked-kasan:RCU=podzimek-rcu,PAGE_HT=locked,SANITIZE=kasan \
	arm64-podzimek-locked-ubsan:RCU=podzimek-rcu,PAGE_HT=locked,SANITIZE=ubsan

# make kcsan / kcsan-soak (SANITIZE=kcsan, docs/SANITIZERS_KCSAN.md):
# build/kcsan and, when the cross compiler is there, build/arm64-kcsan, which
# tests/test_kcsan.py boots in make test (a short subset and the controls);
# the soak lists: the Podzimek builds too, for make soak's `test *` runs.
KCSAN_CONFIGS := kcsan:SANITIZE=kcsan
ARM64_KCSAN_CONFIGS := arm64-kcsan:SANITIZE=kcsan
KCSAN_SOAK_CONFIGS := \
	kcsan-podzimek-locked:SANITIZE=kcsan,RCU=podzimek-rcu,PAGE_HT=locked
ARM64_KCSAN_SOAK_CONFIGS := \
	arm64-kcsan-podzimek-locked:SANITIZE=kcsan,RCU=podzimek-rcu,PAGE_HT=locked
