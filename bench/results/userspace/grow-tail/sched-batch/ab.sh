#!/bin/bash
# 2-thread growing/presized pairs at 1e8, the library's helpers SCHED_OTHER (normal) or SCHED_BATCH (batch).
cd /tmp/sb
run() { (echo "# $(date -u +%T) steal_ticks $(awk '/^cpu /{print $9}' /proc/stat)"; env $1 nice -n -15 /tmp/sb/bench_us big $2 -k 100000000 -t 2 -w grow -Q 2>&1; echo "# end steal_ticks $(awk '/^cpu /{print $9}' /proc/stat)") > "$3"; }
for r in ${ROUNDS:-1 2 3}; do
  for b in normal batch; do mkdir -p $b
    e=X=1; [ $b = batch ] && e=CHT_HELPER_BATCH=1
    for impl in chtmap-u64 chtmap-u64-presized; do run "$e" $impl "$b/$impl.$r.csv"; done
  done
done
echo done
