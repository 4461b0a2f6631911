"""What the memcached scripts (test.py, concurrency.py, bench.py) share: a
free local port and a buffered text-protocol connection to a server on
127.0.0.1. test.py and concurrency.py run as scripts from this directory
(``import mcnet``), bench.py as ``python3 -m contrib.memcached.bench``
(``from . import mcnet``)."""

import socket


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on (at the moment)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Conn:
    """One connection (TCP_NODELAY) with its receive buffer ``buf``."""

    def __init__(self, port, timeout):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def fill_until(self, done, chunk=1 << 16):
        """Receives into ``buf`` until ``done(buf)``; ConnectionError when
        the server closes the connection first."""
        while not done(self.buf):
            d = self.s.recv(chunk)
            if not d:
                raise ConnectionError("server closed the connection")
            self.buf += d
