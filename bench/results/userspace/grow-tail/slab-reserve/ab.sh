#!/bin/bash
# Interleaved growing/presized pairs at 1e8 keys, as run for this directory:
#   ab.sh THREADS OUTDIR BUILD...   (BUILD: a bench_us binary, saved as
#   /work/keep/grow1e8/bench_us_BUILD; each round runs every build's growing
#   then presized map, 3 rounds; files OUTDIR/BUILD-{1u,2t}/IMPL.ROUND.csv)
#   ab-1u:           ab.sh 1 ab-1u new spare          (base-1u = new)
#   ab-2t/first:     ab.sh 2 ab-2t/first new spare2   (base-2t = new, spare-2t = spare2)
#   ab-2t/three-way: ab.sh 2 ab-2t/three-way new spare2 spare3
#   first/:          3 pairs of spare at 1 thread, then 3 at 2 threads (see README.txt)
# new: the populate-ahead build (the base); spare: the slab reserve asked for at every
# take; spare2: the same with the steal_ms row; spare3: asked for at half its bound
# (committed). The 2-thread runs also logged /proc/stat's steal ticks around each run.
T=$1; L=$2; shift 2
tag=1u; [ "$T" = 2 ] && tag=2t
run() { (echo "# $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) free_mb $(free -m | awk '/Mem:/{print $7}') steal_ticks $(awk '/^cpu /{print $9}' /proc/stat)"; nice -n -15 /work/keep/grow1e8/bench_us_$1 big $2 -k 100000000 -t "$T" -w grow -Q 2>&1; echo "# end steal_ticks $(awk '/^cpu /{print $9}' /proc/stat)") > "$3"; }
for r in 1 2 3; do
  for b in "$@"; do d=$L/$b-$tag; mkdir -p "$d"
    for impl in chtmap-u64 chtmap-u64-presized; do run "$b" $impl "$d/$impl.$r.csv"; done
  done
done
