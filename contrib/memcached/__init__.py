"""memcached with libcht: build.sh, test.py (``make memcached-test``) and
bench.py (``python3 -m contrib.memcached.bench``, ``make memcached-bench``)."""
