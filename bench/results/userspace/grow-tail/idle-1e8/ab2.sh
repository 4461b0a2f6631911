#!/bin/bash
# Interleaved at 1e8 keys, 2 threads: base, pf (prefetch only), new (prefetch + populate-ahead).
R=$1; L=$2
mkdir -p $L/base-2t $L/pf-2t $L/new-2t
run() { (echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) free_mb $(free -m | awk '/Mem:/{print $7}')"; nice -n -15 /work/keep/grow1e8/bench_us_$1 big $2 -k 100000000 -t $3 -w grow -Q 2>&1) > $4; }
for r in $(seq 1 $R); do
  for b in base pf new; do
    for impl in chtmap-u64 chtmap-u64-presized; do run $b $impl 2 $L/$b-2t/$impl.$r.csv; done
  done
done
echo done > $L/DONE
