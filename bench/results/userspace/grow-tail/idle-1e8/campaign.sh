#!/bin/bash
# Interleaved growing/presized pairs of chtmap-u64 at 1e8 keys, 1 and 2 threads, idle host.
B=/work/main/build/bench-userspace/bench_us
R=$1; L=$2
mkdir -p $L/1t $L/2t
for r in $(seq 1 $R); do
  for T in 1 2; do
    for impl in chtmap-u64 chtmap-u64-presized; do
      if [ $T = 1 ]; then PRE="taskset -c 0"; else PRE=""; fi
      (echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) free_mb $(free -m | awk '/Mem:/{print $7}')"; nice -n -15 $PRE $B big $impl -k 100000000 -t $T -w grow -Q 2>&1) > $L/${T}t/$impl.$r.csv
    done
  done
done
echo done > $L/DONE
