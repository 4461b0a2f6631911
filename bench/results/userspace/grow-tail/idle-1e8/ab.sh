#!/bin/bash
# Interleaved A/B at 1e8 keys: base (session start) and new (prefetch + populate-ahead),
# growing and presized, 1 thread on 2 CPUs, R rounds; then the new build at 2 threads, R pairs.
R=$1; L=$2
mkdir -p $L/base-1u $L/new-1u $L/new-2t
run() { (echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) free_mb $(free -m | awk '/Mem:/{print $7}')"; nice -n -15 /work/keep/grow1e8/bench_us_$1 big $2 -k 100000000 -t $3 -w grow -Q 2>&1) > $4; }
for r in $(seq 1 $R); do
  for b in base new; do
    for impl in chtmap-u64 chtmap-u64-presized; do run $b $impl 1 $L/$b-1u/$impl.$r.csv; done
  done
done
for r in $(seq 1 $R); do
  for impl in chtmap-u64 chtmap-u64-presized; do run new $impl 2 $L/new-2t/$impl.$r.csv; done
done
echo done > $L/DONE
