#!/usr/bin/env bash
# contrib/memcached/build.sh VARIANT...: build memcached from Debian's source
# package under build/, with or without our patch series.
#
#   stock      build/memcached-stock/memcached   the same source, unpatched
#   cht        build/memcached/memcached         patches/*.patch, libcht.a
#   cht-asan   build/memcached-asan/memcached    ours + libcht, AddressSanitizer
#                                                (+UBSan in libcht's objects)
#   cht-tsan   build/memcached-tsan/memcached    ours + libcht, ThreadSanitizer
#   stock-tsan build/memcached-stock-tsan/memcached  stock, ThreadSanitizer (the
#                                                baseline of memcached's own races)
#   cht-broken1, cht-broken2  build/memcached-broken1, -broken2: ours with the GET
#                                                fast path broken on purpose
#                                                (-DMC_CHT_BROKEN_FASTPATH=1: copy
#                                                after leaving the reader section;
#                                                =2: another key's item), the
#                                                negative controls of the
#                                                concurrency check (test.py)
#
# Each tree is a fresh copy of build/memcached-src/memcached-$MC_VERSION
# (deps.sh source), patched, configured (./configure with its defaults: no
# TLS, no SASL; extstore on) and built (memcached and memcached-debug, the
# binary memcached's t/*.t run). A tree is rebuilt from scratch when the
# patches, the libcht headers (the item embeds cht_link_t) or the variant's
# flags change, and relinked when libcht changes.
#
# libcht is linked statically, from this tree's uspace/ build: the binary
# then runs this tree's table (no LD_LIBRARY_PATH, no rpath, no clash with a
# libcht installed on the system) and the sanitizer variants can link the
# sanitizer-instrumented objects of the library that uspace/Makefile builds.
# The headers come from a staging install (build/libcht-prefix) so memcached
# is compiled exactly as a user of the installed library (pkg-config cht).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/contrib/memcached
B=$ROOT/build
MC_VERSION=1.6.18
SRC=$B/memcached-src/memcached-$MC_VERSION
PREFIX=$B/libcht-prefix
JOBS=${JOBS:-2}

bash "$HERE/deps.sh" packages
bash "$HERE/deps.sh" source "$B/memcached-src"

libcht() {
    make --no-print-directory -s -C "$ROOT/uspace" -j"$JOBS" lib >/dev/null
    make --no-print-directory -s -C "$ROOT/uspace" install PREFIX="$PREFIX" >/dev/null
}

build_one() {
    local variant=$1 dest cflags libs patch=1 libfiles=() cppflags="" defs=""
    case "$variant" in
        stock) dest=$B/memcached-stock; patch=0; cflags="-g -O2"; libs="" ;;
        stock-tsan) dest=$B/memcached-stock-tsan; patch=0
             cflags="-g -O1 -fsanitize=thread"; libs="-fsanitize=thread" ;;
        cht) dest=$B/memcached; cflags="-g -O2"
             libfiles=("$PREFIX/lib/libcht.a") ;;
        cht-broken[12])
             dest=$B/memcached-${variant#cht-}; cflags="-g -O2"
             defs="-DMC_CHT_BROKEN_FASTPATH=${variant#cht-broken}"
             libfiles=("$PREFIX/lib/libcht.a") ;;
        cht-asan|cht-tsan)
             local v=${variant#cht-}
             dest=$B/memcached-$v
             if [ "$v" = asan ]; then
                 cflags="-g -O1 -fno-omit-frame-pointer -fsanitize=address"
                 libs="-fsanitize=address,undefined"
             else
                 cflags="-g -O1 -fsanitize=thread"
                 libs="-fsanitize=thread"
             fi
             local objs=()
             for o in cht cht_env cht_api rcu; do
                 objs+=("$B/uspace/$v/$o.o")
             done
             make --no-print-directory -s -C "$ROOT/uspace" -j"$JOBS" "${objs[@]}" >/dev/null
             libfiles=("${objs[@]}") ;;
        *) echo "build.sh: unknown variant $variant" >&2; exit 2 ;;
    esac
    if [ "$patch" = 1 ]; then
        libcht
        libs="${libfiles[*]} -pthread ${libs:-}"
        cppflags="-I$PREFIX/include/cht${defs:+ $defs}"
    fi

    # What the tree depends on: the patches, libcht's headers, the flags.
    local stamp
    stamp=$( {
        echo "$variant|$cflags|$cppflags|$libs|$MC_VERSION"
        if [ "$patch" = 1 ]; then
            cat "$HERE"/patches/*.patch "$PREFIX"/include/cht/*.h "$PREFIX"/include/cht/adt/*.h
        fi
        } | sha256sum | cut -d' ' -f1)
    if [ ! -f "$dest/.build-stamp" ] || [ "$(cat "$dest/.build-stamp")" != "$stamp" ]; then
        echo "  MEMCACHED $variant: fresh tree in ${dest#$ROOT/}"
        rm -rf "$dest"
        cp -a "$SRC" "$dest"
        if [ "$patch" = 1 ]; then
            for p in "$HERE"/patches/*.patch; do
                patch -d "$dest" -p1 --quiet --forward < "$p"
            done
        fi
        (cd "$dest" && ./configure -q CFLAGS="$cflags" CPPFLAGS="$cppflags" \
            LIBS="$libs" > configure.out 2>&1) || { cat "$dest/configure.out"; exit 1; }
        echo "$stamp" > "$dest/.build-stamp"
    fi
    # Relink when the library is newer than the binaries.
    local f
    for f in "${libfiles[@]+"${libfiles[@]}"}"; do
        for bin in memcached memcached-debug; do
            if [ -f "$dest/$bin" ] && [ "$f" -nt "$dest/$bin" ]; then
                rm -f "$dest/$bin"
            fi
        done
    done
    echo "  MEMCACHED $variant: make (${dest#$ROOT/}/memcached)"
    make --no-print-directory -s -C "$dest" -j"$JOBS" all \
        > "$dest/make.out" 2>&1 || { tail -50 "$dest/make.out"; exit 1; }
}

[ $# -ge 1 ] || { echo "usage: $0 stock|cht|cht-asan|cht-tsan|stock-tsan|cht-broken1|cht-broken2..." >&2; exit 2; }
for v in "$@"; do
    build_one "$v"
done
