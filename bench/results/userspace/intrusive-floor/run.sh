#!/bin/sh
# The floor of an intrusive table at 1e8 keys, 1 thread: every table of
# TABLES filled presized once per pass, then lookups (hit, miss) for 3 rounds
# of 2 s; PASSES passes over the list, one process at a time, at nice -15.
# Output: one CSV per (pass, table) in this directory.
# Usage: [TABLES="..."] [FIRST=N] bench/results/userspace/intrusive-floor/run.sh [KEYS] [PASSES]
# (FIRST: the number of the first pass, for files p$FIRST-*.csv on)
set -e
here=$(dirname "$0")
keys=${1:-100000000}
passes=${2:-2}
bin=build/bench-userspace/bench_us
TABLES=${TABLES:-"ideal ideal-node cuckoo cht-presized cht-presized-a64 cht-presized-l2-a64"}
first=${FIRST:-1}
for p in $(seq "$first" $((first + passes - 1))); do
	for t in $TABLES; do
		echo "$(date -u +%T) pass $p $t"
		nice -n -15 "$bin" big "$t" -k "$keys" -t 1 -w lookup -R 3 -d 2 -Q \
		    > "$here/p$p-$t.csv" 2> "$here/p$p-$t.err"
		grep -h "lookup-hit#.*,mops,\|lookup-miss#.*,mops," "$here/p$p-$t.csv" | cut -d, -f2,3,7 | tr '\n' ' '
		echo
	done
done
