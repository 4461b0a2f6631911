"""tools/ensure-deps.sh with a Python that is not Debian's (pyenv, a venv).

Such an interpreter does not see Debian's python3-* packages, so the script
installs the missing modules with ``$PYTHON -m pip install``. The pip name of
a module is not always the module's name: the module ``xdist`` is the
distribution ``pytest-xdist`` (the PyPI project ``xdist`` is something else).
Here a fake interpreter that lacks ``xdist`` and records its pip calls stands
in for $PYTHON; every other dependency must already be present (the test is
skipped otherwise, so that it never runs apt-get). No build, no QEMU.
"""

import os
import subprocess

import pytest

from conftest import REPO

SCRIPT = os.path.join(REPO, "tools", "ensure-deps.sh")

# A stand-in for $PYTHON: "import xdist" fails until "pip install
# pytest-xdist" has run; other imports succeed; pip calls are logged.
FAKE_PYTHON = r"""#!/bin/bash
dir=$(dirname "$0")
if [ "$1" = -c ]; then
    case "$2" in
        *xdist*) [ -f "$dir/xdist-installed" ] ;;
        *) exit 0 ;;
    esac
    exit $?
fi
if [ "$1" = -m ] && [ "$2" = pip ]; then
    [ "$3" = --version ] && exit 0
    echo "${@:3}" >> "$dir/pip.log"
    for a in "${@:3}"; do
        [ "$a" = pytest-xdist ] && touch "$dir/xdist-installed"
    done
    exit 0
fi
exit 1
"""


@pytest.fixture
def fake_python(tmp_path):
    path = tmp_path / "python3"
    path.write_text(FAKE_PYTHON)
    path.chmod(0o755)
    return path


def run_script(python, *args):
    env = dict(os.environ, PYTHON=str(python))
    return subprocess.run(["bash", SCRIPT, *args, "test"], env=env,
                          capture_output=True, text=True, timeout=120)


def others_present():
    """Everything but the Python modules is installed (so no apt-get)."""
    res = subprocess.run(["bash", SCRIPT, "--check", "test"],
                         capture_output=True, text=True, timeout=120)
    return "Missing packages" not in res.stdout


def test_check_names_pip_distribution(fake_python):
    """--check prints the pip line with the distribution's name."""
    if not others_present():
        pytest.skip("Debian packages missing: the script would list them too")
    res = run_script(fake_python, "--check")
    assert res.returncode == 1, res.stdout + res.stderr
    line = [ln for ln in res.stdout.splitlines() if "pip install" in ln]
    assert line and line[0].split()[-1] == "pytest-xdist", res.stdout
    print("Test passed")


@pytest.mark.skipif(os.geteuid() != 0, reason="the install path runs as root only")
def test_root_installs_pip_distribution(fake_python, tmp_path):
    """As root, pip is asked for pytest-xdist, and the check then passes."""
    if not others_present():
        pytest.skip("Debian packages missing: the script would run apt-get")
    res = run_script(fake_python)
    log = (tmp_path / "pip.log").read_text() if (tmp_path / "pip.log").exists() else ""
    assert "install" in log, res.stdout + res.stderr
    assert log.split()[-1] == "pytest-xdist", (
        f"pip was asked for {log.split()[-1]!r}: " + res.stdout + res.stderr)
    assert res.returncode == 0, res.stdout + res.stderr
    print("Test passed")
