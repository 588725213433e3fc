"""The error tree of the contract (CONTRACT §6).

Every error raised to a user is one of these. Backend exceptions never escape raw:
adapters wrap them in :class:`BackendError` (or :class:`TransientBackendError` when a
retry may succeed) with the native exception as ``__cause__``.
"""

from __future__ import annotations

from collections.abc import Sequence


class VectorportError(Exception):
    """Base of every error vectorport raises."""


class ConfigError(VectorportError):
    """A bad URL or config, a missing credential, or an unknown backend."""


class ValidationError(VectorportError, ValueError):
    """Bad records, vectors, ids, metadata or arguments; raised before any I/O."""


class FilterError(ValidationError):
    """A filter that breaks the grammar of CONTRACT §2.

    ``path`` is the JSON path of the fault, such as ``$and[1].year.$gt``.
    """

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        self.reason = message
        super().__init__(f"{path}: {message}" if path else message)


class UnsupportedFeatureError(VectorportError):
    """This backend cannot do what was asked; nothing was sent to it."""

    def __init__(self, backend: str, feature: str, detail: str = "") -> None:
        self.backend = backend
        self.feature = feature
        message = f"backend {backend!r} does not support {feature}"
        super().__init__(f"{message}: {detail}" if detail else message)


class IndexNotFoundError(VectorportError):
    """The named index does not exist."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"index {name!r} does not exist")


class IndexExistsError(VectorportError):
    """An index of that name exists already."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"index {name!r} already exists")


class DimensionMismatchError(ValidationError):
    """A vector's length differs from the index dimension."""


class ConsistencyTimeoutError(VectorportError):
    """A strong read did not see the preceding write within the bounded wait."""


class BackendError(VectorportError):
    """The database failed. The native exception is ``__cause__``.

    For a batched upsert, ``written_ids`` lists the records known to be stored when
    the failure happened, so that the caller knows what landed; re-running the same
    upsert is always safe because upsert is idempotent.
    """

    def __init__(self, message: str, *, written_ids: Sequence[str] = ()) -> None:
        self.written_ids: tuple[str, ...] = tuple(written_ids)
        super().__init__(message)


class TransientBackendError(BackendError):
    """A failure that a retry may cure: timeouts, 429, 503, dropped connections.

    ``retry_after`` is the server's ``Retry-After`` in seconds when it sent one; the
    retry policy waits at least that long before trying again.
    """

    def __init__(self, message: str, *, written_ids: Sequence[str] = (),
                 retry_after: float | None = None) -> None:
        super().__init__(message, written_ids=written_ids)
        self.retry_after = retry_after


class DeadlineExceededError(TransientBackendError):
    """The call did not finish within its deadline (CONTRACT §6: the store's
    ``?timeout=`` URL option, 30 s by default, or an enclosing
    :func:`vectorport.deadline`). One deadline covers every retry of the call, so this
    error is never retried inside it; calling again later may succeed."""


def drop_hidden_context(exc: BaseException) -> BaseException:
    """Really drop what ``raise ... from None`` only hides: Python keeps the exception
    being handled as ``__context__`` even then, and a native exception there may hold a
    credential. The facade calls this on every error it lets out; returns ``exc``."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if link.__suppress_context__:
            link.__context__ = None
        link = link.__cause__ or link.__context__
    return exc


class SourceNotFoundError(VectorportError):
    """A navigation call named a source that has no chunks in the index."""

    def __init__(self, source_id: str) -> None:
        self.source_id = source_id
        super().__init__(f"no chunks of source {source_id!r}")
