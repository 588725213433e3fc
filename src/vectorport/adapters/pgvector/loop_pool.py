"""Async connections for one event loop, opened on demand by the task that needs one.

psycopg_pool's ``AsyncConnectionPool`` opens, grows and checks its connections from
background tasks bound to its event loop. Under ``asyncio.run`` those tasks outlive the
caller's work: at loop shutdown a pending connection attempt fails ("error connecting")
and a later ``asyncio.run`` in the same process could hang. Here nothing runs in the
background: a task that needs a connection takes an idle one or opens it itself, and
gives it back when done; at most ``max_size`` are in use at once. When the loop is gone,
:meth:`LoopPool.discard` closes the idle connections without needing the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus


class LoopPool:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        conninfo: str,
        max_size: int,
        connect_kwargs: dict[str, Any],
        configure: Callable[[AsyncConnection[Any]], Awaitable[None]],
    ) -> None:
        self.loop = loop
        self._conninfo = conninfo
        self._kwargs = connect_kwargs
        self._configure = configure
        self._slots = asyncio.Semaphore(max_size)
        self._idle: list[AsyncConnection[Any]] = []

    async def _open(self) -> AsyncConnection[Any]:
        conn = await AsyncConnection.connect(self._conninfo, **self._kwargs)
        try:
            await self._configure(conn)
        except BaseException:
            await conn.close()
            raise
        return conn

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        async with self._slots:
            conn = self._idle.pop() if self._idle else await self._open()
            healthy = False
            try:
                yield conn
                healthy = True
            finally:
                reusable = (healthy and not conn.closed
                            and conn.info.transaction_status == TransactionStatus.IDLE)
                if reusable:
                    self._idle.append(conn)
                else:
                    await conn.close()

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.close()

    def discard(self) -> None:
        """Close idle connections synchronously (their event loop may be closed)."""
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.pgconn.finish()
