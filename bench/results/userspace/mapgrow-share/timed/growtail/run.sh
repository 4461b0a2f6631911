#!/bin/sh
cd /work/keep/wt-big3/growtail
for rep in 1 2 3 4 5; do
  for v in old new; do
    [ $v = old ] && B=/tmp/oldb/bench_us_old || B=/tmp/newb/bench_us_new
    uptime > $v-$rep.meta
    nice -n -15 taskset -c 0 $B big chtmap-u64 -k 10000000 -t 1 -w grow -Q > $v-$rep.csv 2> $v-$rep.err
    uptime >> $v-$rep.meta
  done
done
