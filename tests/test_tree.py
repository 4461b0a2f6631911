"""Checks of the source tree, no build and no QEMU.

* Every path a source comment names exists (a comment may still name another
  project's file when it says whose: "Linux's kernel/rcu/rcutorture.c").
* Console commands are registered only in kernel/generic/src/console/.
* ``CHECK`` is defined only in the kernel tests' library
  (kernel/test/testlib.h) and the userspace tests' (uspace/tests/tutil.h).
* docs/LOCKING.md names every lock the kernel initializes.
* The directories' Makefile.inc fragments name every kernel source (make
  list-sources).
* No user space build reads kernel/ and the kernel reads no uspace/ (common/).
* No production C function over 80 lines, no production file over 900, no
  kernel test function over 120 (tools/size_check.py).
* No commit hash or issue number in the comments of kernel/, common/,
  uspace/, tools/, tests/, bench/, verify/ and the Makefiles.
* No function prototype, and no extern object another file also names, in a
  .c file: both belong in a header.
"""

import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: A relative path ending in a source or document suffix.
PATH_RE = re.compile(
    r"(?<![\w<\"$/.-])((?:\.\./)*(?:[\w.+-]+/)+[\w.+-]+\."
    r"(?:c|h|S|md|py|sh|ld|cfg|json|csv|in|map))\b")
#: Directories a comment's path may be relative to.
ROOTS = ["", "kernel/", "kernel/generic/", "kernel/generic/src/",
         "kernel/generic/include/", "kernel/genarch/", "kernel/genarch/src/",
         "kernel/genarch/include/", "kernel/arch/amd64/",
         "kernel/arch/amd64/src/", "kernel/arch/amd64/include/",
         "kernel/test/", "uspace/", "uspace/lib/", "bench/", "tools/",
         "tests/", "common/", "common/include/"]


def tracked(pattern):
    out = subprocess.run(["git", "-C", REPO, "ls-files"], capture_output=True,
                         text=True, check=True).stdout.split()
    return [f for f in out if re.search(pattern, f)]


def comments_of(path, text):
    if path.endswith((".c", ".h", ".S", ".ld", ".pml")):
        return re.findall(r"/\*.*?\*/|//[^\n]*", text, flags=re.S)
    return re.findall(r'#[^\n]*|"""[^"]*(?:"(?!"")[^"]*)*"""', text)


def unresolved_paths(files, read=None):
    """(file, path) for every path named in a comment that does not exist."""
    bad = set()
    for f in files:
        text = read(f) if read else open(os.path.join(REPO, f),
                                          errors="replace").read()
        for comment in comments_of(f, text):
            for m in PATH_RE.finditer(comment):
                p = m.group(1)
                if p.startswith("build/") or re.search(
                        r"Linux's[\s*#]*$", comment[:m.start()]):
                    continue
                dirs = [os.path.dirname(f)]
                d = os.path.dirname(f)
                while d:
                    d = os.path.dirname(d)
                    dirs.append(d)
                cands = [os.path.join(REPO, d, p) for d in dirs + ROOTS]
                if not any(os.path.exists(os.path.normpath(c))
                           for c in cands):
                    bad.add((f, p))
    return sorted(bad)


def test_comment_paths_exist():
    files = tracked(r"\.(c|h|S|py|sh|ld)$|Makefile$")
    bad = unresolved_paths(files)
    assert not bad, "comments name paths that do not exist:\n" + "\n".join(
        "%s: %s" % b for b in bad)


def test_checker_finds_a_missing_path():
    text = "/* see docs/NOWHERE.md and common/adt/cht.c */\n"
    bad = unresolved_paths(["kernel/x.c"], read=lambda f: text)
    assert bad == [("kernel/x.c", "docs/NOWHERE.md")]


def test_commands_registered_only_in_console():
    offenders = []
    for f in tracked(r"^kernel/.*\.[ch]$"):
        if f.startswith("kernel/generic/src/console/") or \
                f == "kernel/generic/include/console/kconsole.h":
            continue
        text = open(os.path.join(REPO, f)).read()
        if re.search(r"\bcmd_register\s*\(", text):
            offenders.append(f)
    assert not offenders, "cmd_register outside the console: %s" % offenders


def test_check_macro_only_in_test_libraries():
    allowed = {"kernel/test/testlib.h", "uspace/tests/tutil.h"}
    offenders = [f for f in tracked(r"\.[ch]$")
                 if f not in allowed and re.search(
                     r"#\s*define\s+CHECK\b",
                     open(os.path.join(REPO, f)).read())]
    assert not offenders, "CHECK defined outside the test libraries: %s" % \
        offenders


def test_locking_md_names_every_lock():
    with open(os.path.join(REPO, "docs", "LOCKING.md")) as f:
        doc = f.read()
    names = set()
    for f in tracked(r"^kernel/(generic|genarch|arch)/.*\.c$"):
        text = open(os.path.join(REPO, f)).read()
        names.update(re.findall(
            r'(?:IRQ_)?SPINLOCK_INITIALIZER\("([^"]+)"\)', text))
        names.update(re.findall(
            r'(?:irq_)?spinlock_initialize\([^,]+,\s*"([^"]+)"\)', text))
    missing = sorted(n for n in names if '"%s"' % n not in doc)
    assert not missing, "docs/LOCKING.md does not name: %s" % missing


#: Machine names of x86-64 that generic code must not use: its
#: registers, control registers and flags, MSRs, interrupt controllers,
#: the instructions of privileged work, fields of its saved state, its
#: counters and protection features (TSC, SMEP, SMAP) and the names of its
#: page-table levels (PML4, PDPT; the generic name is the table's root).
X86_NAMES = re.compile(
    r"\b(?:[re](?:ax|bx|cx|dx|si|di|bp|sp|ip)|r(?:8|9|1[0-5])[dwb]?|"
    r"[re]flags|cr[0-4]|x?[re]?msrs?|wrmsr|rdmsr|(?:read|write)_(?:msr|cr\d)|"
    r"x2apic|l?apic\w*|ioapic\w*|\w*_apic_\w*|invlpg|swapgs|sysretq?|iretq?|"
    r"rdtscp?|cpuid|cli|sti|hlt|idt|gdt|tss|"
    r"tsc|smep|smap|\w*pml4\w*|pdpte?s?|"
    r"(?:in|out)[bwl]|%gs|gs_base|isa-debug-exit)\b"
    r"|istate->\w+", re.IGNORECASE)


def x86_names_in(text):
    """(line number, name) of every x86 name in @a text."""
    return [(text.count("\n", 0, m.start()) + 1, m.group(0))
            for m in X86_NAMES.finditer(text)]


def test_generic_code_names_no_x86():
    """kernel/generic reaches the machine only through arch.h's functions
    and the arch headers (docs/ARCHITECTURE.md, "The arch boundary"): none
    of X86_NAMES (registers, instructions, MSRs, APIC, istate fields), in
    code or comments. Words outside the list (GS base, #UD, xchg) may still
    appear in an explanatory comment."""
    bad = []
    for f in tracked(r"^kernel/generic/.*\.[ch]$"):
        text = open(os.path.join(REPO, f)).read()
        bad += ["%s:%d: %s" % (f, n, w) for n, w in x86_names_in(text)]
    assert not bad, "x86 names in generic code:\n" + "\n".join(bad)


def test_x86_name_checker_finds_names():
    text = ("x = istate->rdi;\n/* loads CR3 */\nlapic_eoi();\n"
            "write_msr(1, 2);\nasm(\"invlpg (%0)\");\nrflags\n"
            "/* in TSC cycles */ as->pml4_phys; paging_create_pml4(); SMAP\n")
    assert [w for _, w in x86_names_in(text)] == [
        "istate->rdi", "CR3", "lapic_eoi", "write_msr", "invlpg", "rflags",
        "TSC", "pml4_phys", "paging_create_pml4", "SMAP"]
    # Words that only look alike pass.
    assert x86_names_in("raxle capital rip_ off the stick; sticky pauses") \
        == []


def test_generic_code_includes_no_genarch():
    """Generic code names no platform driver header (genarch/): the page
    hash table (genarch/mm/page_ht.h) is the only genarch header it uses."""
    bad = []
    for f in tracked(r"^kernel/generic/.*\.[ch]$"):
        for m in re.finditer(r"#\s*include\s*<(genarch/[^>]+)>",
                             open(os.path.join(REPO, f)).read()):
            if m.group(1) != "genarch/mm/page_ht.h":
                bad.append("%s: %s" % (f, m.group(1)))
    assert not bad, "generic code includes platform headers: %s" % bad


def test_makefile_names_every_kernel_source():
    """The kernel's object list is the Makefile's, not a `find`: every .c and
    .S under kernel/ and common/ (but common/'s user-space-only files) is named
    there (a file the list forgets would silently not be built), and every
    name there exists."""
    listed = set(subprocess.run(
        ["make", "-s", "--no-print-directory", "list-sources"], cwd=REPO,
        capture_output=True, text=True, check=True).stdout.split())
    tree = set(tracked(r"^(kernel|common)/.*\.(c|S)$"))
    assert not tree - listed, "kernel sources the Makefile does not name: %s" \
        % sorted(tree - listed)
    assert not listed - tree, "the Makefile names missing sources: %s" % \
        sorted(listed - tree)


def make_var(name):
    return subprocess.run(
        ["make", "-s", "--no-print-directory", "print-" + name], cwd=REPO,
        capture_output=True, text=True, check=True).stdout


def makefile_code(path):
    """A Makefile's lines without its comments."""
    with open(os.path.join(REPO, path)) as f:
        return "\n".join(line.split("#", 1)[0] for line in f)


def dep_prerequisites(subdir):
    """Every prerequisite named by the dependency files of the default build
    under build/@a subdir (obj: the kernel, os: lib/c and the OS programs,
    uspace: the Linux libcht) whose source is still in the tree (a stale
    object of a moved source says nothing)."""
    found = set()
    top = os.path.join(REPO, "build", subdir)
    for root, _, files in os.walk(top):
        for name in files:
            if not name.endswith(".d"):
                continue
            path = os.path.join(root, name)
            src = os.path.relpath(path, top)[:-2]
            if subdir in ("obj", "os") and not any(
                    os.path.exists(os.path.join(REPO, src + ext))
                    for ext in ("", ".c", ".S")):
                continue
            with open(path, errors="replace") as f:
                found.update(w for w in f.read().replace("\\\n", " ")
                             .split() if not w.endswith(":"))
    return found


def test_no_kernel_path_in_user_space_builds():
    """Code shared by the kernel and user space lives in common/: no user
    space build (lib/c, the OS libcht, the Linux libcht, bench/userspace)
    compiles or includes anything from kernel/, and the kernel nothing from
    uspace/."""
    for var in ("UCFLAGS", "UCHT_FLAGS", "ULIBC_SRC", "ULIBCHT_SRC"):
        assert "kernel/" not in make_var(var), \
            "%s names kernel/: %s" % (var, make_var(var))
    for var in ("INCLUDES", "KERNEL_SRC"):
        assert "uspace/" not in make_var(var), \
            "%s names uspace/: %s" % (var, make_var(var))
    for mk in ("uspace/Makefile", "bench/userspace/Makefile"):
        assert "kernel/" not in makefile_code(mk), \
            "%s names a path under kernel/" % mk
    # What the last builds really read (their dependency files), if any.
    user = [p for p in dep_prerequisites("os") | dep_prerequisites("uspace")
            if os.path.relpath(p, REPO).startswith("kernel/")]
    assert not user, "user space objects depend on kernel files: %s" % \
        sorted(user)[:10]
    kern = [p for p in dep_prerequisites("obj")
            if os.path.relpath(p, REPO).startswith("uspace/")]
    assert not kern, "kernel objects depend on uspace files: %s" % \
        sorted(kern)[:10]


def _size_check():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "size_check", os.path.join(REPO, "tools", "size_check.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sizes_within_limits():
    """No production C function over 80 lines, no production file over 900,
    no kernel test function over 120 (tools/size_check.py)."""
    sc = _size_check()
    bad = [v for v in sc.violations() if (v[0], v[1]) not in sc.ALLOW]
    assert not bad, "over the size limits:\n" + sc.report(bad)


def test_size_checker_finds_long_functions():
    sc = _size_check()
    body = "\tx++;\n" * 79
    # ok() is 80 lines, at the limit; long_one() is 84.
    text = ("static int ok(int a)\n{\n" + "\tx++;\n" * 77
            + "}\n"
            "struct s { int a; };\n"
            "static const int tab[] = { 1, 2 };\n"
            "/* f(void) { */\n"
            "int\nlong_one(void)\n{\n\tif (x) {\n" + body + "\t}\n}\n")
    vs = sc.violations(["kernel/generic/src/x.c", "kernel/test/x.c"],
                       read=lambda f: text)
    assert vs == [("kernel/generic/src/x.c", "long_one", 84, 80)]
    big = "int a;\n" * 901
    vs = sc.violations(["common/x.h"], read=lambda f: big)
    assert vs == [("common/x.h", None, 901, 900)]
    # common/test/ is kernel test code: the 120-line limit, not 80.
    long_test = "void t(void)\n{\n" + "\tx++;\n" * 118 + "}\n"
    vs = sc.violations(["common/test/x.c", "common/test/y.c"],
                       read=lambda f: long_test if f.endswith("x.c") else text)
    assert vs == [("common/test/x.c", "t", 121, 120)]


#: A commit hash (7 to 40 hex digits with a letter and a digit) or an issue
#: number (the word issue or issues, then a number, "#" before it or not).
HISTORY_RE = re.compile(
    r"(?<!0x)\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b"
    r"|\b[Ii]ssues?\s+#?\d+")
#: (file, match) pairs that look like history and are not: a register value
#: quoted from a test's output; headings of generated results (bench/RESULTS.md,
#: verify/own-variants.txt), which a '#' in a string makes look like comments.
HISTORY_EXEMPT = {("tests/test_regs.py", "0c72973e78feb40f"),
                  ("bench/bench_sharing.py", "issue 30"),
                  ("bench/plotlib/cost.py", "issue 16"),
                  ("bench/test_bench.py", "issue 16"),
                  ("bench/userspace/run_misses.py", "issue 39"),
                  ("verify/own_variants.py", "issue 41")}
#: A model's fingerprint line (verify/fingerprint.py: a source file, a
#: function and 12 hex digits of its hash), data that is not history.
FINGERPRINT_RE = re.compile(r"\S+\.[ch]\s+[\w#]+\s+[0-9a-f]{12}\b")


def history_in_comments(files, read=None):
    """(file, match) for every commit hash or issue number in a comment."""
    bad = []
    for f in files:
        text = read(f) if read else open(os.path.join(REPO, f),
                                          errors="replace").read()
        for comment in comments_of(f, text):
            comment = FINGERPRINT_RE.sub(" ", comment)
            bad += [(f, m.group()) for m in HISTORY_RE.finditer(comment)
                    if (f, m.group()) not in HISTORY_EXEMPT]
    return bad


def test_no_history_in_code_comments():
    """History belongs in git: no commit hash or issue number in the
    comments of kernel/, common/, uspace/, tools/, tests/, bench/ and
    verify/, the Makefiles and the .mk fragments (the explanation stays)."""
    files = tracked(r"^((kernel|common|uspace|tools|tests|bench|verify)/.*"
                    r"\.(c|h|S|py|sh|ld|pml)|(.*/)?Makefile|.*\.mk)$")
    bad = history_in_comments(files)
    assert not bad, "history in code comments:\n" + "\n".join(
        "%s: %s" % b for b in bad)


def test_history_checker_finds_references():
    text = ("/* fixed in 1789d4f (issue 30); mask 0xdeadbeef1 */\n"
            "x = 0xabcdef12; /* deadline */\n")
    assert history_in_comments(["kernel/x.c"], read=lambda f: text) == [
        ("kernel/x.c", "1789d4f"), ("kernel/x.c", "issue 30")]


#: Non-static functions a .c file may declare itself: the sanitizer hooks
#: that GCC's instrumentation calls (no header of ours has them; each is
#: declared above its definition for -Wmissing-prototypes), and three kernel
#: tests' helpers kept global so that a backtrace or a KCSAN report names
#: them (backtrace1, fault1, kcsan1).
PROTOTYPE_EXEMPT = re.compile(
    r"__(asan|tsan|ubsan)_\w+|backtrace1_walk_own|fault1_touch"
    r"|kcsan1_plain_inc|kcsan1_atomic_inc")
#: A declarator at a line's start: type words, then the function's name
#: and its parameter list (a macro invocation ahead of it is skipped).
DECL_RE = re.compile(r"(?:^|\n)[ \t]*((?:[A-Za-z_]\w*[\s*]+)+?)"
                     r"([A-Za-z_]\w*)\s*\([^()]*\)\s*$")


def prototypes_in_c(files, read=None):
    """(file, line, name) of every file-scope declaration of a non-static
    function in a .c file: one defined in another file or in assembly
    belongs in a header, one used only here is static."""
    sc = _size_check()
    bad = []
    for f in files:
        text = read(f) if read else open(os.path.join(REPO, f),
                                          errors="replace").read()
        src = sc.blank(text)
        depth, start = 0, 0
        for m in re.finditer(r"[{};]", src):
            if m.group() == "{":
                depth += 1
                continue
            if m.group() == "}":
                depth = max(0, depth - 1)
                start = m.end() if depth == 0 else start
                continue
            if depth:
                continue
            stmt = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)",
                          " ", src[start:m.start()])
            start = m.end()
            d = DECL_RE.search(stmt)
            if (not d or "=" in stmt or re.match(
                    r"\s*(static|typedef)\b", d.group(1))
                    or PROTOTYPE_EXEMPT.fullmatch(d.group(2))):
                continue
            line = src.count("\n", 0, m.start()) + 1
            bad.append((f, line, d.group(2)))
    return bad


def test_no_prototypes_in_c_files():
    """A function called across files or across the assembly/C boundary is
    declared in a header (arch/entry.h, arch/context.h, ...), never in the
    .c file that calls or defines it."""
    bad = prototypes_in_c(tracked(r"^(kernel|common|uspace)/.*\.c$"))
    assert not bad, "prototypes in .c files:\n" + "\n".join(
        "%s:%d: %s" % b for b in bad)


#: An extern object declaration: no parentheses (a function's declaration
#: has them), its declarators up to the semicolon.
EXTERN_RE = re.compile(r"\bextern\b([^;{}()]*);")


def externs_in_c(files, read=None):
    """(file, line, name) of every extern object declaration in a .c file
    that belongs in a header: one inside a function, or one of an object
    that another of the files also names (a symbol of the linker script or
    the assembly that more than one file reads is declared once, in a
    header, so that the declarations cannot disagree). A symbol only its
    own file reads (an assembly table, a generated list) stays there."""
    sc = _size_check()
    srcs = {f: sc.blank(read(f) if read else open(
        os.path.join(REPO, f), errors="replace").read()) for f in files}
    idents = {f: set(re.findall(r"[A-Za-z_]\w*", s)) for f, s in srcs.items()}
    bad = []
    for f, src in srcs.items():
        for m in EXTERN_RE.finditer(src):
            depth = src.count("{", 0, m.start()) - src.count("}", 0, m.start())
            line = src.count("\n", 0, m.start()) + 1
            for decl in m.group(1).split(","):
                n = re.search(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$",
                              decl.strip())
                if not n:
                    continue
                name = n.group(1)
                if depth > 0 or any(name in idents[g] for g in srcs if g != f):
                    bad.append((f, line, name))
    return bad


def test_no_shared_externs_in_c_files():
    """An object defined by the linker script or the assembly and read by
    more than one file is declared once, in a header (debug/sections.h,
    arch/boot.h), never by an extern inside a .c file, and never inside a
    function."""
    files = tracked(r"^(kernel|common|uspace)/.*\.[ch]$")
    bad = [b for b in externs_in_c(files) if b[0].endswith(".c")]
    assert not bad, "extern objects declared in .c files:\n" + "\n".join(
        "%s:%d: %s" % b for b in bad)


def test_extern_checker_finds_declarations():
    texts = {"kernel/a.c": ("extern uint64_t boot_pml4[512];\n"
                            "extern const char only_here[];\n"
                            "extern void f(int a);\n"
                            "void g(void)\n{\n\textern const int tab[];\n}\n"),
             "kernel/b.c": ("extern char ktext_start[], kernel_end[];\n"
                            "/* extern int in_comment; */\n"),
             "kernel/c.c": "int x = boot_pml4[0] + kernel_end[0];\n"}
    assert externs_in_c(sorted(texts), read=texts.get) == [
        ("kernel/a.c", 1, "boot_pml4"), ("kernel/a.c", 6, "tab"),
        ("kernel/b.c", 1, "kernel_end")]


def test_prototype_checker_finds_declarations():
    text = ("static int helper(int a);\n"
            "typedef void (*fn_t)(void);\n"
            "uint64_t table[512] ALIGNED(4096);\n"
            "static void (*hook)(void);\n"
            "void __asan_load8(uintptr_t a);\n"
            "FOO(1)\n"
            "void context_switch(context_t *save,\n"
            "    context_t *load);\n"
            "__attribute__((noinline)) int\nua_copy(void *d, size_t n);\n"
            "int x = f(1);\n"
            "void g(void)\n{\n\tint h(int);\n}\n")
    assert prototypes_in_c(["kernel/x.c"], read=lambda f: text) == [
        ("kernel/x.c", 8, "context_switch"), ("kernel/x.c", 10, "ua_copy")]
