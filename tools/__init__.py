"""The host tooling (kconsole, sharing, gensyms, ...), imported by its package
path from the repository root: ``from tools import kconsole``.  The scripts
that import only the standard library also run as files (tools/gensyms.py)."""
