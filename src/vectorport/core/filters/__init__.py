"""The filter language of CONTRACT §2: parse once into an AST, evaluate with the oracle."""

from vectorport.core.filters.ast import (
    FIELD_OPERATORS,
    LOGICAL_OPERATORS,
    And,
    Condition,
    Filter,
    Nor,
    Not,
    Or,
    operators_used,
)
from vectorport.core.filters.nnf import to_nnf
from vectorport.core.filters.oracle import matches
from vectorport.core.filters.parse import parse_filter, render_filter

__all__ = [
    "FIELD_OPERATORS",
    "LOGICAL_OPERATORS",
    "And",
    "Condition",
    "Filter",
    "Nor",
    "Not",
    "Or",
    "matches",
    "operators_used",
    "parse_filter",
    "render_filter",
    "to_nnf",
]
