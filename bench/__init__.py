"""The benchmark drivers.  Run them from the repository root as modules
(``python3 -m bench.chtbench --suite cost``, ``python3 -m bench.plot``): they
import each other and tools/ by package path (``from tools import kconsole``),
with no sys.path edits."""
