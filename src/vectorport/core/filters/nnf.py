"""Negation normal form, for adapters whose backend has no general ``NOT``.

After :func:`to_nnf` the tree has only :class:`And`, :class:`Or` and conditions, plus
:class:`Not` directly over a range or ``$all`` condition, the only leaves without an
exact complement among the contract's operators. The result is equivalent under the
oracle (a hypothesis test proves it).
"""

from __future__ import annotations

from vectorport.core.filters.ast import And, Condition, Filter, Not, Or

_COMPLEMENT = {"$eq": "$ne", "$ne": "$eq", "$in": "$nin", "$nin": "$in"}


def _negate_condition(node: Condition) -> Filter:
    if node.op in _COMPLEMENT:
        return Condition(node.field, _COMPLEMENT[node.op], node.value)  # type: ignore[arg-type]
    if node.op == "$exists":
        return Condition(node.field, "$exists", not node.value)
    return Not(node)


def to_nnf(node: Filter, negate: bool = False) -> Filter:
    if isinstance(node, Condition):
        return _negate_condition(node) if negate else node
    if isinstance(node, Not):
        return to_nnf(node.child, not negate)
    if isinstance(node, And):
        children = tuple(to_nnf(c, negate) for c in node.children)
        return Or(children) if negate else And(children)
    if isinstance(node, Or):
        children = tuple(to_nnf(c, negate) for c in node.children)
        return And(children) if negate else Or(children)
    # $nor: not any == all not; negated, it is any.
    if negate:
        return Or(tuple(to_nnf(c, False) for c in node.children))
    return And(tuple(to_nnf(c, True) for c in node.children))


__all__ = ["to_nnf"]
