#!/usr/bin/env bash
# Make matplotlib importable by the Python that runs the benchmark plots
# ($PYTHON, default python3).  Only `make bench` / `make bench-quick` need it;
# `make test` does not.
#
# Quiet when `$PYTHON -c 'import matplotlib'` works.  Otherwise:
#   - as root, for Debian's own python3: apt-get install python3-matplotlib;
#   - as root, for another interpreter (e.g. pyenv): $PYTHON -m pip install
#     matplotlib (falls back to that for Debian's python3 too if apt fails);
#   - not root: print the command to run and exit 1.
set -euo pipefail

PYTHON=${PYTHON:-python3}

have_mpl() {
    "$PYTHON" -c 'import matplotlib' >/dev/null 2>&1
}

python_is_debian() {
    local path
    path=$(command -v "$PYTHON" 2>/dev/null) || return 1
    path=$(readlink -f "$path")
    case "$path" in
        /usr/bin/python3*) return 0 ;;
        *) return 1 ;;
    esac
}

have_mpl && exit 0

if [ "$(id -u)" != 0 ]; then
    if python_is_debian; then
        echo "matplotlib is missing. Run: sudo apt-get install -y python3-matplotlib"
    else
        echo "matplotlib is missing for $PYTHON. Run: $PYTHON -m pip install matplotlib"
    fi
    exit 1
fi

if python_is_debian; then
    echo "ensure-matplotlib: apt-get install python3-matplotlib"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null || true
    apt-get install -y -q --no-install-recommends python3-matplotlib >/dev/null || true
fi
if ! have_mpl && "$PYTHON" -m pip --version >/dev/null 2>&1; then
    echo "ensure-matplotlib: $PYTHON -m pip install matplotlib"
    "$PYTHON" -m pip install -q matplotlib
fi
if ! have_mpl; then
    echo "ensure-matplotlib: $PYTHON still cannot import matplotlib" >&2
    exit 1
fi
