#!/usr/bin/env bash
# contrib/memcached/deps.sh: what `make memcached`, `make memcached-test` and
# `make memcached-bench` need, and memcached's source from Debian.
#
#   deps.sh packages   check (as root: install) the Debian packages
#   deps.sh source DIR make sure DIR holds memcached's Debian source package
#                      (apt-get source memcached, Debian patches applied)
#
# Kept apart from tools/ensure-deps.sh on purpose (easy to merge into it):
# nothing here is needed by `make test`.
#
# Packages: gcc make pkg-config (build), libevent-dev (memcached), dpkg-dev
# xz-utils (apt-get source unpacks with dpkg-source), perl (memcached's
# t/*.t through prove), libmemcached-tools (memccapable, memcaslap),
# linux-perf (perf stat in the benchmark), valgrind (callgrind: instructions
# per request where perf has no hardware counters), python3 (our concurrency
# check and the drivers).
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

need_pkgs() {
    local missing=()
    command -v gcc >/dev/null 2>&1 || missing+=(gcc)
    command -v make >/dev/null 2>&1 || missing+=(make)
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    [ -f /usr/include/event2/event.h ] || missing+=(libevent-dev)
    command -v dpkg-source >/dev/null 2>&1 || missing+=(dpkg-dev)
    command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
    command -v prove >/dev/null 2>&1 || missing+=(perl)
    command -v memccapable >/dev/null 2>&1 || missing+=(libmemcached-tools)
    command -v memcaslap >/dev/null 2>&1 || missing+=(libmemcached-tools)
    command -v perf >/dev/null 2>&1 || missing+=(linux-perf)
    command -v python3 >/dev/null 2>&1 || missing+=(python3)
    command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
    printf '%s\n' "${missing[@]+"${missing[@]}"}" | awk 'NF && !s[$0]++' | tr '\n' ' '
}

do_packages() {
    local pkgs
    pkgs=$(need_pkgs)
    [ -z "$pkgs" ] && return 0
    if ! is_root; then
        echo "memcached deps: missing packages. Run: sudo apt-get install -y $pkgs"
        exit 1
    fi
    echo "memcached deps: installing $pkgs"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $pkgs >/dev/null
    pkgs=$(need_pkgs)
    if [ -n "$pkgs" ]; then
        echo "memcached deps: still missing: $pkgs" >&2
        exit 1
    fi
}

SRC_LIST=/etc/apt/sources.list.d/cht-memcached-src.sources

have_deb_src() {
    grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/
}

add_deb_src() {
    local suite
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    if [ -z "$suite" ]; then
        echo "memcached deps: no VERSION_CODENAME in /etc/os-release" >&2
        exit 1
    fi
    if ! is_root; then
        echo "memcached deps: apt has no deb-src entry. Run as root:"
        echo "  printf 'Types: deb-src\\nURIs: http://deb.debian.org/debian\\nSuites: $suite $suite-updates\\nComponents: main\\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\\n\\nTypes: deb-src\\nURIs: http://deb.debian.org/debian-security\\nSuites: $suite-security\\nComponents: main\\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\\n' > $SRC_LIST && apt-get update"
        exit 1
    fi
    echo "memcached deps: adding deb-src for $suite ($SRC_LIST)"
    cat > "$SRC_LIST" <<SRC
# Added by contrib/memcached/deps.sh: memcached's source package (apt-get source).
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt-get update -q >/dev/null
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
