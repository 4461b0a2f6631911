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

# make arm64 (ARCH=arm64; with the arm64 negative controls of the Makefile's
# ARM64_CONFIGS): A-RCU and Podzimek over the CHT, A-RCU over the locked page
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
