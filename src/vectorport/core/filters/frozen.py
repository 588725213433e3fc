"""A frozen, hashable copy of a filter dict, so that parsed filters can be memoised.

Parsing a filter costs tens of microseconds per call, and applications send the same
few filters again and again. A filter dict is mutable, so it cannot itself be a cache
key, and keeping a reference to it would serve a stale parse once the caller changes
it. :func:`freeze` copies it instead into nested tuples, with every scalar tagged by its
exact type (``1``, ``1.0`` and ``True`` are equal in Python but not as filter values; so
are ``0.0`` and ``-0.0`` as far as an engine's rendering goes), and :func:`thaw` turns
such a key back into an equal dict, which is what is parsed on a cache miss: the cache
never holds, nor reads again, anything the caller can change.

Only the plain forms are frozen: dicts, lists and tuples of str / int / float / bool with
str keys. Anything else (another Mapping type, a numpy scalar, ``None``) gives ``None``
and is parsed uncached, so it gets exactly the parser's answer, error or not.
"""

from __future__ import annotations

import math
from typing import Any

Key = tuple[Any, ...]

_DICT, _LIST, _TUPLE, _BOOL, _INT, _FLOAT = "d", "l", "t", "b", "i", "f"
_MAX_ITEMS = 4096
"""Larger filters are parsed uncached: the parser's own size limits then speak first,
and a huge filter is not kept alive by the cache."""


class _UnusualError(Exception):
    """Raised inside :func:`freeze` for a form it does not freeze."""


def freeze(raw: object) -> Key | None:
    """A hashable key equal for equal plain filters (same structure, same key order,
    same value types), or ``None`` for anything else."""
    budget = [_MAX_ITEMS]
    try:
        return _freeze_dict(raw, budget)
    except (_UnusualError, RecursionError):
        return None


def _freeze_dict(raw: object, budget: list[int]) -> Key:
    if type(raw) is not dict:
        raise _UnusualError
    budget[0] -= len(raw) + 1
    if budget[0] < 0:
        raise _UnusualError
    items = []
    for key, value in raw.items():
        if type(key) is not str:
            raise _UnusualError
        items.append((key, _freeze_value(value, budget)))
    return (_DICT, tuple(items))


def _freeze_value(value: object, budget: list[int]) -> object:
    kind = type(value)
    if kind is str:
        return value  # every other form is a tagged tuple, so a bare str is unambiguous
    if kind is bool:
        return (_BOOL, value)
    if kind is int:
        return (_INT, value)
    if kind is float:
        assert isinstance(value, float)
        # NaN never equals itself (no hit); the sign of zero is kept distinct
        return (_FLOAT, value, math.copysign(1.0, value))
    if kind is dict:
        return _freeze_dict(value, budget)
    if kind is list or kind is tuple:
        assert isinstance(value, (list, tuple))
        budget[0] -= len(value)
        if budget[0] < 0:
            raise _UnusualError
        items = tuple(_freeze_value(item, budget) for item in value)
        return (_LIST if kind is list else _TUPLE, items)
    raise _UnusualError


def thaw(key: Key) -> dict[str, Any]:
    """The dict :func:`freeze` made ``key`` from (an equal, new one)."""
    thawed = _thaw(key)
    assert isinstance(thawed, dict)
    return thawed


def _thaw(value: object) -> object:
    if isinstance(value, str):
        return value
    assert isinstance(value, tuple)
    tag = value[0]
    if tag == _DICT:
        return {key: _thaw(item) for key, item in value[1]}
    if tag == _LIST:
        return [_thaw(item) for item in value[1]]
    if tag == _TUPLE:
        return tuple(_thaw(item) for item in value[1])
    return value[1]
