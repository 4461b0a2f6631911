#!/bin/sh
# Lookups at 1e8 keys, 1 thread, with the library's bucket arrays advised for
# huge pages (cht_env_malloc(): the default since this change) and with every
# table's memory on huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1: malloc
# advises its heap and its mmapped blocks, so the items and the peers' arrays
# too). Every table of TABLES presized in its own process, lookups (hit, miss)
# for 3 rounds of 2 s; per pass, first the default run of every table (files
# pN-*), then the hugetlb=1 run (hN-*), one process at a time at nice -15.
# Usage: [TABLES="..."] bench/results/userspace/huge-pages/run.sh [KEYS] [PASSES]
# Summary: bench/results/userspace/intrusive-floor/summarize.py DIR p|h
set -e
here=$(dirname "$0")
keys=${1:-100000000}
passes=${2:-2}
bin=build/bench-userspace/bench_us
TABLES=${TABLES:-"cuckoo ideal-node cht-presized cht-presized-a64 lfht-qsbr-presized"}
for p in $(seq 1 "$passes"); do
	for mode in p h; do
		for t in $TABLES; do
			echo "$(date -u +%T) $mode$p $t"
			if [ "$mode" = h ]; then
				tun=glibc.malloc.hugetlb=1
			else
				tun=
			fi
			GLIBC_TUNABLES=$tun nice -n -15 "$bin" big "$t" -k "$keys" \
			    -t 1 -w lookup -R 3 -d 2 -Q \
			    > "$here/$mode$p-$t.csv" 2> "$here/$mode$p-$t.err"
			grep -h "lookup-hit#.*,mops,\|lookup-miss#.*,mops,\|,anon_huge" \
			    "$here/$mode$p-$t.csv" | cut -d, -f2,3,6,7 | tr '\n' ' '
			echo
		done
	done
done
