"""Chroma and transport exceptions → the contract's error tree, through the kit's translator.

Nothing raised by ``chromadb`` or ``httpx`` reaches a caller raw: dropped connections,
timeouts and rate limits are transient (the facade retries idempotent operations),
Chroma's "not found" is not found, anything else a :class:`BackendError`, the native
exception kept as ``__cause__``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import httpx
from chromadb.errors import ChromaError, NotFoundError, RateLimitError

from vectorport.adapterkit import ErrorKind, ErrorTranslator
from vectorport.adapterkit.errors import default_reason

_TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError,
              RateLimitError)


def classify(exc: BaseException) -> ErrorKind:
    if isinstance(exc, _TRANSIENT) or "Could not connect to a Chroma server" in str(exc):
        return ErrorKind.TRANSIENT
    if isinstance(exc, NotFoundError):
        return ErrorKind.NOT_FOUND
    return ErrorKind.OTHER


TORN_INDEX = ("Error deserializing pickle file", "Error creating hnsw segment reader",
              "Error finding id")
"""How Chroma reports a collection whose vector index files a killed writer cut short
(the pickle torn, or the ``.bin`` files of a save whose pickle was never written: the
index then holds points its pickle does not name)."""


def reason(exc: BaseException) -> str:
    """Chroma's message, and for a torn vector index what it means and what to do."""
    said = default_reason(exc)
    if not any(sign in str(exc) for sign in TORN_INDEX):
        return said
    return (
        f"{said}. Chroma's vector index of this collection is torn: a process was killed "
        "while Chroma rewrote its index files (index_metadata.pickle is written in place). "
        "Ids, metadata and documents are intact in chroma.sqlite3; the vectors are only "
        "recoverable from Chroma's log. Reconnect: vectorport then rebuilds the index "
        "from the log if the log still holds every record (indexes created since "
        "vectorport keeps the log, see docs/backends/chroma.md); otherwise its vectors "
        "are lost from Chroma's storage: restore the folder from a backup, or import a "
        "`vectorport export` file into a new folder"
    )


TRANSLATOR = ErrorTranslator("chroma", classify, reason=reason)


def is_not_found(exc: BaseException) -> bool:
    return isinstance(exc, NotFoundError)


def is_already_exists(exc: BaseException) -> bool:
    return isinstance(exc, ChromaError) and "already exists" in str(exc)


def chroma_errors(operation: str) -> AbstractContextManager[None]:
    """Wrap every non-vectorport exception raised inside as the contract says."""
    return TRANSLATOR.translated(operation)


__all__ = ["TORN_INDEX", "TRANSLATOR", "chroma_errors", "classify", "is_already_exists",
           "is_not_found", "reason"]
