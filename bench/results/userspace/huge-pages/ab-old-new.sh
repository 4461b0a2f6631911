#!/bin/sh
# The library before and after cht_env_malloc()'s huge-page hint, interleaved
# with libcuckoo: bench_us big cht-presized at 1e8 keys, 1 thread, lookups
# 3 rounds of 2 s, OLD= a bench_us linked with the library before the change.
# 3 rounds of (old, new, cuckoo), one process at a time at nice -15.
# Output: aN-cht-presized-old.csv, aN-cht-presized.csv, aN-cuckoo.csv here
# (bench/results/userspace/intrusive-floor/summarize.py DIR a).
# Usage: OLD=path/to/old/bench_us bench/results/userspace/huge-pages/ab-old-new.sh
here=$(dirname "$0")
NEW=build/bench-userspace/bench_us
for r in 1 2 3; do
	for mode in old new cuckoo; do
		b=$NEW; t=cht-presized
		[ $mode = old ] && b=$OLD
		[ $mode = cuckoo ] && t=cuckoo
		echo "$(date -u +%T) $mode $r"
		nice -n -15 "$b" big $t -k 100000000 -t 1 -w lookup -R 3 -d 2 -Q \
		    > "$here/a$r-$t$([ $mode = old ] && echo -old).csv" 2> /dev/null
	done
done
