"""Hung servers, for deadline tests: what a hung database looks like from the client.

:func:`stalled_server` is a TCP server that accepts connections and never answers: the
connection is made (so nothing fails fast), the request is read, and no byte ever comes
back. Any client without a timeout waits forever on it. Binds 127.0.0.1 on a free port.

:func:`stopped` freezes a real server (a process and its children) with SIGSTOP: its
open connections stay open, its kernel still acknowledges what is sent, and nothing
answers, as with a frozen VM; SIGCONT on exit.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path


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


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it, from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def listening_pid(port: int) -> int:
    """The process listening on TCP ``port`` (IPv4 or IPv6), from /proc (Linux): for
    servers a launcher started without handing out their process."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with suppress(OSError), open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:  # LISTEN
                    inodes.add(f"socket:[{inode}]")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    return int(entry.name)
    raise LookupError(f"no process of this user listens on port {port}")


@contextmanager
def stopped(pid: int) -> Iterator[None]:
    """Freeze process ``pid`` and its descendants (SIGSTOP) for the ``with`` block."""
    frozen = _descendants(pid)
    for each in frozen:
        os.kill(each, signal.SIGSTOP)
    try:
        yield
    finally:
        for each in frozen:
            with suppress(ProcessLookupError):
                os.kill(each, signal.SIGCONT)


__all__ = ["listening_pid", "stalled_server", "stopped"]
