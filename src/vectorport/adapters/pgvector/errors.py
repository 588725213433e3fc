"""Turn psycopg's exceptions into the contract's error tree (CONTRACT §6).

Dropped connections, pool timeouts, serialization failures, deadlocks and cancelled
statements are :class:`TransientBackendError` (the facade retries idempotent calls);
a missing table behind a known index is :class:`IndexNotFoundError`; everything else is
:class:`BackendError`. The native exception is always ``__cause__``. libpq never puts a
password in its messages, and the adapter never puts the conninfo in one.
"""

from __future__ import annotations

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolClosed, PoolTimeout

from vectorport.core.errors import (
    BackendError,
    IndexNotFoundError,
    TransientBackendError,
    VectorportError,
)

_TRANSIENT: tuple[type[BaseException], ...] = (
    psycopg.OperationalError,  # includes QueryCanceled, AdminShutdown, lost connections
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
    pg_errors.LockNotAvailable,
    PoolTimeout,
)


def translate(exc: BaseException, operation: str, index: str | None = None) -> VectorportError:
    """The contract's error for a native one (raise it ``from exc``)."""
    if isinstance(exc, VectorportError):
        return exc
    if index is not None and isinstance(exc, pg_errors.UndefinedTable):
        return IndexNotFoundError(index)
    message = f"pgvector {operation} failed: {_describe(exc)}"
    if isinstance(exc, _TRANSIENT):
        return TransientBackendError(message)
    if isinstance(exc, PoolClosed):
        return BackendError(f"pgvector {operation} failed: the adapter is closed")
    return BackendError(message)


def _describe(exc: BaseException) -> str:
    diag = getattr(exc, "diag", None)
    text = getattr(diag, "message_primary", None) if diag is not None else None
    if not text:
        lines = str(exc).strip().splitlines()
        text = lines[0] if lines else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
