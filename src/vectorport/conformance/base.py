"""Shared pieces of the conformance suite: naming, canonical records, the comparison of
an adapter's answer with the reference answer, and the base class of the test mixins."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import pytest

from vectorport.conformance.dataset import FILTER_CASES
from vectorport.conformance.reference import Expected
from vectorport.core import validation
from vectorport.core.capabilities import ALL_FILTER_OPERATORS
from vectorport.core.filters.ast import Filter, operators_used
from vectorport.core.filters.parse import parse_filter
from vectorport.core.store import Index, Store
from vectorport.core.types import METRICS, Match, MetadataValue, Metric, Record

BASE, OPPOSITE, ORTHOGONAL, QUERY = [1, 0, 0, 0], [-1, 0, 0, 0], [0, -1, -1, 0], [1, 0, 0, 0]
FILTER_NAMESPACE = "filters"

IndexFactory = Callable[..., Index]

# Rows of the capability matrix. A test proves rows with ``@pytest.mark.feature(*rows)``;
# ``when="declared"`` (the default): it proves a row whose feature the adapter declares;
# ``"undeclared"``: it proves that an undeclared one raises UnsupportedFeatureError;
# ``"always"``: both. ``vectorport matrix`` groups outcomes by these markers.
CRUD = "upsert, fetch, delete by ids"
HOSTILE = "hostile keys, values, names"
BAD_INPUT = "bad input refused before writes"
DIFFERENTIAL = "differential vs oracle"
CONCURRENCY = "concurrency (threads, tasks)"
SCAN = "scan: every record once, resumable"
METRIC_ROWS = tuple(f"metric {m}" for m in METRICS)
FILTER_ROWS = tuple(f"filter {op}" for op in sorted(ALL_FILTER_OPERATORS))


def filter_rows(case: str) -> tuple[str, ...]:
    """The matrix rows of the operators that a :data:`FILTER_CASES` case uses."""
    return tuple(f"filter {op}" for op in sorted(operators_used(parse_filter(FILTER_CASES[case]))))


def unique_name(tag: str = "t") -> str:
    return f"vp_{tag[:20]}_{uuid.uuid4().hex[:10]}"


def with_kinds(metadata: Mapping[str, MetadataValue] | None) -> dict[str, tuple[str, Any]]:
    """Metadata as the contract compares it: by value and kind (``1``, ``1.0`` and
    ``True`` differ; ``-0.0`` equals ``0.0``, as values)."""
    return {key: (type(value).__name__, tuple(value) if isinstance(value, list | tuple)
                  else value) for key, value in (metadata or {}).items()}


def canonical_records(rows: list[dict[str, Any]], dimension: int = 4) -> list[Record]:
    return [validation.record(r, dimension, True, i) for i, r in enumerate(rows)]


def assert_same_matches(
    got: list[Match],
    expected: list[Expected],
    tolerance: float,
    context: str = "",
    top_k: int | None = None,
) -> None:
    """``got`` equals the reference answer ``expected`` (the full, uncut ranking) cut
    at ``top_k``: same ids in the same order, scores within ``tolerance``.

    Scores closer than the tolerance count as ties, since an engine's float rounding
    may order them either way; at the ``top_k`` boundary, any of such near-tied records
    may be the one included. Exact ties are ordered by id (the facade guarantees it).
    """
    k = len(expected) if top_k is None else min(top_k, len(expected))
    got_ids = [m.id for m in got]
    want_ids = [e.id for e in expected[:k]]
    detail = f"\n  got      {got_ids}\n  expected {want_ids}"
    assert len(got) == k, f"{context}: {len(got)} results, expected {k}{detail}"
    assert len(set(got_ids)) == len(got_ids), f"{context}: repeated ids{detail}"
    want = {e.id: e.score for e in expected}
    for m in got:
        assert m.id in want, f"{context}: {m.id} should not match{detail}"
        assert abs(m.score - want[m.id]) <= tolerance, (
            f"{context}: score of {m.id} is {m.score}, expected {want[m.id]}{detail}"
        )
    if k:
        boundary = expected[k - 1].score
        for e in expected:
            if e.score > boundary + tolerance:
                assert e.id in got_ids, f"{context}: {e.id} missing{detail}"
            if e.id in got_ids:
                assert e.score >= boundary - tolerance, f"{context}: {e.id} ranked too low{detail}"
    for a, b in itertools.pairwise(got):
        assert a.score >= b.score - tolerance, f"{context}: not sorted by score{detail}"
        if want[a.id] - want[b.id] < -2 * tolerance:
            raise AssertionError(f"{context}: order differs{detail}")


class SuiteBase:
    """The settings every binding may change (listed in :mod:`vectorport.conformance.suite`)
    and the fixtures every mixin shares."""

    known_filter_deviations: ClassVar[frozenset[str]] = frozenset()
    score_tolerance: ClassVar[float] = 1e-3
    matrix_label: ClassVar[str | None] = None
    matrix_include: ClassVar[bool] = True

    @pytest.fixture(scope="class")
    @classmethod
    def store(cls) -> Iterator[Store]:
        """Overridden by every binding; this one only says so."""
        pytest.fail(
            f"{cls.__name__} runs the conformance suite but does not provide the `store` "
            "fixture: add a class-scoped fixture yielding a vectorport.Store, e.g.\n"
            "    @pytest.fixture(scope=\"class\")\n    @classmethod\n"
            "    def store(cls):\n        with vectorport.connect(URL) as store:\n"
            "            yield store",
            pytrace=False,
        )
        yield  # never reached; makes this a generator fixture like the bindings'

    @pytest.fixture
    def make_index(self, store: Store) -> Iterator[IndexFactory]:
        created: list[str] = []

        def factory(dimension: int = 4, metric: Metric = "cosine", **kwargs: Any) -> Index:
            name = unique_name(kwargs.pop("tag", "t"))
            index = store.create_index(name, dimension, metric, **kwargs)
            created.append(name)
            return index

        yield factory
        for name in created:
            store.delete_index(name, missing_ok=True)

    def filter_deviation(self, node: Filter) -> bool:
        """Whether the adapter refuses the generated filter ``node`` with
        ``UnsupportedFeatureError`` although it declares every operator in it (the
        differential and sequence tests check that it does); default: never."""
        return False

    @staticmethod
    def a_metric(store: Store) -> Metric:
        caps = store.capabilities.metrics
        return "cosine" if "cosine" in caps else sorted(caps)[0]
