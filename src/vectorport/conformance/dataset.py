"""The shared data of the conformance suite.

One small dataset with every awkward shape the contract names: missing fields, list
fields, numbers stored as int and as float, strings that look like numbers, a field
holding different kinds on different records, unicode, and hostile strings. One corpus
of filters over it that touches every operator and rule of CONTRACT §2. Expected
results always come from the oracle, never from this file.
"""

from __future__ import annotations

import math
from typing import Any

HOSTILE_STRINGS: tuple[str, ...] = (
    "O'Brien",
    'say "hi"',
    "back\\slash",
    "a'); DROP TABLE vp_records; --",
    "1 OR 1=1",
    "%_like_%",
    "$eq",
    "line\nbreak\ttab",
    "' || '1'='1",
    '" or ""="',
    "`backtick`",
    "{{template}}",
    "unicode: é 日本 🙂",
    "\\' escaped quote",
    "meta[\"x\"] == 1",
    "json_contains(x, 1)",
    "]);--",
    " leading and trailing ",
)
"""Strings that break naive quoting in SQL, Milvus expressions, JSON paths and templates."""

HOSTILE_FIELD_NAMES: tuple[str, ...] = (
    "a'b",
    'a"b',
    "a b",
    "a;DROP TABLE x",
    "a.b",
    "a[0]",
    "a->>'b'",
    "1abc",
    "",
    "a" * 65,
    "é",
    "a\nb",
    "$where",
)
"""Field names that must be refused by the parser (the metadata key rule)."""

GENRES = ("drama", "comedy", "horror", "Drama", "documentary")


def _vector(i: int) -> list[float]:
    # Distinct directions spread over the 4-d sphere: no two records tie on any metric.
    a = 0.37 * i + 0.11
    b = 0.23 * i * i + 0.71
    return [
        round(math.cos(a) * math.cos(b), 6),
        round(math.sin(a) * math.cos(b), 6),
        round(math.cos(a + 1.3) * math.sin(b), 6),
        round(0.25 + 0.05 * (i % 7), 6),
    ]


def dataset_rows() -> list[dict[str, Any]]:
    """Plain dicts (``id``, ``vector``, ``metadata``, ``document``) for ``upsert``."""
    rows: list[dict[str, Any]] = []
    for i in range(32):
        meta: dict[str, Any] = {}
        if i % 5 != 0:
            meta["year"] = 2015 + (i % 11)
        if i % 9 == 4:
            meta["year"] = 2020.0  # a float equal to an int
        if i % 13 == 7:
            meta["year"] = 2020.5
        if i % 4 != 3:
            meta["genre"] = GENRES[i % len(GENRES)]
        if i % 3 == 0:
            meta["tags"] = ["a", "b"] if i % 2 == 0 else ["b", "c", "d"]
        elif i % 3 == 1 and i % 2 == 0:
            meta["tags"] = ["c"]
        if i % 6 != 5:
            meta["rating"] = [1, 2.5, 3, 4.0, 4.5, 5][i % 6]
        if i % 7 != 6:
            meta["active"] = i % 2 == 0
        kinds: list[Any] = [1, "1", True, ["1", "x"], 0, "one", False, 1.0]
        meta["mixed"] = kinds[i % len(kinds)]
        if i % 8 == 2:
            meta["code"] = "007"
        if i < len(HOSTILE_STRINGS):
            meta["text"] = HOSTILE_STRINGS[i]
        if i % 10 == 3:
            meta["big"] = 2**53 + i  # beyond float precision: exact int handling
        if i % 11 == 5:
            meta["neg"] = -1.5 * i
        meta["name"] = f"rec-{i:02d}"
        rows.append({
            "id": f"r{i:02d}",
            "vector": _vector(i),
            "metadata": meta,
            "document": f"Document number {i}, genre {meta.get('genre', 'none')}.",
        })
    return rows


FILTER_CASES: dict[str, dict[str, Any]] = {
    # equality, including the kind rules and list fields
    "eq_int": {"year": 2020},
    "eq_float_equals_int": {"year": 2020.0},
    "eq_float": {"year": 2020.5},
    "eq_explicit": {"year": {"$eq": 2018}},
    "eq_str": {"genre": "drama"},
    "eq_str_case": {"genre": "Drama"},
    "eq_bool_true": {"active": True},
    "eq_bool_false": {"active": False},
    "eq_bool_not_number": {"mixed": True},
    "eq_number_not_bool": {"mixed": 1},
    "eq_str_not_number": {"mixed": "1"},
    "eq_zero_not_false": {"mixed": 0},
    "eq_list_member": {"tags": "b"},
    "eq_list_member_single": {"tags": "c"},
    "eq_list_member_mixed": {"mixed": "x"},
    "eq_leading_zeros": {"code": "007"},
    "eq_missing_value": {"genre": "western"},
    "eq_hostile_quote": {"text": "O'Brien"},
    "eq_hostile_sql": {"text": "a'); DROP TABLE vp_records; --"},
    "eq_hostile_backslash": {"text": "back\\slash"},
    "eq_hostile_dquote": {"text": 'say "hi"'},
    "eq_hostile_percent": {"text": "%_like_%"},
    "eq_hostile_dollar": {"text": "$eq"},
    "eq_hostile_newline": {"text": "line\nbreak\ttab"},
    "eq_hostile_unicode": {"text": "unicode: é 日本 🙂"},
    "eq_hostile_expr": {"text": "meta[\"x\"] == 1"},
    "eq_big_int": {"big": 2**53 + 3},
    # inequality: a record without the field matches
    "ne_int": {"year": {"$ne": 2020}},
    "ne_str": {"genre": {"$ne": "drama"}},
    "ne_bool": {"active": {"$ne": True}},
    "ne_list": {"tags": {"$ne": "b"}},
    "ne_kind": {"mixed": {"$ne": 1}},
    # ranges
    "gt_int": {"year": {"$gt": 2020}},
    "gte_int": {"year": {"$gte": 2020}},
    "lt_float": {"rating": {"$lt": 3.5}},
    "lte_int": {"rating": {"$lte": 3}},
    "gt_float_between": {"year": {"$gt": 2020.2}},
    "range_both": {"year": {"$gte": 2017, "$lt": 2021}},
    "gt_str": {"genre": {"$gt": "d"}},
    "lt_str_codepoint": {"genre": {"$lt": "a"}},
    "gte_list_str": {"tags": {"$gte": "c"}},
    "gt_mixed_kinds": {"mixed": {"$gt": 0}},
    "lt_mixed_str": {"mixed": {"$lt": "z"}},
    "lt_negative": {"neg": {"$lt": -10}},
    "gt_big_int": {"big": {"$gt": 2**53 + 10}},
    # membership
    "in_int": {"year": {"$in": [2016, 2020, 2024]}},
    "in_float_int": {"rating": {"$in": [2.5, 4]}},
    "in_str": {"genre": {"$in": ["drama", "horror"]}},
    "in_list_field": {"tags": {"$in": ["a", "zzz"]}},
    "in_bool": {"active": {"$in": [False]}},
    "in_mixed_numbers": {"mixed": {"$in": [1, 0]}},
    "in_hostile": {"text": {"$in": ["O'Brien", "1 OR 1=1", "nothing"]}},
    "nin_int": {"year": {"$nin": [2016, 2020]}},
    "nin_str": {"genre": {"$nin": ["drama", "comedy"]}},
    "nin_list_field": {"tags": {"$nin": ["a"]}},
    "nin_mixed": {"mixed": {"$nin": ["1", "one"]}},
    # existence
    "exists_true": {"year": {"$exists": True}},
    "exists_false": {"year": {"$exists": False}},
    "exists_list": {"tags": {"$exists": True}},
    "exists_rare": {"code": {"$exists": True}},
    # $all
    "all_two": {"tags": {"$all": ["a", "b"]}},
    "all_one": {"tags": {"$all": ["c"]}},
    "all_none": {"tags": {"$all": ["a", "d"]}},
    "all_scalar": {"genre": {"$all": ["drama"]}},
    "all_scalar_number": {"year": {"$all": [2020]}},
    # field-level $not
    "not_gt": {"year": {"$not": {"$gt": 2020}}},
    "not_eq": {"genre": {"$not": {"$eq": "drama"}}},
    "not_in": {"genre": {"$not": {"$in": ["drama", "comedy"]}}},
    "not_exists": {"tags": {"$not": {"$exists": True}}},
    "not_range": {"rating": {"$not": {"$gte": 2, "$lte": 4}}},
    "not_all": {"tags": {"$not": {"$all": ["a", "b"]}}},
    # logic
    "implicit_and": {"genre": "drama", "active": True},
    "and": {"$and": [{"year": {"$gte": 2018}}, {"rating": {"$gt": 2}}]},
    "or": {"$or": [{"genre": "horror"}, {"tags": "c"}]},
    "nor": {"$nor": [{"genre": "drama"}, {"active": False}]},
    "top_not": {"$not": {"genre": "drama", "active": True}},
    "top_not_or": {"$not": {"$or": [{"year": 2020}, {"rating": {"$gt": 4}}]}},
    "nested": {"$or": [
        {"$and": [{"genre": {"$in": ["drama", "comedy"]}}, {"year": {"$lt": 2022}}]},
        {"$nor": [{"tags": {"$exists": True}}, {"rating": {"$lt": 4}}]},
    ]},
    "deep_not": {"$and": [
        {"$not": {"$nor": [{"mixed": {"$in": [1, 0]}}, {"mixed": "x"}]}},
        {"name": {"$ne": "rec-08"}},
    ]},
    "and_same_field": {"$and": [{"tags": "b"}, {"tags": {"$ne": "a"}}]},
    "matches_nothing": {"$and": [{"year": {"$gt": 2030}}, {"year": {"$lt": 2000}}]},
}
