#!/bin/bash
# getmany_time -i at 1e8 keys (cht_find_fast() against cht_find_many(), one
# bucket per key, items of one line from 2 MiB aligned_alloc() chunks), three
# builds interleaved, 3 rounds: "old" (OLD=: a getmany_time linked with the
# library before cht_env_malloc()'s huge-page hint: everything on 4 KiB
# pages), "new" (the bucket array advised, the items not), "newthp" (new with
# GLIBC_TUNABLES=glibc.malloc.hugetlb=1: the items on huge pages too). Each
# line: the process's largest AnonHugePages (smaps_rollup, every 3 s) and
# getmany_time's summary. Output: getmany-ab-1e8.txt.
# Usage: OLD=path/to/old/getmany_time bench/results/userspace/huge-pages/getmany-ab.sh
here=$(dirname "$0")
NEW=build/bench-userspace/getmany_time
S=$here/getmany-ab-1e8.txt
: > "$S"
for r in 1 2 3; do
 for mode in old new newthp; do
  unset GLIBC_TUNABLES; B=$NEW
  [ $mode = old ] && B=$OLD
  [ $mode = newthp ] && export GLIBC_TUNABLES=glibc.malloc.hugetlb=1
  nice -n -15 "$B" -i 100000000 4194304 5 > "$here/ab-$mode.$r.out" 2>&1 &
  pid=$!; max=0
  while kill -0 $pid 2>/dev/null; do
   h=$(awk '/AnonHugePages/{print $2}' /proc/$pid/smaps_rollup 2>/dev/null)
   [ -n "$h" ] && [ "$h" -gt "$max" ] && max=$h
   sleep 3
  done
  echo "$mode $r AnonHugePages_max_MB=$((max/1024)) $(grep ratio "$here/ab-$mode.$r.out")" >> "$S"
  rm -f "$here/ab-$mode.$r.out"
 done
done
