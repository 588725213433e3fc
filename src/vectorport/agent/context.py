"""The per-request context an application hands to a tool call.

It carries what the application (trusted) decides for this request, as opposed to the
tool input the model (untrusted) writes: the tenant, the index, a filter to enforce,
runtime overrides of the tool's defaults. It is shared by every tool of a request, so
a tool reads the keys it knows and ignores the others.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any


class RequestContext(MutableMapping[str, Any]):
    """A small mutable mapping with Mastra's ``get`` / ``set`` spelling.

    >>> ctx = RequestContext(tenant_id="acme")
    >>> ctx.set("top_k", 5)
    >>> ctx.get("top_k"), ctx.get("index_name"), "tenant_id" in ctx
    (5, None, True)
    """

    def __init__(self, values: Mapping[str, Any] | None = None, /, **more: Any) -> None:
        self._values: dict[str, Any] = {}
        for key, value in {**dict(values or {}), **more}.items():
            self.set(key, value)

    def set(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"request context keys are str, got {type(key).__name__}")
        self._values[key] = value

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.set(key, value)

    def __delitem__(self, key: str) -> None:
        del self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"RequestContext({sorted(self._values)!r})"  # keys only: values may be secrets

    def copy(self) -> RequestContext:
        return RequestContext(self._values)
