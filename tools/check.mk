# make check and check-one: the static check with sparse (tools/sparse_check.py).
# Included by the top Makefile at the place of its rules (make help lists them
# there); the Makefile's variables (CFLAGS, ARCH, CONFIG_NAME, PYTHON) and
# CHECK_FAULT_CONFIG (tests/controls/controls.mk) are set above it.

# The static check (make check): sparse over every kernel C file with the
# kernel's flags, in each configuration whose #ifdef'ed code differs (A-RCU
# and Podzimek, the CHT and the locked page hash table, release, lock
# statistics, every fault-injection point). sparse defines __CHECKER__, which gives
# __user and __rcu pointers their own address spaces (compiler.h): any
# dereference of a user pointer outside the uaccess functions, and any access
# to an RCU-protected pointer outside synch/rcu.h's accessors, is reported.
# Fails on any diagnostic (tools/sparse_check.py; tests/test_sparse.py runs
# it in make test). No build needed; a few seconds. The arm64 configurations
# (ARCH=arm64: kernel/arch/arm64 and its headers instead of amd64's) run
# sparse as an AArch64 target (--arch=aarch64: __aarch64__, its type sizes);
# sparse only parses the inline assembly, as for amd64.
SPARSE ?= sparse
SPARSE_FLAGS := $(CFLAGS) -Wcast-to-as $(if $(filter arm64,$(ARCH)),--arch=aarch64)
CHECK_LABEL := $(if $(filter arm64,$(ARCH)),arm64-)$(CONFIG_NAME)
CHECK_CONFIGS := \
	"RCU=a-rcu PAGE_HT=cht DEBUG=1" \
	"RCU=podzimek-rcu PAGE_HT=cht DEBUG=1" \
	"RCU=a-rcu PAGE_HT=locked DEBUG=1" \
	"RCU=podzimek-rcu PAGE_HT=locked DEBUG=0" \
	"RCU=a-rcu PAGE_HT=cht DEBUG=0 LOCK_STAT=1" \
	$(CHECK_FAULT_CONFIG) \
	"ARCH=arm64 RCU=a-rcu PAGE_HT=cht DEBUG=1" \
	"ARCH=arm64 RCU=podzimek-rcu PAGE_HT=locked DEBUG=0" \
	"ARCH=arm64 RCU=a-rcu PAGE_HT=cht DEBUG=1 BROKEN=shootdown"

check: ## sparse: user and RCU pointers, every kernel C file
	@PYTHON=$(PYTHON) bash tools/ensure-deps.sh check
	@for c in $(CHECK_CONFIGS); do \
		$(MAKE) --no-print-directory RCU_BROKEN=0 LOCKDEP=1 $$c check-one || \
			exit 1; \
	done

# One configuration (the variables on the command line); used by check.
check-one: ## one configuration of check (the variables on the command line)
	@$(PYTHON) tools/sparse_check.py --sparse $(SPARSE) \
		--label "$(CHECK_LABEL)" $(SRC_C) -- $(SPARSE_FLAGS)
