#!/usr/bin/env bash
# contrib/memcached/deps.sh: what `make memcached`, `make memcached-test` and
# `make memcached-bench` need, and memcached's source from Debian.
#
#   deps.sh packages   check (as root: install) the Debian packages
#   deps.sh source DIR make sure DIR holds memcached's Debian source package
#                      (apt-get source memcached, Debian patches applied)
#
# The package list is the project's one list: tools/ensure-deps.sh, group
# memcached (gcc make pkg-config libevent-dev dpkg-dev xz-utils perl
# libmemcached-tools linux-perf valgrind python3); `deps.sh packages` runs it.
# Nothing here is needed by `make test`.
#
# The source comes from the same Debian archive as the packages: a deb-src
# entry for this system's suite (VERSION_CODENAME of /etc/os-release, e.g.
# bookworm, plus <suite>-updates and <suite>-security) is written to
# /etc/apt/sources.list.d/cht-memcached-src.sources when apt has none.
# Not root: the commands to run are printed and the script exits 1.
set -euo pipefail

# Upstream version our patch series is made for.
MC_VERSION=1.6.18

is_root() { [ "$(id -u)" = 0 ]; }

# The packages are in the project's one list (tools/ensure-deps.sh, group
# memcached); this script only fetches memcached's source package.
do_packages() {
    PYTHON=${PYTHON:-python3} bash "$(dirname "$0")/../../tools/ensure-deps.sh" memcached
}

SRC_LIST=/etc/apt/sources.list.d/cht-memcached-src.sources

# have_deb_src, deb_src_suite, deb_src_entry, write_deb_src (shared with
# tools/ensure-deps.sh).
. "$(dirname "$0")/../../tools/deb-src.sh"

add_deb_src() {
    local suite
    suite=$(deb_src_suite)
    if [ -z "$suite" ]; then
        echo "memcached deps: no VERSION_CODENAME in /etc/os-release" >&2
        exit 1
    fi
    if ! is_root; then
        echo "memcached deps: apt has no deb-src entry. As root, write this to"
        echo "$SRC_LIST and run apt-get update:"
        deb_src_entry "$suite" | sed 's/^/    /'
        exit 1
    fi
    echo "memcached deps: adding deb-src for $suite ($SRC_LIST)"
    write_deb_src "$SRC_LIST" "$suite" \
        "Added by contrib/memcached/deps.sh: memcached's source package (apt-get source)."
}

do_source() {
    local dir=$1
    if [ -f "$dir/memcached-$MC_VERSION/memcached.c" ]; then
        return 0
    fi
    have_deb_src || add_deb_src
    if ! apt-cache showsrc memcached 2>/dev/null | grep -q "^Version: $MC_VERSION-"; then
        # The entry may be new: refresh once.
        if is_root; then apt-get update -q >/dev/null; fi
    fi
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    echo "memcached deps: apt-get source memcached (into $dir)"
    # apt's sandbox user cannot write into the build tree: download as is
    (cd "$dir.tmp" && apt-get source -q -o APT::Sandbox::User=root memcached >apt-source.log 2>&1) || {
        cat "$dir.tmp/apt-source.log" >&2; exit 1; }
    if [ ! -f "$dir.tmp/memcached-$MC_VERSION/memcached.c" ]; then
        echo "memcached deps: Debian's memcached source is not $MC_VERSION:" >&2
        ls "$dir.tmp" >&2
        exit 1
    fi
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
}

case "${1:-}" in
    packages) do_packages ;;
    source) [ $# -eq 2 ] || { echo "usage: $0 source DIR" >&2; exit 2; }
            do_source "$2" ;;
    *) echo "usage: $0 packages | source DIR" >&2; exit 2 ;;
esac
