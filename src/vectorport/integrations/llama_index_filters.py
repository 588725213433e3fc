"""LlamaIndex ``MetadataFilters`` translated into vectorport's filter AST, with the
meaning LlamaIndex's own ``SimpleVectorStore`` gives them
(``llama_index.core.vector_stores.utils.build_metadata_filter_fn``):

======================  ==========================================================
LlamaIndex              vectorport
======================  ==========================================================
``EQ`` ``==``            ``$eq`` — a missing key never matches
``NE`` ``!=``            ``$ne`` — a missing key matches
``GT GTE LT LTE``        ``$gt $gte $lt $lte`` (numbers with numbers, strings by code point)
``IN``                   ``$in`` (a list operand; an empty list matches nothing)
``NIN``                  ``$nin`` — a missing key matches
``ANY``                  ``$in`` against a list field: shares an element
``ALL``                  ``$all``: the list field holds every value
``CONTAINS``             ``$eq`` against a list field: holds the value
``IS_EMPTY``             missing, or ``""`` (vectorport never stores an empty list)
``TEXT_MATCH``,          raise :class:`FilterError`: vectorport has no substring
``TEXT_MATCH_INSENSITIVE``  match, and dropping the clause would widen the result
``AND`` / ``OR``         ``$and`` / ``$or``
``NOT``                  ``$nor``: none of the filters match
======================  ==========================================================

Nested ``MetadataFilters`` nest. An empty filter list matches everything (as in
LlamaIndex). A ``None`` operand is refused except for ``IS_EMPTY``. Two differences
stay, because vectorport's list semantics apply inside the backend and the bridge
cannot know a field's type: ``EQ``/``IN`` against a *list* field match when the list
holds the value (Python's ``==`` would compare whole lists), and ``CONTAINS``/``ANY``
against a *string* field compare whole strings (Python's ``in`` would match substrings).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from vectorport.core.errors import FilterError
from vectorport.core.filters.ast import Filter
from vectorport.core.filters.parse import parse_filter

_ALL: dict[str, Any] = {}
_NOTHING: dict[str, Any] = {"$nothing": True}

_SIMPLE = {
    FilterOperator.EQ: "$eq", FilterOperator.NE: "$ne", FilterOperator.GT: "$gt",
    FilterOperator.GTE: "$gte", FilterOperator.LT: "$lt", FilterOperator.LTE: "$lte",
    FilterOperator.CONTAINS: "$eq",
}
_LISTS = {FilterOperator.IN: "$in", FilterOperator.NIN: "$nin", FilterOperator.ANY: "$in",
          FilterOperator.ALL: "$all"}


def _leaf(f: MetadataFilter, path: str) -> dict[str, Any]:
    op, key, value = FilterOperator(f.operator), f.key, f.value
    if op == FilterOperator.IS_EMPTY:
        return {"$or": [{key: {"$exists": False}}, {key: {"$eq": ""}}]}
    if op in (FilterOperator.TEXT_MATCH, FilterOperator.TEXT_MATCH_INSENSITIVE):
        raise FilterError(f"LlamaIndex's {op.value!r} (substring match) cannot be expressed "
                          "in vectorport's filter language", path)
    if value is None:
        raise FilterError(f"{op.value!r} with None: use FilterOperator.IS_EMPTY", path)
    if op in _SIMPLE:
        if isinstance(value, list):
            raise FilterError(f"{op.value!r} takes a single value, not a list", path)
        return {key: {_SIMPLE[op]: value}}
    if op in _LISTS:
        if not isinstance(value, list):
            raise FilterError(f"{op.value!r} takes a list of values", path)
        if not value:
            # x in [] and any([]) are false; x not in [] is true; all([]) holds once present
            return {FilterOperator.IN: _NOTHING, FilterOperator.ANY: _NOTHING,
                    FilterOperator.NIN: _ALL}.get(op, {key: {"$exists": True}})
        return {key: {_LISTS[op]: value}}
    raise FilterError(f"unknown LlamaIndex operator {op!r}", path)


def _group(filters: MetadataFilters, path: str) -> dict[str, Any]:
    parts = []
    for i, child in enumerate(filters.filters):
        here = f"{path}.filters[{i}]" if path else f"filters[{i}]"
        parts.append(_group(child, here) if isinstance(child, MetadataFilters) else _leaf(child, here))
    if not parts:
        return _ALL
    condition = FilterCondition(filters.condition or FilterCondition.AND)
    if condition == FilterCondition.AND:
        if any(p is _NOTHING for p in parts):
            return _NOTHING
        kept = [p for p in parts if p is not _ALL]
        return _ALL if not kept else kept[0] if len(kept) == 1 else {"$and": kept}
    if any(p is _ALL for p in parts):
        return _NOTHING if condition == FilterCondition.NOT else _ALL
    kept = [p for p in parts if p is not _NOTHING]
    if condition == FilterCondition.OR:
        return _NOTHING if not kept else kept[0] if len(kept) == 1 else {"$or": kept}
    if condition == FilterCondition.NOT:
        return _ALL if not kept else {"$nor": kept}
    raise FilterError(f"unknown LlamaIndex condition {condition!r}", path)


class Translated:
    """``nothing``: the filter matches no node; else ``node`` (``None`` = everything)."""

    __slots__ = ("node", "nothing")

    def __init__(self, node: Filter | None, nothing: bool) -> None:
        self.node = node
        self.nothing = nothing


def to_vectorport(filters: MetadataFilters | None) -> Translated:
    """Translate LlamaIndex filters; raises :class:`FilterError` for what vectorport
    cannot express exactly."""
    if filters is None:
        return Translated(None, False)
    raw = _group(filters, "")
    if raw is _NOTHING:
        return Translated(None, True)
    return Translated(None if raw is _ALL else parse_filter(raw), False)
