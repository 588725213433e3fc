"""The SDK's namespace objects, kept, and each request's timeout.

``Turbopuffer.namespace(name)`` returns a copy of the client bound to one namespace, and
``with_options(timeout=...)`` another copy: made for every request (the adapter cuts each
request's timeout to what is left of the call's deadline), the two copies were about a
tenth of a query's client time. Here each namespace's object is made once and kept, and
the timeout travels with the request instead (the SDK's per-request ``timeout=``), which
means the same to the SDK: a request's own timeout overrides the client's.
"""

from __future__ import annotations

import threading
from typing import Any

KEPT = 1024
"""Namespace objects kept at most (each is small; the bound only guards a leak)."""


class Timed:
    """An SDK namespace whose requests all carry one timeout, in seconds (``None``: the
    client's own)."""

    __slots__ = ("_namespace", "_options", "_raw")

    def __init__(self, namespace: Any, raw: Any, timeout: float | None) -> None:
        self._namespace, self._raw = namespace, raw
        self._options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}

    def query(self, **kwargs: Any) -> Any:
        return self._namespace.query(**self._options, **kwargs)

    def query_rows(self, **kwargs: Any) -> list[dict[str, Any]]:
        """A query's rows as plain dicts: the response's JSON (the SDK's
        ``with_raw_response`` and ``json()``), not parsed into its pydantic row models,
        whose construction cost more than the rest of the client's work on a small
        query; the adapter reads each row into its own form anyway."""
        body = self._raw.query(**self._options, **kwargs).json()
        rows = body.get("rows") if isinstance(body, dict) else None
        return rows if isinstance(rows, list) else []

    def write(self, **kwargs: Any) -> Any:
        return self._namespace.write(**self._options, **kwargs)

    def metadata(self) -> Any:
        return self._namespace.metadata(**self._options)

    def delete_all(self) -> Any:
        return self._namespace.delete_all(**self._options)


class NamespaceHandles:
    """The thread-safe map of turbopuffer namespace → the SDK's namespace object and its
    raw-response view (each a copy of the client, made once)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._kept: dict[str, tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    def get(self, native: str, timeout: float | None) -> Timed:
        """The namespace ``native``, its requests bounded by ``timeout`` seconds when
        given (else the client's own timeout)."""
        found = self._kept.get(native)
        if found is None:
            namespace = self._client.namespace(native)
            found = (namespace, namespace.with_raw_response)
            with self._lock:
                if len(self._kept) >= KEPT:
                    self._kept.clear()
                self._kept[native] = found
        return Timed(found[0], found[1], timeout)


__all__ = ["KEPT", "NamespaceHandles", "Timed"]
