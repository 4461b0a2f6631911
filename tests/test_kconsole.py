"""tools/kconsole.py against a stand-in for QEMU (no kernel, a few seconds).

``FAKE`` plays a console on the pseudo-terminal that kconsole.Kernel opens:
a banner, the prompt, the echo of every byte typed, an answer per line. Its
commands make the driver meet what a kernel can do: a panic report, a
console that stops reading while input keeps coming, a command that never
answers, QEMU exiting on its own and ``halt`` (exit status 33).
"""

import re
import sys

import pytest

from tools import kconsole

FAKE = r'''
import os, sys, time, tty
tty.setraw(0)
def out(text):
    os.write(1, text.replace("\n", "\r\n").encode())
out("fake kernel booting\n" + "x" * 5000 + "\n")
out("kconsole> ")
line = b""
while True:
    c = os.read(0, 1)
    if not c:
        sys.exit(0)
    if c != b"\r":
        os.write(1, c)
        line += c
        continue
    out("\n")
    words = line.decode().split()
    line = b""
    if words == ["halt"]:
        sys.exit(33)
    if words == ["die"]:
        sys.exit(1)
    if words == ["silent"]:
        time.sleep(60)
    if words == ["panic"]:
        out("PANIC on CPU 0: fake\n")
        time.sleep(0.5)
        out("registers ...\nbacktrace ...\n")
    elif words == ["bg"]:
        # A background task: a line before the prompt, one after it.
        out("bg: started\nbg: early\nkconsole> ")
        time.sleep(0.3)
        out("bg: late\n")
        continue
    elif words[:1] == ["deaf"]:
        time.sleep(float(words[1]))
        out("awake\n")
    elif words:
        out("Unknown command: %s \n" % " ".join(words))
    out("kconsole> ")
'''


@pytest.fixture
def fake(tmp_path):
    """A Kernel whose "QEMU" is FAKE (its QEMU arguments ignored)."""
    script = tmp_path / "fake_qemu.py"
    script.write_text(FAKE)
    image = tmp_path / "kernel.elf"
    image.write_bytes(b"")
    k = kconsole.Kernel(kernel=str(image), log_dir=str(tmp_path),
                        name="fake", qemu="%s %s" % (sys.executable, script))
    k.start()
    yield k
    k.close()


def test_prompt_and_commands(fake):
    """The boot output before the prompt, then one answer per command."""
    before = fake.wait_prompt(10)
    assert before.startswith("fake kernel booting\n") and "x" * 5000 in before
    assert fake.cmd("hello", 10) == "Unknown command: hello "
    assert fake.cmd("a b  c", 10) == "Unknown command: a b c "
    assert fake.halt(10) == kconsole.HALT_STATUS
    with open(fake.log_path, "rb") as f:
        assert f.read() == bytes(fake.buf)


def test_flood_while_the_console_does_not_read(fake):
    """Input sent while the console does not read (the terminal fills up)
    is all delivered once it reads again, every line answered in order."""
    fake.wait_prompt(10)
    fake.send_line("deaf 2")
    lines = ["line%04d-%s" % (i, "y" * 60) for i in range(300)]
    for line in lines:
        fake.send_line(line, chunk_delay=0)
    fake.wait_for("awake", 10)
    for line in lines:
        fake.wait_for(re.escape("Unknown command: %s " % line), 10)
    fake.wait_prompt(10)


def test_match_offsets_and_rewind(fake):
    """wait_for() returns a match with offsets into buf; setting pos back
    finds the same output again."""
    fake.wait_prompt(10)
    fake.send_line("one")
    fake.send_line("two")
    start = fake.pos
    m = fake.wait_for(r"Unknown command: (t\w+) ", 10)
    assert m.group(1) == b"two"
    assert bytes(fake.buf[m.start():m.end()]) == m.group(0)
    assert m.span() == (m.start(), m.end()) and fake.pos == m.end()
    fake.pos = start
    i, again, before = fake.expect(
        [re.compile(rb"Unknown command: (o\w+) "), re.compile(rb"two")], 10,
        "the first answer")
    assert i == 0 and again.group(1) == b"one"
    assert before == bytes(fake.buf[start:again.start()])


def test_wait_line(fake):
    """A background task's line printed before the prompt that ends the
    output of the command that started it is in cmd()'s output, and
    wait_for() (which searches after that prompt) never sees it;
    wait_line() finds it in the output, and waits for a later line."""
    fake.wait_prompt(10)
    out = fake.cmd("bg", 10)
    assert out == "bg: started\nbg: early"
    m = fake.wait_line(out, r"^bg: (e\w+)$", 10)
    assert m.group(1) == "early"
    m = fake.wait_line(out, "bg: late", 10)
    assert m.group(0) == b"bg: late"
    with pytest.raises(kconsole.KernelTimeout):
        fake.wait_for("bg: early", 1)
    assert "Unknown command: x " in fake.cmd("x", 10)


def test_panic(fake):
    """A panic report ends the wait with KernelPanic, quoting the report."""
    fake.wait_prompt(10)
    with pytest.raises(kconsole.KernelPanic) as e:
        fake.cmd("panic", 10)
    assert "PANIC on CPU 0: fake" in str(e.value)
    assert "backtrace" in str(e.value)


def test_panic_expected(fake):
    """With check_panic=False the report is an ordinary pattern."""
    fake.wait_prompt(10)
    fake.send_line("panic")
    i, m, _ = fake.expect([re.compile(rb"PANIC on CPU \d+: (\w+)")], 10,
                          "the panic", check_panic=False)
    assert i == 0 and m.group(1) == b"fake"


def test_timeout(fake):
    """A command that never answers ends in KernelTimeout."""
    fake.wait_prompt(10)
    with pytest.raises(kconsole.KernelTimeout) as e:
        fake.cmd("silent", 1)
    assert "timed out after 1 s" in str(e.value)


def test_exit(fake):
    """QEMU exiting on its own ends the wait with its status."""
    fake.wait_prompt(10)
    with pytest.raises(kconsole.KernelExited) as e:
        fake.cmd("die", 10)
    assert e.value.status == 1
    assert "exited on its own with status 1" in str(e.value)
