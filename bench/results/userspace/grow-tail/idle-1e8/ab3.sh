#!/bin/bash
# Interleaved at 1e8 keys, 1 thread pinned to CPU 0 (the library's threads share it): base and new.
R=$1; L=$2
mkdir -p $L/base-1c $L/new-1c
run() { (echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) free_mb $(free -m | awk '/Mem:/{print $7}')"; nice -n -15 taskset -c 0 /work/keep/grow1e8/bench_us_$1 big $2 -k 100000000 -t 1 -w grow -Q 2>&1) > $3; }
for r in $(seq 1 $R); do
  for b in base new; do
    for impl in chtmap-u64 chtmap-u64-presized; do run $b $impl $L/$b-1c/$impl.$r.csv; done
  done
done
echo done > $L/DONE
