#!/usr/bin/env bash
# Check (and as root, install) what the userspace peer benchmark needs
# (make -C uspace bench-deps; `make test` does not need any of it).
#
# Debian packages: liburcu-dev (cds_lfht, memb and qsbr flavours), libcuckoo-dev,
# libck-dev (Concurrency Kit: ck_hs, ck_ht, ck_epoch), g++ (libcuckoo is C++),
# valgrind (callgrind instruction counts), linux-perf (optional), pkg-config;
# matplotlib importable by $PYTHON (python3-matplotlib for Debian's python3,
# else pip).
set -euo pipefail

PYTHON=${PYTHON:-python3}
missing=()

need_pkg() {     # need_pkg PACKAGE
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed' ||
        missing+=("$1")
}

check_system() {
    missing=()
    need_pkg liburcu-dev
    need_pkg libcuckoo-dev
    need_pkg libck-dev
    command -v g++ >/dev/null 2>&1 || missing+=(g++)
    command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
}

mpl_ok() {
    "$PYTHON" -c 'import matplotlib' >/dev/null 2>&1
}

python_is_debian() {
    local path
    path=$(command -v "$PYTHON" 2>/dev/null) || return 0
    path=$(readlink -f "$path")
    case "$path" in
        /usr/bin/python3*) return 0 ;;
        *) return 1 ;;
    esac
}

check_system
if ! mpl_ok && python_is_debian; then
    missing+=(python3-matplotlib)
fi
if [ ${#missing[@]} -eq 0 ] && mpl_ok; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    [ ${#missing[@]} -eq 0 ] || echo "Missing packages. Run: sudo apt-get install -y ${missing[*]}"
    mpl_ok || python_is_debian || echo "Missing matplotlib. Run: $PYTHON -m pip install matplotlib"
    exit 1
fi
if [ ${#missing[@]} -ne 0 ]; then
    echo "bench-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends ${missing[*]} >/dev/null
fi
if ! mpl_ok; then
    echo "bench-deps: $PYTHON -m pip install matplotlib"
    "$PYTHON" -m pip install -q matplotlib
fi
check_system
if [ ${#missing[@]} -ne 0 ] || ! mpl_ok; then
    echo "bench-deps: still missing: ${missing[*]} $(mpl_ok || echo matplotlib)" >&2
    exit 1
fi
