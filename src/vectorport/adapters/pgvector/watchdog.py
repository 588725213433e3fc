"""A client-side bound on a connection whose server stops answering mid-query.

``connect_timeout`` bounds connecting and the pool's timeout bounds waiting for a
connection, but once a query is sent libpq waits for its answer for as long as the
socket stays open. Nothing the server enforces helps when the server itself is hung (a
PostgreSQL stopped with SIGSTOP, a frozen VM): ``statement_timeout`` and a cancel
request need the server to act, and TCP keepalives and ``tcp_user_timeout`` are
answered by the server's kernel, which is still running. So the bound is on our side:
while a call holds a connection, the connection is armed with the call's deadline, and
one watchdog thread shuts the socket down when the deadline passes. The blocked
``recv`` then returns at once, psycopg reports the connection broken (the pool discards
it), and the adapter raises :class:`DeadlineExceededError`. A query that simply takes
long on a live server is ended the same way: the server checks for its client while a
statement runs (``client_connection_check_interval``, :data:`.options.CLIENT_CHECK`),
sees the closed connection and abandons the statement.

One thread serves every adapter in the process; arming and disarming cost a lock, and
a wake-up only when the new deadline comes before the thread's next wake anyway. Calls
one after another with the same timeout have ever later deadlines, so they wake it
never: a wake-up per call cost the query path 0.8 ms (the woken thread waits for the
interpreter lock while the caller decodes the answer).
"""

from __future__ import annotations

import math
import socket
import threading
import time
from typing import Any, Protocol

from vectorport.adapters.pgvector.errors import translate
from vectorport.core.retry import expired, remaining


class _Socketed(Protocol):
    def fileno(self) -> int: ...


def sever(conn: _Socketed) -> None:
    """Shut down ``conn``'s socket for both directions (a shutdown acts on the socket,
    so it reaches the connection's own descriptor through a duplicate)."""
    try:
        fd = conn.fileno()
        dup = socket.socket(fileno=socket.dup(fd))
    except (OSError, ValueError):
        return  # already closed
    try:
        dup.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        dup.close()


_MAX_WAIT = 3600.0


class Watchdog:
    """Connections armed with a deadline (:func:`time.monotonic`), severed once it has
    passed; a token per arming says afterwards whether it fired."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())  # not reentrant: cheaper
        self._armed: dict[int, tuple[float, _Socketed]] = {}
        self._fired: set[int] = set()
        self._next = 0
        self._thread: threading.Thread | None = None
        self._wake_at = math.inf
        """When the thread looks at the armed connections next (it is told earlier only
        for a deadline before this)."""

    def arm(self, conn: _Socketed, at: float) -> int:
        with self._cond:
            token = self._next
            self._next += 1
            self._armed[token] = (at, conn)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, daemon=True,
                                                name="vectorport-pgvector-watchdog")
                self._thread.start()
            elif at < self._wake_at:
                self._wake_at = at
                self._cond.notify()
        return token

    def disarm(self, token: int) -> bool:
        """Stop watching; ``True`` if the deadline passed and the connection was severed."""
        with self._cond:
            self._armed.pop(token, None)
            if token in self._fired:
                self._fired.discard(token)
                return True
            return False

    def _watch(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for token, (at, conn) in list(self._armed.items()):
                    if at <= now:
                        del self._armed[token]
                        self._fired.add(token)
                        sever(conn)
                earliest = min((a for a, _ in self._armed.values()), default=None)
                # capped: a far deadline (vectorport.deadline(1e10)) must not overflow
                # the platform's time_t and end this thread; it is simply looked at again
                wait = None if earliest is None else min(_MAX_WAIT, max(0.0, earliest - now))
                self._wake_at = math.inf if wait is None else now + wait
                self._cond.wait(wait)


WATCHDOG = Watchdog()


class within_deadline:  # noqa: N801 - used as the function-like context manager it was
    """Hold ``conn`` (a sync or async psycopg connection) for one call: severed when the
    call's deadline passes, which then surfaces as :class:`DeadlineExceededError`.

    A class rather than a ``@contextmanager`` generator: every query and fetch enters
    one, and the generator's machinery cost ~1 µs of each."""

    __slots__ = ("_conn", "_index", "_operation", "_token")

    def __init__(self, conn: Any, operation: str, index: str | None = None) -> None:
        self._conn, self._operation, self._index = conn, operation, index
        self._token: int | None = None

    def __enter__(self) -> None:
        left = remaining()
        if left is not None:
            self._token = WATCHDOG.arm(self._conn, time.monotonic() + left)

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        token, self._token = self._token, None
        if token is None or not WATCHDOG.disarm(token):
            return
        if isinstance(exc, Exception):  # the deadline passed: that is why it failed
            cause = translate(exc, self._operation, self._index)  # scrubbed, like every native error
            raise expired(self._operation, cause) from cause
        # severed just after the answer came: the pool must not hand it out again
        self._conn.pgconn.finish()


__all__ = ["WATCHDOG", "Watchdog", "sever", "within_deadline"]
