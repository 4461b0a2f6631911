#!/bin/bash
# A/B at 1e8: the library before (base: cht_find_many hashing twice, getmany_time
# timing find then find_many) and after (new), interleaved.
for p in 1 2 3; do
  for v in base new; do
    if [ $v = base ]; then b=$BASE/build/bench-userspace/getmany_time; else b=$NEW/build/bench-userspace/getmany_time; fi
    echo -n "$v $* pair $p: "
    nice -n -15 $b -i "$@" 100000000 4194304 5 | head -1
  done
done
