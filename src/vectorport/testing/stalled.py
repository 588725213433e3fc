"""A TCP server that accepts connections and never answers, for deadline tests.

What a hung database looks like from the client: the connection is made (so nothing
fails fast), the request is read, and no byte ever comes back. Any client without a
timeout waits forever on it. Binds 127.0.0.1 on a free port.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def stalled_server() -> Iterator[int]:
    """Yield the port of a server that accepts and never answers (closed on exit)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.1)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            conn.setblocking(False)  # read nothing, answer nothing: hold it open
            accepted.append(conn)

    thread = threading.Thread(target=serve, name="stalled-server", daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in accepted:
            conn.close()
        listener.close()


__all__ = ["stalled_server"]
