#!/bin/bash
# 1e8 crossings of cht with the control beside the crossing's table, one at a time.
B=/work/main/build/bench-userspace/bench_us
cp $B /work/keep/cross-keep/bench_us
for r in 1 2 3; do
  (echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) free_mb $(free -m | awk '/Mem:/{print $7}')"; /work/keep/cross-keep/bench_us big cht -k 100000000 -t 1 -w crossing 2>&1) > 1e8-keep$r.csv
done
echo done > DONE
