"""Compile the filter AST (CONTRACT §2) to SQL over the ``jsonb`` metadata column.

Every value travels as a bound parameter; the SQL text holds only operators, the column
identifier and placeholders. Field names are validated identifiers, but they are bound
as parameters too (inside ``jsonb`` documents and ``jsonpath`` texts, never in the SQL).

How each operator keeps the contract's kind rules exactly:

- ``$eq``/``$in``/``$all`` use ``jsonb`` containment (``@>``), which compares ``numeric``
  by value (``2020 = 2020.0``), never equates ``true`` with ``1`` or ``"1"`` with ``1``,
  and is served by the GIN index on the column. A stored list holds a string ``v`` when
  ``metadata @> {"f": [v]}``; a scalar equals it when ``metadata @> {"f": v}``.
- Ranges use ``jsonb_path_exists(metadata, '$."f"[*] ? (@ > $v)', {"v": …})``: in lax
  mode ``[*]`` visits a list's elements or the scalar itself, comparisons between
  different kinds are *unknown* (so false), numbers compare as exact ``numeric`` and
  strings by code point, whatever the database collation.
- ``$exists`` is the ``?`` key operator.
- ``$ne``, ``$nin`` and ``$not`` are plain ``NOT``: every expression above is true or
  false, never NULL (the column is ``NOT NULL``), so a record without the field matches
  a negation, as the contract says.

Strings holding NUL cannot be expressed in ``jsonb``; they raise
:class:`UnsupportedFeatureError` before any I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from psycopg import sql

from vectorport import adapterkit as kit
from vectorport.adapterkit import And, Condition, Filter, Nor, Not, Or, Scalar
from vectorport.adapters.pgvector.jsonb import check_text, encode_string, encode_value

METADATA_COLUMN = sql.Identifier("metadata")
_RANGE_SYMBOL = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
MAX_OR_TERMS = 16
"""Above this many containment documents, ``$in`` uses ``@> ANY(array)`` (one
parameter, no GIN) instead of a chain of ``OR`` (GIN-served, but long SQL)."""


@dataclass(frozen=True, slots=True)
class CompiledFilter:
    """A boolean SQL expression and its parameters, in placeholder order."""

    sql: sql.Composable
    params: tuple[object, ...]


class _Compiler:
    def __init__(self, column: sql.Composable) -> None:
        self.column = column
        self.params: list[object] = []

    def param(self, value: object, cast: str | None = None) -> sql.Composable:
        self.params.append(value)
        if cast is None:
            return sql.Placeholder()
        return sql.SQL("{}::{}").format(sql.Placeholder(), sql.SQL(cast))

    def node(self, node: Filter) -> sql.Composable:
        if isinstance(node, Condition):
            return self.condition(node)
        if isinstance(node, Not):
            return sql.SQL("(NOT {})").format(self.node(node.child))
        children = [self.node(child) for child in node.children]
        if isinstance(node, And):
            return _join("AND", children)
        if isinstance(node, Or):
            return _join("OR", children)
        assert isinstance(node, Nor)
        return sql.SQL("(NOT {})").format(_join("OR", children))

    def condition(self, node: Condition) -> sql.Composable:
        field, op, value = node.field, node.op, node.value
        _check_values(value)
        if op == "$exists":
            found = sql.SQL("({} ? {})").format(self.column, self.param(field))
            return found if value else sql.SQL("(NOT {})").format(found)
        if op in ("$eq", "$ne"):
            assert not isinstance(value, tuple)
            expr = self.any_of(field, (value,))
            return expr if op == "$eq" else sql.SQL("(NOT {})").format(expr)
        if op in ("$in", "$nin"):
            assert isinstance(value, tuple)
            expr = self.any_of(field, value)
            return expr if op == "$in" else sql.SQL("(NOT {})").format(expr)
        if op == "$all":
            assert isinstance(value, tuple)
            return self.all_of(field, value)
        assert not isinstance(value, tuple)
        return self.range(field, op, value)

    def contains(self, document: str) -> sql.Composable:
        return sql.SQL("({} @> {})").format(self.column, self.param(document, "jsonb"))

    def any_of(self, field: str, values: tuple[Scalar, ...]) -> sql.Composable:
        """The field equals one of ``values``, or is a list holding one of them."""
        documents: dict[str, None] = {}
        for value in values:
            documents[_document(field, encode_value(value))] = None
            if isinstance(value, str):  # only strings are ever stored inside lists
                documents[_document(field, f"[{encode_value(value)}]")] = None
        if len(documents) > MAX_OR_TERMS:
            return sql.SQL("({} @> ANY({}))").format(
                self.column, self.param(list(documents), "jsonb[]")
            )
        return _join("OR", [self.contains(doc) for doc in documents])

    def all_of(self, field: str, values: tuple[Scalar, ...]) -> sql.Composable:
        """A list holding every value, or a scalar equal to all of them (one value)."""
        distinct = list(dict.fromkeys(values))  # 1 and 1.0 are one value, as in Python
        as_list = self.contains(
            _document(field, "[" + ",".join(encode_value(v) for v in distinct) + "]")
        )
        if len(distinct) > 1:
            return as_list
        return _join("OR", [as_list, self.contains(_document(field, encode_value(distinct[0])))])

    def range(self, field: str, op: str, value: Scalar) -> sql.Composable:
        path = f"$.{encode_string(field)}[*] ? (@ {_RANGE_SYMBOL[op]} $v)"
        variables = '{"v":' + encode_value(value) + "}"
        return sql.SQL("jsonb_path_exists({}, {}, {})").format(
            self.column, self.param(path, "jsonpath"), self.param(variables, "jsonb")
        )


def _document(field: str, value_json: str) -> str:
    return "{" + json.dumps(field) + ":" + value_json + "}"


def _join(word: str, parts: list[sql.Composable]) -> sql.Composable:
    if len(parts) == 1:
        return parts[0]
    return sql.SQL("({})").format(sql.SQL(f" {word} ").join(parts))


def _check_values(value: Scalar | tuple[Scalar, ...]) -> None:
    for item in value if isinstance(value, tuple) else (value,):
        if isinstance(item, str):
            check_text(item, "filter values")


class _SqlCompiler(kit.FilterCompiler[CompiledFilter]):
    def build(self, node: Filter) -> CompiledFilter:
        compiler = _Compiler(METADATA_COLUMN)
        expression = compiler.node(node)
        return CompiledFilter(expression, tuple(compiler.params))


_COMPILER = _SqlCompiler()


def compile_filter(node: Filter) -> CompiledFilter:
    """The SQL for ``node`` over the ``metadata`` column, memoised by the kit.

    The AST and the compiled SQL are immutable, so an app or agent asking the same filter
    again skips composing it (a 10-clause filter costs ~400 µs). The kit keys on
    ``repr(node)``, so ``1`` and ``1.0`` (one filter by value) still bind the exact
    parameter the caller wrote.
    """
    return _COMPILER.compile(node)


__all__ = ["METADATA_COLUMN", "CompiledFilter", "compile_filter"]
