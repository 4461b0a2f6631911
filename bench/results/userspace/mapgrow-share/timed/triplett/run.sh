#!/bin/sh
# Interleaved: old (before rstate) and new bench_us, Triplett rounds at K keys.
K=${K:-30000000}
cd /work/keep/wt-big3/triplett
for rep in 1 2 3; do
  for v in old new; do
    [ $v = old ] && B=/tmp/oldb/bench_us_old || B=/tmp/newb/bench_us_new
    free -g | sed -n 2p > $v-$rep.meta; uptime >> $v-$rep.meta
    nice -n -15 $B big chtmap-u64 -k $K -t 1 -R 3 -d 5 -w resize -Q > $v-$rep.csv 2> $v-$rep.err
    uptime >> $v-$rep.meta
  done
done
