"""A double free that goes through the per-CPU frame cache still panics.

``test framedf1`` (unsafe, so not in ``test *``) frees a frame, frees more
frames than a debug build searches in the cache, frees the frame again and
then enough frames to flush both copies to the zone: the flush must panic
naming the double free.  It runs on the release build, which has no debug
search of the cache, so only the flush can catch it.
"""

import os
import re

import kconsole
from conftest import REPO

RELEASE_ELF = os.path.join(REPO, "build", "release", "kernel.elf")
BOOT_TIMEOUT = 120
PANIC_TIMEOUT = 120
DOUBLE_FREE_RE = re.compile(
    rb"PANIC on CPU \d+: frame_free\(0x[0-9a-f]+, 1\): block is not an "
    rb"allocated single frame \(double free; found when its CPU's cache was "
    rb"flushed\)")


def test_double_free_through_cache_panics():
    with kconsole.Kernel(smp=2, kernel=RELEASE_ELF,
                         name="release-framedf1") as k:
        k.wait_prompt(BOOT_TIMEOUT)
        k.send_line("test framedf1")
        idx, m, before = k.expect(
            [DOUBLE_FREE_RE, re.compile(rb"Test (?:passed|failed)[^\n]*")],
            PANIC_TIMEOUT, "the double-free panic after 'test framedf1'",
            check_panic=False)
        assert idx == 0, "the double free was not caught: %r\n%s" % (
            kconsole.decode(m.group(0)), kconsole.decode(before))
