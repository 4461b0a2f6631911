#!/bin/bash
# The other runs of this directory (round 4, session 18), one process at a
# time on the otherwise idle 2-core host. NEW: a checkout with
# cht_find_many_fast() built (make -C bench/userspace).
NEW=${NEW:-.}
GM=$NEW/build/bench-userspace/getmany_time
# block-1e8.txt: the block-interleaved timing, items on 4 KiB pages and on
# huge pages (-H) in turn.
for o in '' '-H' '' '-H' ''; do
  nice -n -15 $GM -i $o 100000000 4194304 5
done > block-1e8.txt
# ahead.txt: getmany_time compiled with CHT_FIND_MANY_AHEAD 6, 12 and 16
# (cht.h's #define made #ifndef for the experiment, then restored; the
# library's cht_find_many() stays at 8), 2 rounds interleaved.
F="-std=gnu11 -pthread -O2 -g -DNDEBUG -I$NEW/uspace/lib/cht/include -I$NEW/uspace/lib/cht_rcu/include -I$NEW/uspace/lib/cht/env -idirafter $NEW/common/include -iquote $NEW/common/include -iquote $NEW/common/test"
for a in 6 8 12 16; do
  gcc $F -DCHT_FIND_MANY_AHEAD=$a -c $NEW/bench/userspace/getmany_time.c -o /tmp/gm$a.o &&
  gcc -pthread -o /tmp/gm$a /tmp/gm$a.o $NEW/build/uspace/lib/libcht.a
done
for r in 1 2; do for a in 8 12 16 6; do
  echo -n "a$a r$r: "; nice -n -15 /tmp/gm$a -i 100000000 4194304 5 | head -1
done; done > ahead.txt
