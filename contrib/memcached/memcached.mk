# memcached with libcht (docs/MEMCACHED.md). Included by the top Makefile at
# the place of its rules (make help lists them there).

# memcached with libcht as its hash table (contrib/memcached): Debian's
# memcached source (apt-get source), patched under build/memcached with
# contrib/memcached/patches and linked with libcht.a; the same source unpatched
# in build/memcached-stock for comparison. Installs what it needs as root.
memcached: ## memcached 1.6.18 with libcht (build/memcached) and stock
	@bash contrib/memcached/build.sh cht stock

# memcached's own suite (sizes, testapp, prove t/*.t) and memccapable on stock
# and on ours, and our concurrency check (ours plain, ASan, TSan; stock) with
# the table grown to 1 M items and shrunk back, and the check's negative
# controls (two deliberately broken builds it must catch):
# build/memcached-test/summary.txt. About 25 minutes on 2 cores; not part of
# `make test`.
memcached-test: ## memcached's suite, memccapable, concurrency check (~25 min)
	@bash contrib/memcached/build.sh cht stock cht-asan cht-tsan stock-tsan \
		cht-broken1 cht-broken2
	@$(PYTHON) contrib/memcached/test.py

# memcaslap stock vs libcht (-t 1/-t 2, GET:SET 9:1 and 99:1, 1 M keys),
# instructions per request (callgrind) and the resize case: writes
# bench/results/memcached/ and the memcached section of bench/RESULTS.md.
memcached-bench: bench-deps ## memcaslap stock vs libcht, instructions per request
	@bash contrib/memcached/build.sh cht stock
	@$(PYTHON) -m contrib.memcached.bench
