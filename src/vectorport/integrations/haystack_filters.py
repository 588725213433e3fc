"""Haystack 2 filters (``{"field": "meta.x", "operator": "==", "value": ...}`` and
``{"operator": "AND", "conditions": [...]}``) translated into vectorport's filter AST,
with Haystack's meaning (``haystack.utils.filters.document_matches_filter``):

- ``== None`` matches documents without the field; ``!= None`` those with it.
- ``!=`` and ``not in`` match documents without the field (as vectorport's ``$ne``).
- ``>``, ``>=``, ``<``, ``<=`` with ``None`` match nothing; with a list they are a
  :class:`FilterError`; with a string the string must be an ISO 8601 date (Haystack
  compares strings only as dates), compared as text, which orders dates of one format
  (the ``YYYY-MM-DDTHH:MM:SS`` that ``datetime.isoformat`` writes) chronologically.
  ``datetime`` values are written as ISO strings.
- ``in`` / ``not in`` take a ``list`` (a tuple or scalar is a :class:`FilterError`); a
  ``None`` in the list stands for "the field is missing"; mixed kinds are split into
  one ``$in`` per kind.
- ``NOT`` negates the AND of its conditions; empty ``AND`` matches everything, empty
  ``OR`` and ``NOT`` nothing.

What vectorport cannot express raises Haystack's :class:`FilterError`: filters on
``content``, ``id`` or other document attributes, nested ``meta.a.b`` keys, and ``==``
against a list (Haystack compares whole lists; vectorport's ``$eq`` on a list field
means "contains", so a list-valued field also matches ``==`` one of its elements).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from haystack.errors import FilterError

from vectorport.core import errors
from vectorport.core.filters.ast import Filter
from vectorport.core.filters.parse import kind_of, parse_filter

_ALL: dict[str, Any] = {}
"""A sub-filter that matches every document (absorbed by AND, absorbs OR)."""
_NOTHING: dict[str, Any] = {"$nothing": True}
"""A sub-filter that matches no document; rendered as a contradiction only if it survives."""

_DOCUMENT_FIELDS = frozenset({"id", "content", "embedding", "sparse_embedding", "blob", "score"})
_RANGES = {">": "$gt", ">=": "$gte", "<": "$lt", "<=": "$lte"}


def _is(sub: dict[str, Any], sentinel: dict[str, Any]) -> bool:
    return sub is sentinel


def meta_key(field: object) -> str:
    """``meta.x`` (or a bare ``x``) → ``x``; anything vectorport cannot filter on raises."""
    if not isinstance(field, str) or not field:
        raise FilterError(f"'field' must be a non-empty string, got {field!r}")
    key = field.removeprefix("meta.")
    if key == field and key in _DOCUMENT_FIELDS:
        raise FilterError(f"vectorport filters on metadata only, not on the document's {field!r}")
    if "." in key:
        raise FilterError(f"nested metadata field {field!r}: vectorport metadata is flat")
    return key


def _value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _looks_like_iso_date(value: str) -> bool:
    if not (len(value) >= 10 and value[:4].isdigit() and value[4] == "-" and value[5:7].isdigit()
            and value[7] == "-" and value[8:10].isdigit()
            and (len(value) == 10 or value[10] in "Tt ")):
        return False
    try:
        dt.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _grouped(key: str, op: str, values: list[Any]) -> list[dict[str, Any]]:
    """One ``$in``/``$nin`` per value kind (vectorport lists hold one kind)."""
    groups: dict[str, list[Any]] = {}
    for item in values:
        if not isinstance(item, (str, int, float, bool)):
            raise FilterError(f"'{op}' list items must be scalars, got {type(item).__name__}")
        groups.setdefault(kind_of(item), []).append(item)
    return [{key: {op: items}} for items in groups.values()]


def _comparison(condition: Mapping[str, Any]) -> dict[str, Any]:
    for required in ("field", "operator", "value"):
        if required not in condition:
            raise FilterError(f"a comparison needs '{required}': {dict(condition)!r}")
    key = meta_key(condition["field"])
    operator = condition["operator"]
    value = _value(condition["value"])
    if operator == "==":
        if value is None:
            return {key: {"$exists": False}}
        if isinstance(value, (list, tuple)):
            raise FilterError("'==' with a list cannot be expressed: vectorport compares list "
                              "fields element by element")
        return {key: {"$eq": value}}
    if operator == "!=":
        if value is None:
            return {key: {"$exists": True}}
        if isinstance(value, (list, tuple)):
            raise FilterError("'!=' with a list cannot be expressed")
        return {key: {"$ne": value}}
    if operator in _RANGES:
        if value is None:
            return _NOTHING
        if isinstance(value, (list, tuple)):
            raise FilterError(f"Filter value can't be of type {type(value)} using operator {operator!r}")
        if isinstance(value, str) and not _looks_like_iso_date(value):
            raise FilterError(f"Can't compare strings using operator {operator!r}: strings are only "
                              "comparable if they are ISO formatted dates")
        return {key: {_RANGES[operator]: value}}
    if operator in ("in", "not in"):
        if not isinstance(value, list):
            raise FilterError(f"'{operator}' takes a list, got {type(value).__name__}")
        present = [_value(v) for v in value if v is not None]
        with_missing = len(present) != len(value)
        if operator == "in":
            parts = _grouped(key, "$in", present)
            if with_missing:
                parts.append({key: {"$exists": False}})
            return _or(parts)
        parts = _grouped(key, "$nin", present)
        if with_missing:
            parts.append({key: {"$exists": True}})
        return _and(parts)
    raise FilterError(f"unknown comparison operator {operator!r}")


def _and(parts: list[dict[str, Any]]) -> dict[str, Any]:
    if any(_is(p, _NOTHING) for p in parts):
        return _NOTHING
    kept = [p for p in parts if not _is(p, _ALL)]
    if not kept:
        return _ALL
    return kept[0] if len(kept) == 1 else {"$and": kept}


def _or(parts: list[dict[str, Any]]) -> dict[str, Any]:
    if any(_is(p, _ALL) for p in parts):
        return _ALL
    kept = [p for p in parts if not _is(p, _NOTHING)]
    if not kept:
        return _NOTHING
    return kept[0] if len(kept) == 1 else {"$or": kept}


def _not(part: dict[str, Any]) -> dict[str, Any]:
    if _is(part, _ALL):
        return _NOTHING
    if _is(part, _NOTHING):
        return _ALL
    return {"$not": part}


def _translate(filters: Any) -> dict[str, Any]:
    if not isinstance(filters, Mapping):
        raise FilterError(f"a filter must be a dict, got {type(filters).__name__}")
    if "field" in filters:
        return _comparison(filters)
    if "operator" not in filters:
        raise FilterError("a logical filter needs 'operator' (AND, OR or NOT)")
    if "conditions" not in filters:
        raise FilterError("a logical filter needs 'conditions'")
    operator, conditions = filters["operator"], filters["conditions"]
    if not isinstance(conditions, list):
        raise FilterError("'conditions' must be a list of filters")
    parts = [_translate(c) for c in conditions]
    if operator == "AND":
        return _and(parts)
    if operator == "OR":
        return _or(parts)
    if operator == "NOT":
        return _not(_and(parts))
    raise FilterError(f"unknown logical operator {operator!r}")


class Translated:
    """A translated filter: ``nothing`` when it can match no document (then no query is
    needed); otherwise ``node`` is the AST, ``None`` for "everything"."""

    __slots__ = ("node", "nothing")

    def __init__(self, node: Filter | None, nothing: bool) -> None:
        self.node = node
        self.nothing = nothing


def to_vectorport(filters: Mapping[str, Any] | None) -> Translated:
    """Translate a Haystack filter; raises Haystack's :class:`FilterError` when it is
    malformed or cannot be expressed exactly."""
    if not filters:
        return Translated(None, False)
    raw = _translate(filters)
    if _is(raw, _NOTHING):
        return Translated(None, True)
    if _is(raw, _ALL):
        return Translated(None, False)
    # _and/_or/_not fold every sentinel away, so only real clauses reach the parser
    try:
        return Translated(parse_filter(raw), False)
    except errors.FilterError as exc:
        raise FilterError(str(exc)) from exc
