#!/usr/bin/env bash
# The one dependency script: checks (and as root, installs) what a part of the
# project needs, from the one list below.
#
#   tools/ensure-deps.sh [--check] [GROUP...]
#
# Groups (default: test):
#   test          build and test the kernel and the userspace library
#                 (make, make test, .ci/run): QEMU, GRUB, xorriso, mtools,
#                 gcc, make, ccache (the configurations share their
#                 objects, see the Makefile's CCACHE), binutils, python3, for arm64 qemu-system-arm
#                 (qemu-system-aarch64) and gcc-aarch64-linux-gnu (the
#                 cross compiler, binutils with it), pkg-config (the library's
#                 install test; its sanitizer runtimes come with gcc),
#                 pytest + pexpect + pytest-xdist (make test runs the
#                 tests that may share the CPUs two at a time) importable
#                 by $PYTHON, spin (the
#                 short model checks, tests/test_models.py) and sparse
#                 (make check, tests/test_sparse.py)
#   check         make check: sparse (the user and RCU pointer check of the
#                 kernel's C files, tools/sparse_check.py) and python3
#   verify        make verify: the SPIN models of verify/ (spin, gcc,
#                 python3)
#   plot          the benchmark figures (make bench-deps, bench/plot.py):
#                 matplotlib importable by $PYTHON
#   test-user     what make test adds to test for the userspace sharing test
#                 (tests/test_sharing.py: bench_us under qemu-x86_64), the
#                 miss-count test (tests/test_uspace_misses.py: bench_us under
#                 callgrind) and the bench-big correctness test
#                 (tests/test_bench_big.py): qemu-user, liburcu-dev,
#                 libcuckoo-dev, libck-dev, libtbb-dev, g++, valgrind
#   uspace-bench  the userspace peer benchmark (make -C uspace bench-deps):
#                 liburcu-dev, libcuckoo-dev, libck-dev, libtbb-dev, g++, valgrind,
#                 pkg-config, matplotlib, and qemu-user (qemu-x86_64, which
#                 runs it under the sharing plugin: make -C uspace
#                 bench-sharing; linux-perf is optional and not checked)
#   memcached     make memcached / memcached-test / memcached-bench: gcc, make,
#                 pkg-config, libevent-dev, dpkg-dev (apt-get source), xz-utils,
#                 perl (prove), libmemcached-tools (memccapable, memcaslap),
#                 linux-perf, valgrind, python3 (fetching memcached's source
#                 package itself is contrib/memcached/deps.sh source)
#   plugin        the sharing counter (tools/plugins/sharing.c, make
#                 plugin, make bench-sharing, tests/test_sharing.py,
#                 docs/SHARING.md): gcc, make, dpkg-dev
#                 (apt-get source), xz-utils, and QEMU's plugin header
#                 qemu-plugin.h taken from Debian's own `qemu` source package
#                 (the version of the installed qemu-system-x86), extracted
#                 alone into $PLUGIN_HDR_DIR (default build/deps/qemu-plugin/)
#                 and kept there: a second run finds it and fetches nothing.
#                 Needs a deb-src entry; as root one is written for this
#                 system's suite (/etc/apt/sources.list.d/cht-qemu-src.sources)
#                 when apt has none.
#
# $PYTHON (default python3) is the interpreter that runs the tests and plots.
# Python modules come from Debian (python3-*) when $PYTHON is Debian's own
# /usr/bin/python3 (or absent: apt brings it), else from pip.
#
# Quiet when everything is present. When something is missing:
#   - with --check, or not root: print the command(s) to run and exit 1;
#   - as root: apt-get update, apt-get install -y the missing packages; then
#     "$PYTHON -m pip install" the modules $PYTHON still cannot import (a
#     pyenv Python does not see Debian's modules); check again; exit 1 if
#     anything is still missing.
set -euo pipefail

PYTHON=${PYTHON:-python3}

# The list: GROUP KIND WHAT PACKAGE. KIND: cmd (a command on PATH), dir (a
# directory), pkg (an installed Debian package), py (a Python module for
# $PYTHON; PACKAGE is its Debian package, the pip name is the module's).
DEPS='
test cmd qemu-system-x86_64 qemu-system-x86
test cmd qemu-system-aarch64 qemu-system-arm
test cmd aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu
test dir /usr/lib/grub/i386-pc grub-pc-bin
test cmd grub-mkrescue grub-common
test cmd xorriso xorriso
test cmd mformat mtools
test cmd gcc gcc
test cmd make make
test cmd ccache ccache
test cmd ld binutils
test cmd objcopy binutils
test cmd python3 python3
test cmd pkg-config pkg-config
test py pytest python3-pytest
test py pexpect python3-pexpect
test py xdist python3-pytest-xdist
test cmd spin spin
test cmd sparse sparse
check cmd sparse sparse
check cmd python3 python3
verify cmd spin spin
verify cmd gcc gcc
verify cmd python3 python3
plot py matplotlib python3-matplotlib
test-user cmd qemu-x86_64 qemu-user
test-user pkg liburcu-dev liburcu-dev
test-user pkg libcuckoo-dev libcuckoo-dev
test-user pkg libck-dev libck-dev
test-user pkg libtbb-dev libtbb-dev
test-user cmd g++ g++
test-user cmd pkg-config pkg-config
test-user cmd valgrind valgrind
uspace-bench pkg liburcu-dev liburcu-dev
uspace-bench pkg libcuckoo-dev libcuckoo-dev
uspace-bench pkg libck-dev libck-dev
uspace-bench pkg libtbb-dev libtbb-dev
uspace-bench cmd g++ g++
uspace-bench cmd valgrind valgrind
uspace-bench cmd pkg-config pkg-config
uspace-bench cmd qemu-x86_64 qemu-user
uspace-bench py matplotlib python3-matplotlib
memcached cmd gcc gcc
memcached cmd make make
memcached cmd pkg-config pkg-config
memcached dir /usr/include/event2 libevent-dev
memcached cmd dpkg-source dpkg-dev
memcached cmd xz xz-utils
memcached cmd prove perl
memcached cmd memccapable libmemcached-tools
memcached cmd memcaslap libmemcached-tools
memcached cmd perf linux-perf
memcached cmd python3 python3
memcached cmd valgrind valgrind
plugin cmd qemu-system-x86_64 qemu-system-x86
plugin cmd gcc gcc
plugin cmd make make
plugin cmd dpkg-source dpkg-dev
plugin cmd xz xz-utils
'

check_only=0
groups=()
for arg in "$@"; do
    case "$arg" in
        --check) check_only=1 ;;
        test|test-user|check|verify|plot|uspace-bench|memcached|plugin) groups+=("$arg") ;;
        *) echo "usage: $0 [--check] [test|test-user|check|verify|plot|uspace-bench|memcached|plugin]..." >&2; exit 2 ;;
    esac
done
[ ${#groups[@]} -ne 0 ] || groups=(test)

# Is $PYTHON Debian's own interpreter (the one python3-* packages serve)?
python_is_debian() {
    local path
    path=$(command -v "$PYTHON" 2>/dev/null) || return 0   # absent: apt brings it
    path=$(readlink -f "$path")
    case "$path" in
        /usr/bin/python3*) return 0 ;;
        *) return 1 ;;
    esac
}

have() {        # have KIND WHAT
    case "$1" in
        cmd) command -v "$2" >/dev/null 2>&1 ;;
        dir) [ -d "$2" ] ;;
        pkg) dpkg-query -W -f='${Status}' "$2" 2>/dev/null |
                 grep -q 'install ok installed' ;;
        py) command -v "$PYTHON" >/dev/null 2>&1 &&
                "$PYTHON" -c "import $2" >/dev/null 2>&1 ;;
    esac
}

# The pip distribution of a Python module (the module's name unless listed).
pip_name() {
    case "$1" in
        xdist) echo pytest-xdist ;;
        *) echo "$1" ;;
    esac
}

dedup() { printf '%s\n' "$@" | awk 'NF && !seen[$0]++' | tr '\n' ' ' | sed 's/ $//'; }

# Fills pkgs (Debian packages to install) and mods (pip modules).
check() {
    pkgs=()
    mods=()
    local group kind what package g wanted
    while read -r group kind what package; do
        [ -n "$group" ] || continue
        wanted=0
        for g in "${groups[@]}"; do
            [ "$g" = "$group" ] && wanted=1
        done
        [ "$wanted" = 1 ] || continue
        have "$kind" "$what" && continue
        if [ "$kind" = py ] && ! python_is_debian; then
            mods+=("$(pip_name "$what")")
        else
            pkgs+=("$package")
        fi
    done <<< "$DEPS"
}

# The plugin group's header: Debian's qemu source package, the version of
# the installed qemu-system-x86 (its plugin API must match the binary's).
PLUGIN_HDR_DIR=${PLUGIN_HDR_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build/deps/qemu-plugin}
QEMU_SRC_LIST=/etc/apt/sources.list.d/cht-qemu-src.sources

# have_deb_src, deb_src_suite, write_deb_src (shared with contrib/memcached/deps.sh).
. "$(dirname "$0")/deb-src.sh"

plugin_header() {
    local ver suite tmp orig
    ver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null || true)
    if [ -z "$ver" ]; then
        echo "ensure-deps: qemu-system-x86 is not installed (needed for its plugin header)" >&2
        return 1
    fi
    if [ -f "$PLUGIN_HDR_DIR/qemu-plugin.h" ] &&
       [ "$(cat "$PLUGIN_HDR_DIR/VERSION" 2>/dev/null)" = "$ver" ]; then
        return 0
    fi
    if ! have_deb_src; then
        suite=$(deb_src_suite)
        if [ "$check_only" = 1 ] || [ "$(id -u)" != 0 ] || [ -z "$suite" ]; then
            echo "ensure-deps: apt has no deb-src entry for Debian's qemu source; as root, add one for your suite to $QEMU_SRC_LIST and run apt-get update" >&2
            return 1
        fi
        echo "ensure-deps: adding deb-src for $suite ($QEMU_SRC_LIST)"
        write_deb_src "$QEMU_SRC_LIST" "$suite" \
            "Added by tools/ensure-deps.sh (group plugin): QEMU's source package, for" \
            "its plugin header (apt-get source --download-only qemu)."
    fi
    if [ "$check_only" = 1 ]; then
        echo "ensure-deps: QEMU's plugin header is not in $PLUGIN_HDR_DIR (run tools/ensure-deps.sh plugin)" >&2
        return 1
    fi
    tmp="$PLUGIN_HDR_DIR.tmp"
    rm -rf "$tmp" && mkdir -p "$tmp"
    echo "ensure-deps: apt-get source --download-only qemu=$ver (for qemu-plugin.h)"
    # apt's sandbox user cannot write into the build tree: download as is.
    (cd "$tmp" && apt-get source -q --download-only -o APT::Sandbox::User=root \
        "qemu=$ver" >apt-source.log 2>&1) || { cat "$tmp/apt-source.log" >&2; return 1; }
    orig=$(ls "$tmp"/qemu_*.orig.tar.* 2>/dev/null | head -n 1)
    if [ -z "$orig" ]; then
        echo "ensure-deps: no qemu orig tarball in $tmp" >&2
        ls "$tmp" >&2
        return 1
    fi
    # Only the one header; Debian's patch series does not touch it (checked
    # below: a patch naming it stops the script rather than use a stale copy).
    tar -xf "$orig" -C "$tmp" --wildcards --strip-components=3 '*/include/qemu/qemu-plugin.h'
    if ls "$tmp"/qemu_*.debian.tar.* >/dev/null 2>&1 &&
       tar -xOf "$(ls "$tmp"/qemu_*.debian.tar.* | head -n 1)" --wildcards 'debian/patches/*' 2>/dev/null |
       grep -q '^+++ .*include/qemu/qemu-plugin.h'; then
        echo "ensure-deps: a Debian patch changes qemu-plugin.h; extract with dpkg-source -x instead" >&2
        return 1
    fi
    [ -f "$tmp/qemu-plugin.h" ] || { echo "ensure-deps: qemu-plugin.h not in $orig" >&2; return 1; }
    mkdir -p "$PLUGIN_HDR_DIR"
    mv "$tmp/qemu-plugin.h" "$PLUGIN_HDR_DIR/qemu-plugin.h"
    echo "$ver" > "$PLUGIN_HDR_DIR/VERSION"
    rm -rf "$tmp"
}

want_plugin=0
for g in "${groups[@]}"; do [ "$g" = plugin ] && want_plugin=1; done

check
if [ ${#pkgs[@]} -eq 0 ] && [ ${#mods[@]} -eq 0 ]; then
    [ "$want_plugin" = 0 ] || plugin_header
    exit $?
fi

pkg_list=$(dedup "${pkgs[@]+"${pkgs[@]}"}")
mod_list=$(dedup "${mods[@]+"${mods[@]}"}")

if [ "$check_only" = 1 ] || [ "$(id -u)" != 0 ]; then
    [ -z "$pkg_list" ] || echo "Missing packages. Run: sudo apt-get install -y $pkg_list"
    [ -z "$mod_list" ] || echo "Missing Python modules for $PYTHON. Run: $PYTHON -m pip install $mod_list"
    exit 1
fi

if [ -n "$pkg_list" ]; then
    echo "ensure-deps: installing $pkg_list"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    # shellcheck disable=SC2086  # word splitting of the package list is intended
    apt-get install -y -q --no-install-recommends $pkg_list >/dev/null || true
fi

# Modules $PYTHON still cannot import (apt failed, or a non-Debian Python).
check
still=()
while read -r group kind what package; do
    [ "$kind" = py ] || continue
    for g in "${groups[@]}"; do
        if [ "$g" = "$group" ] && ! have py "$what"; then
            still+=("$(pip_name "$what")")
        fi
    done
done <<< "$DEPS"
mod_list=$(dedup "${still[@]+"${still[@]}"}")
if [ -n "$mod_list" ] && "$PYTHON" -m pip --version >/dev/null 2>&1; then
    echo "ensure-deps: $PYTHON -m pip install $mod_list"
    # shellcheck disable=SC2086
    "$PYTHON" -m pip install -q $mod_list
fi

check
status=0
for m in "${mods[@]+"${mods[@]}"}"; do
    echo "ensure-deps: $PYTHON cannot import $m" >&2
    status=1
done
if [ ${#pkgs[@]} -ne 0 ]; then
    # Debian's python3-* packages are listed here when the module is missing.
    echo "ensure-deps: still missing after installing: $(dedup "${pkgs[@]}")" >&2
    status=1
fi
if [ "$status" = 0 ] && [ "$want_plugin" = 1 ]; then
    plugin_header || status=1
fi
exit $status
