"""turbopuffer's filter language, evaluated the way its query reference describes it.

This is the emulator's own reading of the service's documentation, independent of
vectorport's filter oracle (the adapter under test must not be checked against itself).
The rules that matter most, from the "Filtering Parameters" section:

- Missing attributes are ``null``. ``Eq null`` matches documents without the attribute,
  ``NotEq null`` those with it; ``NotEq v`` is the inverse of ``Eq v``, so it *matches*
  documents without the attribute, as do ``NotIn`` and ``NotContains``.
- ``Lt`` and ``Lte`` match ``null`` values (``null`` sorts first), unless the operand is
  ``null`` itself; ``Gt`` and ``Gte`` never match ``null``. The ``Any*`` forms apply the
  same rules to the elements of an array attribute.
- ``Contains`` / ``ContainsAny`` test array attributes; ``In`` on an array attribute tests
  for an intersection; ``Eq`` on an array attribute compares whole arrays.
- ``Not`` is plain negation (two-valued logic), ``And`` / ``Or`` the usual connectives.
- Operands must have the attribute's type (an integer is accepted for a float attribute).
  Filtering on an attribute missing from the schema, or one that is not filterable, is a
  400 error.

A filter compiles once into a predicate over stored documents; ``{"$ref_new": attr}``
operands (conditional writes) are resolved against the document being written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from vectorport.testing.emulators.turbopuffer import text
from vectorport.testing.emulators.turbopuffer.values import (
    AttributeSchema,
    RequestError,
    coerce_scalar,
    coerce_value,
)

Doc = dict[str, Any]
Predicate = Callable[[Doc, "Doc | None"], bool]
Operand = Callable[["Doc | None"], Any]

_SCALAR_OPS = frozenset({"Eq", "NotEq", "In", "NotIn", "Lt", "Lte", "Gt", "Gte"})
_ARRAY_OPS = frozenset({
    "Contains", "NotContains", "ContainsAny", "NotContainsAny",
    "AnyLt", "AnyLte", "AnyGt", "AnyGte",
})
_GLOB_OPS = frozenset({"Glob", "NotGlob", "IGlob", "NotIGlob"})
_TOKEN_OPS = {
    "ContainsAllTokens": "all", "ContainsAnyToken": "any", "ContainsTokenSequence": "sequence",
}


class FilterRequestError(RequestError):
    """A malformed or ill-typed filter (answered with 400)."""


def _lt(a: Any, b: Any) -> bool:
    if b is None:
        return False
    return True if a is None else bool(a < b)


def _lte(a: Any, b: Any) -> bool:
    if a is None:
        return True
    return False if b is None else bool(a <= b)


def _gt(a: Any, b: Any) -> bool:
    if a is None:
        return False
    return True if b is None else bool(a > b)


def _gte(a: Any, b: Any) -> bool:
    if b is None:
        return True
    return False if a is None else bool(a >= b)


_ORDER: dict[str, Callable[[Any, Any], bool]] = {"Lt": _lt, "Lte": _lte, "Gt": _gt, "Gte": _gte}


class FilterCompiler:
    """Compiles filters against one namespace's schema (and id type)."""

    def __init__(self, schema: Mapping[str, AttributeSchema], id_type: str | None) -> None:
        self.schema = schema
        self.id_schema = AttributeSchema(type=id_type or "string")

    def compile(self, raw: object, path: str = "filters") -> Predicate:
        if isinstance(raw, dict):
            raise FilterRequestError(f"{path}: the object form of filters is not emulated; "
                                "use the array form [attr, op, value]")
        if not isinstance(raw, (list, tuple)) or not raw:
            raise FilterRequestError(f"{path}: a filter is a non-empty array")
        head = raw[0]
        if head in ("And", "Or") and len(raw) == 2:
            children = raw[1]
            if not isinstance(children, (list, tuple)):
                raise FilterRequestError(f"{path}: {head} takes an array of filters")
            compiled = [self.compile(c, f"{path}[1][{i}]") for i, c in enumerate(children)]
            if head == "And":
                return lambda doc, new: all(p(doc, new) for p in compiled)
            return lambda doc, new: any(p(doc, new) for p in compiled)
        if head == "Not" and len(raw) == 2:
            inner = self.compile(raw[1], f"{path}[1]")
            return lambda doc, new: not inner(doc, new)
        if len(raw) not in (3, 4) or not isinstance(head, str):
            raise FilterRequestError(f"{path}: expected [attribute, operator, value]")
        return self.condition(head, raw[1], raw[2], raw[3] if len(raw) == 4 else None, path)

    def _attribute(self, name: str, path: str) -> AttributeSchema:
        if name == "id":
            return self.id_schema
        schema = self.schema.get(name)
        if schema is None:
            raise FilterRequestError(
                f"{path}: attribute {name!r} is not in the namespace schema"
            )
        if schema.is_vector:
            raise FilterRequestError(f"{path}: vector attribute {name!r} cannot be filtered")
        return schema

    def _operand(self, schema: AttributeSchema, type_name: str, value: object, path: str,
                 allow_null: bool = True) -> Operand:
        if isinstance(value, dict) and set(value) == {"$ref_new"}:
            ref = value["$ref_new"]
            if not isinstance(ref, str):
                raise FilterRequestError(f"{path}: $ref_new names an attribute")
            return lambda new: None if new is None else new.get(ref)
        if value is None:
            if not allow_null:
                raise FilterRequestError(f"{path}: null is not a valid operand here")
            return lambda new: None
        try:
            if type_name.startswith("[]"):
                coerced = coerce_value(AttributeSchema(type=type_name), value, path)
            else:
                coerced = coerce_scalar(type_name, value, path)
        except RequestError as exc:
            raise FilterRequestError(str(exc)) from None
        return lambda new: coerced

    def _operand_list(self, element_type: str, value: object, path: str) -> Operand:
        if not isinstance(value, (list, tuple)):
            raise FilterRequestError(f"{path}: expected an array of values")
        try:
            items = [
                None if v is None else coerce_scalar(element_type, v, path) for v in value
            ]
        except RequestError as exc:
            raise FilterRequestError(str(exc)) from None
        return lambda new: items

    def condition(self, name: str, op: object, value: object, params: object,
                  path: str) -> Predicate:
        if not isinstance(op, str):
            raise FilterRequestError(f"{path}: the operator must be a string")
        schema = self._attribute(name, path)

        def get(doc: Doc) -> Any:
            return doc.get(name)

        if op in _TOKEN_OPS:
            return self._token_condition(name, schema, op, value, params, path)
        if params is not None:
            raise FilterRequestError(f"{path}: {op} takes no options")
        if op in _GLOB_OPS:
            if schema.element_type != "string":
                raise FilterRequestError(f"{path}: {op} needs a string or []string attribute")
            if not (schema.glob or schema.filterable):
                raise FilterRequestError(f"{path}: enable glob on {name!r} in the schema to use {op}")
            if not isinstance(value, str):
                raise FilterRequestError(f"{path}: {op} takes a glob pattern string")
            insensitive = op in ("IGlob", "NotIGlob")
            negate = op.startswith("Not")
            text.glob_regex(value, insensitive)
            return lambda doc, new: (
                text.glob_matches(value, get(doc), insensitive) != negate
            )
        if op == "Regex":
            if schema.type != "string" or not schema.regex:
                raise FilterRequestError(f"{path}: enable regex on string attribute {name!r} first")
            if not isinstance(value, str):
                raise FilterRequestError(f"{path}: Regex takes a pattern string")
            try:
                pattern = re.compile(value)
            except re.error as exc:
                raise FilterRequestError(f"{path}: invalid regex: {exc}") from None
            return lambda doc, new: isinstance(get(doc), str) and pattern.search(get(doc)) is not None
        if not schema.filterable:
            raise FilterRequestError(f"{path}: attribute {name!r} is not filterable")
        if op in _SCALAR_OPS:
            return self._scalar_condition(schema, get, op, value, path)
        if op in _ARRAY_OPS:
            return self._array_condition(schema, get, op, value, path)
        if op == "Fuzzy":
            raise FilterRequestError(f"{path}: the Fuzzy filter is not emulated")
        raise FilterRequestError(f"{path}: unknown filter operator {op!r}")

    def _scalar_condition(self, schema: AttributeSchema, get: Callable[[Doc], Any], op: str,
                          value: object, path: str) -> Predicate:
        if op in ("Eq", "NotEq"):
            operand = self._operand(schema, schema.type, value, path)
            negate = op == "NotEq"

            def eq(doc: Doc, new: Doc | None) -> bool:
                wanted = operand(new)
                stored = get(doc)
                hit = stored is None if wanted is None else stored is not None and stored == wanted
                return hit != negate

            return eq
        if op in ("In", "NotIn"):
            if schema.is_array and not isinstance(value, list):
                # The service reads ``("tags", "In", "a")`` on an array attribute as the
                # one-element list ``["a"]`` (turbopuffer-python's test_attribute_types).
                value = [value]
            values = self._operand_list(schema.element_type, value, path)
            negate = op == "NotIn"
            if schema.is_array:
                return lambda doc, new: (
                    get(doc) is not None and any(x in values(new) for x in get(doc))
                ) != negate
            return lambda doc, new: (get(doc) in values(new)) != negate
        if schema.is_array:
            raise FilterRequestError(f"{path}: use Any{op} on array attributes")
        operand = self._operand(schema, schema.type, value, path)
        compare = _ORDER[op]
        return lambda doc, new: compare(get(doc), operand(new))

    def _array_condition(self, schema: AttributeSchema, get: Callable[[Doc], Any], op: str,
                         value: object, path: str) -> Predicate:
        if not schema.is_array:
            raise FilterRequestError(f"{path}: {op} needs an array attribute")
        element = schema.element_type
        if op in ("Contains", "NotContains"):
            operand = self._operand(schema, element, value, path, allow_null=False)
            negate = op == "NotContains"
            return lambda doc, new: (
                get(doc) is not None and operand(new) in get(doc)
            ) != negate
        if op in ("ContainsAny", "NotContainsAny"):
            values = self._operand_list(element, value, path)
            negate = op == "NotContainsAny"
            return lambda doc, new: (
                get(doc) is not None and any(x in values(new) for x in get(doc))
            ) != negate
        operand = self._operand(schema, element, value, path)
        compare = _ORDER[op[3:]]

        def any_compare(doc: Doc, new: Doc | None) -> bool:
            stored = get(doc)
            wanted = operand(new)
            if stored is None:
                return compare(None, wanted)
            return any(compare(x, wanted) for x in stored)

        return any_compare

    def _token_condition(self, name: str, schema: AttributeSchema, op: str, value: object,
                         params: object, path: str) -> Predicate:
        if schema.full_text_search is None:
            raise FilterRequestError(f"{path}: {op} needs full_text_search on {name!r}")
        options = schema.full_text_search
        if isinstance(value, str):
            wanted = text.tokenize(value, options)
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            wanted = text.query_tokens(list(value), options)
        else:
            raise FilterRequestError(f"{path}: {op} takes a string or an array of strings")
        prefix = False
        if params is not None:
            if not isinstance(params, dict) or set(params) - {"last_as_prefix"}:
                raise FilterRequestError(f"{path}: {op} options: only last_as_prefix is emulated")
            prefix = bool(params.get("last_as_prefix", False))
        mode = _TOKEN_OPS[op]
        return lambda doc, new: text.contains_tokens(
            text.value_tokens(doc.get(name), options), wanted, mode, prefix
        )
