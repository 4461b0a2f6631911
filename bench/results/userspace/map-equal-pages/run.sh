#!/bin/sh
# Interleaved lookup rounds at KEYS keys, 1 thread, one process at a time at
# nice -15: every round runs each SPEC once, in the order given.
#   SPEC = NAME=BENCH_US:IMPL[:hugetlb]
# runs BENCH_US big IMPL -k KEYS -t 1 -P -w lookup -R 3 -d D -Q (D: 2 s at
# 1e7 keys and more, else 1 s) into OUT/PREFIX<round>-NAME.csv; ":hugetlb"
# sets GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (malloc's memory on THP: how
# the peers get huge pages). PREFIX: r at 1e8 keys, r<KEYS>- otherwise.
# Summary: summarize.py OUT PREFIX REF (ratios to REF's hits, per round).
# Usage: run.sh OUT ROUNDS KEYS SPEC...   (README.md here: the runs made)
out=$1 rounds=$2 keys=$3
shift 3
pre=r; [ "$keys" = 100000000 ] || pre=r$keys-
d=2; [ "$keys" -lt 10000000 ] && d=1
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
	for spec in "$@"; do
		name=${spec%%=*} rest=${spec#*=}
		bin=${rest%%:*} rest=${rest#*:}
		impl=${rest%%:*} tun=
		[ "$rest" != "$impl" ] && tun=glibc.malloc.hugetlb=1
		echo "$(date -u +%T) $name $r"
		GLIBC_TUNABLES=$tun nice -n -15 "$bin" big "$impl" -k "$keys" -t 1 \
		    -P -w lookup -R 3 -d $d -Q > "$out/$pre$r-$name.csv" 2> /dev/null
	done
done
