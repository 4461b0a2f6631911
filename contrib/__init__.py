"""Code built against the project from outside it (memcached with libcht).

A Python package only so that its drivers run as modules from the
repository root and import the benchmarks' shared code (``bench.results_md``)
as the other drivers do: ``python3 -m contrib.memcached.bench`` (``make
memcached-bench``). The C under contrib/ knows nothing of Python."""
