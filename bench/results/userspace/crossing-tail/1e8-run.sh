#!/bin/bash
# The crossing at 1e8 keys, 1 thread: plain and THP heap interleaved, 3 each.
cd /work/keep/crossing-1e8
for i in 1 2 3; do
  for v in plain thp; do
    free -g | awk 'NR==2{print "free GiB before '"$v$i"':", $7}'
    if [ $v = thp ]; then export GLIBC_TUNABLES=glibc.malloc.hugetlb=1; else unset GLIBC_TUNABLES; fi
    s=$(date +%s); ./bench_us big cht -k 100000000 -t 1 -w crossing > $v$i.csv 2> $v$i.err; echo "$v$i rc=$? $(( $(date +%s) - s )) s"
  done
done
unset GLIBC_TUNABLES
s=$(date +%s); ./bench_us big cht -k 100000000 -t 1 -A -w crossing > attrib1.csv 2> attrib1.err; echo "attrib1 rc=$? $(( $(date +%s) - s )) s"
echo ALLDONE
