"""psycopg's exceptions → the contract's error tree (CONTRACT §6), through the kit's translator.

Dropped connections, pool timeouts, serialization failures, deadlocks and cancelled
statements are transient (the facade retries idempotent calls); a missing table behind
a known index is "not found"; everything else is a :class:`BackendError`. The native
exception is always ``__cause__``. libpq never puts a password in its messages, and
the adapter never puts the conninfo in one.
"""

from __future__ import annotations

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolClosed, PoolTimeout

from vectorport.adapterkit import ErrorKind, ErrorTranslator, VectorportError

_TRANSIENT: tuple[type[BaseException], ...] = (
    psycopg.OperationalError,  # includes QueryCanceled, AdminShutdown, lost connections
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
    pg_errors.LockNotAvailable,
    PoolTimeout,
)


def classify(exc: BaseException) -> ErrorKind:
    if isinstance(exc, pg_errors.UndefinedTable):
        return ErrorKind.NOT_FOUND
    if isinstance(exc, _TRANSIENT):
        return ErrorKind.TRANSIENT
    return ErrorKind.OTHER


def _describe(exc: BaseException) -> str:
    if isinstance(exc, PoolClosed):
        return "the adapter is closed"
    diag = getattr(exc, "diag", None)
    text = getattr(diag, "message_primary", None) if diag is not None else None
    if not text:
        lines = str(exc).strip().splitlines()
        text = lines[0] if lines else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


TRANSLATOR = ErrorTranslator("pgvector", classify, _describe)


def translate(exc: BaseException, operation: str, index: str | None = None) -> VectorportError:
    """The contract's error for a native one (raise it ``from exc``)."""
    return TRANSLATOR.error(exc, operation, index=index)


__all__ = ["TRANSLATOR", "classify", "translate"]
