"""Recording the calls a test's code makes to an engine client, passed through
unchanged: which methods, in what order, on what (their first argument)."""

from __future__ import annotations

from typing import Any

import pytest


def record_calls(monkeypatch: pytest.MonkeyPatch, target: Any,
                 *methods: str) -> list[tuple[str, Any]]:
    """From now on (until ``monkeypatch`` undoes it), each call of one of ``methods``
    of ``target`` appends ``(method, first argument or None)`` to the list returned,
    then runs the method as it was."""
    calls: list[tuple[str, Any]] = []
    for method in methods:
        original = getattr(target, method)

        def recorded(*args: Any, _method: str = method, _original: Any = original,
                     **kwargs: Any) -> Any:
            calls.append((_method, args[0] if args else None))
            return _original(*args, **kwargs)

        monkeypatch.setattr(target, method, recorded)
    return calls


__all__ = ["record_calls"]
