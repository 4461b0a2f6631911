"""frame_free()'s diagnosis is exact, whatever the buddy system did.

``test framedf1`` (unsafe, so not in ``test *``) frees a frame whose lower
buddy was freed just before it, frees more frames than a debug build searches
in the cache, frees the frame again and then enough frames to flush both
copies to the zone.  The first copy merges with its buddy, so the frame is an
interior (FRAME_TAIL) frame of a free block when the second copy arrives: the
flush must still panic naming the double free.  It runs on the release build,
which has no debug search of the cache, so only the flush can catch it.

``test framewc1`` (unsafe) frees an interior frame of an allocated 4-frame
block as a single frame: the panic must name that, not a double free.

The soak repeats framedf1 over 20 boots: every one must give the double-free
reason (the verdict once depended on buddy coalescing).
"""

import os
import re

import pytest

from tools import kconsole
from conftest import MM_BOOT_TIMEOUT as BOOT_TIMEOUT
from conftest import PANIC_TIMEOUT, REPO, expect_test_panic

RELEASE_ELF = os.path.join(REPO, "build", "release", "kernel.elf")
DOUBLE_FREE_RE = re.compile(
    rb"PANIC on CPU \d+: frame_free\(0x[0-9a-f]+, 1\): block is not an "
    rb"allocated single frame \(double free; found when its CPU's cache was "
    rb"flushed\)")
INTERIOR_RE = re.compile(
    rb"PANIC on CPU \d+: frame_free\(0x[0-9a-f]+, 1\): block is not "
    rb"allocated \(inside an allocated block\)")
#: Boots of framedf1 in the soak (20 of 20 must name the double free).
SOAK_BOOTS = 20


def _expect_panic(test, want_re, name):
    with kconsole.Kernel(smp=2, kernel=RELEASE_ELF, name=name) as k:
        k.wait_prompt(BOOT_TIMEOUT)
        expect_test_panic(k, test, want_re, PANIC_TIMEOUT,
                          "the panic %r" % want_re.pattern.decode(),
                          any_panic=True)


def test_double_free_through_cache_panics():
    _expect_panic("framedf1", DOUBLE_FREE_RE, "release-framedf1")


def test_interior_frame_free_panics():
    _expect_panic("framewc1", INTERIOR_RE, "release-framewc1")


@pytest.mark.soak
@pytest.mark.parametrize("boot", range(SOAK_BOOTS))
def test_double_free_reason_every_boot(boot):
    _expect_panic("framedf1", DOUBLE_FREE_RE, "release-framedf1-%02d" % boot)
