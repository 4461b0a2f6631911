#!/bin/bash
# Interleaved growing/presized pairs of bench_us big at KEYS keys, T threads.
cd /work/wt-tail
B=build/bench-userspace/bench_us
KEYS=$1; T=$2; R=$3; L=$4
mkdir -p $L
for r in $(seq 1 $R); do
  for impl in chtmap-u64 chtmap-u64-presized; do
    if [ $T = 1 ]; then PRE="taskset -c 0"; else PRE=""; fi
    (echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; nice -n -15 $PRE $B big $impl -k $KEYS -t $T -w grow -Q 2>&1) > $L/$impl.$r.csv
  done
done
