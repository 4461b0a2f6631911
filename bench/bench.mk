# The benchmarks' targets (docs/BENCHMARKS.md) and the sharing-counter QEMU
# plugin they and tests/test_sharing.py use. Included by the top Makefile at
# the place of its rules (make help lists them there).

# Benchmarks (bench/): build the release kernels (build/bench-*), run the
# chtbench sweeps in QEMU, write bench/results/ and regenerate the figures and
# bench/RESULTS.md. Full: about 40 min on 2 cores; quick (-t 1, 2 runs): < 10.
bench-deps: ## install the plotting dependencies of the benchmarks
	@PYTHON=$(PYTHON) bash tools/ensure-deps.sh plot

bench: deps bench-deps ## benchmark sweeps, figures, bench/RESULTS.md (about 40 min)
	@$(PYTHON) -m bench.chtbench --suite all && $(PYTHON) -m bench.plot

bench-quick: deps bench-deps ## the same, shorter (< 10 min)
	@$(PYTHON) -m bench.chtbench --suite all --quick && $(PYTHON) -m bench.plot

# Exact one-CPU costs: instructions per operation of every chtbench id on
# each release build, QEMU -icount shift=0 (one guest ns per instruction);
# bench/results/cost.{csv,json} and the cost section of bench/RESULTS.md.
# ARCH=arm64: the arm64 release builds (build/bench-arm64-*) on
# qemu-system-aarch64 -M virt -cpu cortex-a72, bench/results/cost-arm64.*
# and the arm64 cost section (with the ratios of both architectures).
bench-cost: deps ## instructions per operation, one CPU, QEMU icount (about 10 min; ARCH=arm64 too)
	@$(PYTHON) -m bench.chtbench --suite cost --arch $(ARCH) && \
		$(PYTHON) -m bench.plot --cost-only

# The timed goals of the lookup, update, page-hash and fault benchmarks only (-smp 2, 5 repetitions, about 6 minutes):
# bench/results/goals.md with each ratio's per-repetition values, median and
# range (needs a quiet host: the two vCPUs need both host cores).
bench-goals: deps ## the benchmarks' timed goals at -smp 2 (5 reps, ~6 min)
	@$(PYTHON) -m bench.chtbench --suite goals

# The sharing counter (docs/SHARING.md): a QEMU TCG plugin built on the host
# against the plugin header of Debian's QEMU (from Debian's qemu source
# package: tools/ensure-deps.sh plugin fetches it once into build/deps/).
HOSTCC ?= gcc
PLUGIN_HDR := build/deps/qemu-plugin/qemu-plugin.h
SHARING_PLUGIN := build/plugins/sharing.so

plugin: $(SHARING_PLUGIN) ## the QEMU sharing-counter plugin (build/plugins/sharing.so)

$(PLUGIN_HDR):
	@PYTHON=$(PYTHON) bash tools/ensure-deps.sh plugin

$(SHARING_PLUGIN): tools/plugins/sharing.c $(PLUGIN_HDR)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) -std=gnu11 -O2 -g -fPIC -shared -Wall -Wextra -Werror \
		-Wno-unused-parameter -I$(dir $(PLUGIN_HDR)) -o $@ $<

# Cache lines shared between CPUs per operation (docs/SHARING.md): every
# chtbench id on the three release builds at -smp 2, 4 and 8 with the sharing
# plugin, 2 boots each; bench/results/sharing.{csv,json,png}, the sharing
# section of bench/RESULTS.md and the scaling model (needs cost.json).
bench-sharing: deps bench-deps plugin ## cache-line transfers per operation, -smp 2/4/8
	@$(PYTHON) -m bench.bench_sharing
