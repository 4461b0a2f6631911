#!/usr/bin/env bash
# Check (and as root, install) what building and testing the kernel needs.
#
# Debian packages: qemu-system-x86, grub-pc-bin, grub-common, xorriso, mtools,
# gcc, make, binutils, python3, pkg-config (the userspace library's install
# test; its sanitizer runtimes come with gcc); and pytest + pexpect importable
# by the Python that runs the tests ($PYTHON, default python3).
#
# Quiet when everything is present.  When something is missing:
#   - as root: apt-get update, apt-get install -y the missing packages; if
#     $PYTHON still cannot import pytest/pexpect (e.g. a pyenv Python that
#     does not see Debian's modules), "$PYTHON -m pip install pytest pexpect";
#   - otherwise: print the command to run and exit 1.
set -euo pipefail

PYTHON=${PYTHON:-python3}
missing=()

need_cmd() {    # need_cmd COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 || missing+=("$2")
}

check_system() {
    missing=()
    need_cmd qemu-system-x86_64 qemu-system-x86
    [ -d /usr/lib/grub/i386-pc ] || missing+=(grub-pc-bin)
    need_cmd grub-mkrescue grub-common
    need_cmd xorriso xorriso
    need_cmd mformat mtools
    need_cmd gcc gcc
    need_cmd make make
    need_cmd ld binutils
    need_cmd objcopy binutils
    need_cmd python3 python3
    need_cmd pkg-config pkg-config
}

python_ok() {
    command -v "$PYTHON" >/dev/null 2>&1 &&
        "$PYTHON" -c 'import pytest, pexpect' >/dev/null 2>&1
}

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

dedup() { printf '%s\n' "$@" | awk 'NF && !seen[$0]++' | tr '\n' ' ' | sed 's/ $//'; }

check_system
py_missing=0
python_ok || py_missing=1
if [ "$py_missing" = 1 ] && python_is_debian; then
    missing+=(python3-pytest python3-pexpect)
fi

if [ ${#missing[@]} -eq 0 ] && [ "$py_missing" = 0 ]; then
    exit 0
fi

pkgs=$(dedup "${missing[@]+"${missing[@]}"}")

if [ "$(id -u)" != 0 ]; then
    if [ -n "$pkgs" ]; then
        echo "Missing packages. Run: sudo apt-get install -y $pkgs"
    fi
    if [ "$py_missing" = 1 ] && ! python_is_debian; then
        echo "Missing Python modules for $PYTHON. Run: $PYTHON -m pip install pytest pexpect"
    fi
    exit 1
fi

if [ -n "$pkgs" ]; then
    echo "ensure-deps: installing $pkgs"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086  # word splitting of the package list is intended
    apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $pkgs >/dev/null
fi

if ! python_ok; then
    if "$PYTHON" -m pip --version >/dev/null 2>&1; then
        echo "ensure-deps: $PYTHON -m pip install pytest pexpect"
        "$PYTHON" -m pip install -q pytest pexpect
    fi
fi

check_system
status=0
if [ ${#missing[@]} -ne 0 ]; then
    echo "ensure-deps: still missing after installing: $(dedup "${missing[@]}")" >&2
    status=1
fi
if ! python_ok; then
    echo "ensure-deps: $PYTHON cannot import pytest and pexpect" >&2
    status=1
fi
exit $status
