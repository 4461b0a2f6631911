#!/bin/bash
# 1 thread unpinned (as run_big runs it), nice -15, 3 interleaved pairs at 1e8.
B=/work/main/build/bench-userspace/bench_us
R=$1; L=$2
mkdir -p $L/1u
for r in $(seq 1 $R); do
  for impl in chtmap-u64 chtmap-u64-presized; do
    (echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) free_mb $(free -m | awk '/Mem:/{print $7}')"; nice -n -15 $B big $impl -k 100000000 -t 1 -w grow -Q 2>&1) > $L/1u/$impl.$r.csv
  done
done
echo done > $L/DONE1u
