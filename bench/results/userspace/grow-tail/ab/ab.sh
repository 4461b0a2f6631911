#!/bin/bash
# Interleaved: base growing, base presized, new growing, new presized; R rounds.
KEYS=$1; T=$2; R=$3; L=$4
mkdir -p $L/base $L/new
for r in $(seq 1 $R); do
  for build in base new; do
    if [ $build = base ]; then B=/tmp/wt-tail-base/bench_us_base; else B=/work/wt-tail/build/bench-userspace/bench_us; fi
    for impl in chtmap-u64 chtmap-u64-presized; do
      if [ $T = 1 ]; then PRE="taskset -c 0"; else PRE=""; fi
      (echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $build"; nice -n -15 $PRE $B big $impl -k $KEYS -t $T -w grow -Q 2>&1) > $L/$build/$impl.$r.csv
    done
  done
done
