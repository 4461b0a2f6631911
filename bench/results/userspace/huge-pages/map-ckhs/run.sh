#!/bin/sh
# The managed map against ck_hs, both on huge pages: chtmap-u64-presized
# (its arrays advised by the library) and ckhs with
# GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (and without), 1e8 keys, 1 thread,
# lookups 3 rounds of 2 s, ROUNDS interleaved rounds, nice -15.
# Usage: bench/results/userspace/huge-pages/map-ckhs/run.sh [ROUNDS]
# Output: mR-TABLE.csv here (ckhs-thp: ckhs with the tunable).
here=$(dirname "$0")
bin=build/bench-userspace/bench_us
for r in $(seq 1 "${1:-2}"); do
	for t in chtmap-u64-presized ckhs ckhs-thp; do
		tun=; impl=$t
		if [ $t = ckhs-thp ]; then tun=glibc.malloc.hugetlb=1; impl=ckhs; fi
		echo "$(date -u +%T) $t $r"
		GLIBC_TUNABLES=$tun nice -n -15 "$bin" big $impl -k 100000000 -t 1 \
		    -P -w lookup -R 3 -d 2 -Q > "$here/m$r-$t.csv" 2> /dev/null
	done
done
