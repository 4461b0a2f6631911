"""Code built against the project from outside it (memcached with libcht).
Run the Python drivers from the repository root as modules:
``python3 -m contrib.memcached.bench``."""
