"""The userspace peer benchmark's drivers: ``python3 -m bench.userspace.run``
and ``python3 -m bench.userspace.run_sharing`` from the repository root."""
