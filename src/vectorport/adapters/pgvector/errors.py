"""psycopg's exceptions → the contract's error tree (CONTRACT §6), through the kit's translator.

Dropped connections, pool timeouts, serialization failures, deadlocks and cancelled
statements are transient (the facade retries idempotent calls); a missing table behind
a known index is "not found"; everything else is a :class:`BackendError`. The native
exception is always ``__cause__``. libpq never puts a password in its messages, and
the adapter never puts the conninfo in one; but psycopg attaches the failed connection
(``pgconn``, which holds the whole conninfo, password included) to the exception of a
failed connection attempt, so :func:`scrub` drops it from every exception in the chain
before that becomes ``__cause__``. A refused password (or user) is a :class:`ConfigError`:
retrying cannot cure it.
"""

from __future__ import annotations

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolClosed, PoolTimeout

from vectorport.adapterkit import ConfigError, ErrorKind, ErrorTranslator, VectorportError
from vectorport.adapterkit.errors import chain

_AUTH_FAILURES = ("password authentication failed", "authentication failed",
                  "no password supplied", "password is required", "role", "pg_hba.conf")
"""Phrases of libpq's and the server's refusals of a login (the server sends no SQLSTATE
to a client it has not let in); "role" covers 'role "x" does not exist'."""

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


def scrub(exc: BaseException) -> None:
    """Forget the failed connection psycopg keeps on the exception (its conninfo has
    the password); the message, the SQLSTATE and the diagnostics stay."""
    if isinstance(exc, psycopg.Error) and getattr(exc, "_pgconn", None) is not None:
        exc._pgconn = None


def is_login_refused(exc: BaseException) -> bool:
    if not isinstance(exc, psycopg.OperationalError) or getattr(exc, "sqlstate", None):
        return False
    text = str(exc).lower()
    return "fatal" in text and any(phrase in text for phrase in _AUTH_FAILURES)


TRANSLATOR = ErrorTranslator("pgvector", classify, _describe, scrub)


def translate(exc: BaseException, operation: str, index: str | None = None) -> VectorportError:
    """The contract's error for a native one (raise it ``from exc``: it is scrubbed)."""
    for link in chain(exc):
        scrub(link)
    if is_login_refused(exc):
        return ConfigError(f"pgvector {operation} failed: the server refused the login "
                           f"({_describe(exc)}); check the user name and the password")
    return TRANSLATOR.error(exc, operation, index=index)


__all__ = ["TRANSLATOR", "classify", "is_login_refused", "scrub", "translate"]
