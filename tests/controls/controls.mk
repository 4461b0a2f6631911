# The negative controls (docs/CONTROLS.md): builds in which a test must FAIL.
# Included by the top Makefile where it sets up BROKEN=.
#
#   BROKEN=KNOB[,KNOB...]  select controls (`+` separates them too, for the
#                          NAME:VAR=VALUE,... lists); each KNOB is one of
#     - a fault-injection point (FAULT_POINTS below): compiled in with
#       -DCONFIG_FAULT_INJECT=<mask> (debug/fault_inject.h: fault_inject());
#       any target builds it in place (make BROKEN=rcu kernel);
#     - a reverted defect, tests/controls/KNOB.patch: a fix undone. Only
#       `make control BROKEN=KNOB BUILD=DIR` builds it: it copies the working
#       tree (committed or not) to build/controls/<DIR's name>/, applies the
#       patch there and builds that copy into DIR (tests/controls/build.sh).
#   RCU_BROKEN=1           the same as BROKEN=rcu (kept as an alias)
#
# make controls builds every control into build/<NAME> (CONTROL_CONFIGS),
# make arm64-controls the arm64 ones (build/arm64-<NAME>); the tests that
# require each to fail are tests/test_controls.py, test_rcu.py,
# test_arm64.py, test_sharing.py, test_fuzz.py and test_tasks.py; a patch
# that no longer applies fails tests/test_control_patches.py and make
# controls.

comma := ,
empty :=
space := $(empty) $(empty)
upper = $(shell echo '$(1)' | tr a-z A-Z)

# KNOB:POINT of every fault-injection point, in the order of the FI_* enum
# of debug/fault_inject.h (bit i of CONFIG_FAULT_INJECT is the i-th;
# tests/test_control_patches.py checks both lists agree).
FAULT_POINTS := rcu:FI_RCU_NOWAIT shootdown:FI_TLB_SHOOTDOWN \
	smpcall:FI_SMPCALL_DROP workq:FI_WORKQ_DROP \
	sharedcount:FI_CHT_SHAREDCOUNT asid:FI_ASID_REUSE
FAULT_KNOBS := $(foreach p,$(FAULT_POINTS),$(word 1,$(subst :, ,$(p))))
# Every reverted defect: one patch each.
CONTROL_PATCHES := $(sort $(basename $(notdir $(wildcard tests/controls/*.patch))))
BROKEN_KNOBS := $(FAULT_KNOBS) $(CONTROL_PATCHES)

BROKEN_LIST := $(sort $(subst +, ,$(subst $(comma), ,$(BROKEN))) \
	$(if $(filter 1,$(RCU_BROKEN)),rcu))
ifneq ($(filter-out $(BROKEN_KNOBS),$(BROKEN_LIST)),)
$(error BROKEN: unknown knob(s) $(filter-out $(BROKEN_KNOBS),$(BROKEN_LIST)); \
	known: $(BROKEN_KNOBS))
endif
BROKEN_FAULTS := $(filter $(FAULT_KNOBS),$(BROKEN_LIST))
BROKEN_PATCHES := $(filter $(CONTROL_PATCHES),$(BROKEN_LIST))
ifneq ($(BROKEN_PATCHES),)
ifneq ($(filter-out control,$(or $(MAKECMDGOALS),all)),)
$(error BROKEN=$(subst $(space),$(comma),$(BROKEN_PATCHES)): a reverted defect \
	(tests/controls/*.patch) is built from a patched copy: \
	make control BROKEN=$(BROKEN) BUILD=DIR, or make controls)
endif
endif
ifneq ($(BROKEN_FAULTS),)
FAULT_MASK := $(shell m=0; i=0; for k in $(FAULT_KNOBS); do \
	for b in $(BROKEN_FAULTS); do [ $$k = $$b ] && m=$$((m + (1 << i))); \
	done; i=$$((i + 1)); done; echo $$m)
CFLAGS += -DCONFIG_FAULT_INJECT=$(FAULT_MASK)u
endif
BROKEN_NAME := $(if $(BROKEN_LIST),$(subst $(space),+,$(BROKEN_LIST)),none)

# Each control NAME:VAR=VALUE,... built into build/NAME over the defaults
# RCU=a-rcu PAGE_HT=cht (tests/test_controls.py reads build/broken-KNOB).
CONTROL_CONFIGS := rcu-broken:BROKEN=rcu \
	podzimek-broken:RCU=podzimek-rcu,BROKEN=rcu \
	broken-shootdown:BROKEN=shootdown broken-smpcall:BROKEN=smpcall \
	broken-workq:BROKEN=workq broken-sharedcount:DEBUG=0,BROKEN=sharedcount \
	$(foreach k,$(CONTROL_PATCHES),broken-$(k):BROKEN=$(k))
# arm64: every control but those make arm64 builds (ARM64_CONFIGS: the
# broken-RCU ones and shootdown), not booted by the tests.
ARM64_CONTROL_CONFIGS := $(addprefix arm64-,$(filter-out rcu-broken:% \
	podzimek-broken:% broken-shootdown:%,$(CONTROL_CONFIGS)))

control_name = $(word 1,$(subst :, ,$(1)))
control_vars = $(subst $(comma), ,$(word 2,$(subst :, ,$(1))))
# $(call build_controls_sh,CONFIGS,VARS): one `make control` per control.
build_controls_sh = $(foreach c,$(1),$(MAKE) --no-print-directory $(2) \
		BUILD=build/$(call control_name,$(c)) RCU=a-rcu RCU_BROKEN=0 \
		BROKEN= PAGE_HT=cht $(call control_vars,$(c)) control;)

.PHONY: control controls arm64-controls

# One control: BROKEN's patches applied to a copy of the working tree
# (build/controls/<name of BUILD>), built with BROKEN's fault points into
# BUILD; without patches, the kernel built in place.
ifneq ($(BROKEN_PATCHES),)
control: ## one control build: make control BROKEN=KNOB[,...] BUILD=DIR
	+@sh tests/controls/build.sh "$(BUILD)" \
		"$(addprefix tests/controls/,$(addsuffix .patch,$(BROKEN_PATCHES)))" \
		$(MAKE) --no-print-directory ARCH=$(ARCH) DEBUG=$(DEBUG) RCU=$(RCU) \
		PAGE_HT=$(PAGE_HT) LOCK_STAT=$(LOCK_STAT) LOCKDEP=$(LOCKDEP) \
		TESTS=$(TESTS) RCU_BROKEN=0 \
		BROKEN=$(subst $(space),$(comma),$(BROKEN_FAULTS)) kernel
else
control: kernel
endif

controls: ## the negative controls (build/*broken*: fault points and tests/controls/*.patch)
	+@set -e; $(call build_controls_sh,$(CONTROL_CONFIGS))

arm64-controls: ## every other control built for arm64 (build/arm64-broken-*)
	+@if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then \
		echo "arm64: aarch64-linux-gnu-gcc missing (apt-get install gcc-aarch64-linux-gnu): not built"; \
	else \
		set -e; $(call build_controls_sh,$(ARM64_CONTROL_CONFIGS),ARCH=arm64) \
	fi

# sparse (make check) over every fault point at once.
CHECK_FAULT_CONFIG := "RCU=a-rcu PAGE_HT=cht DEBUG=1 BROKEN=$(subst $(space),$(comma),$(FAULT_KNOBS))"
