"""Sequence tests: one index written, replaced, deleted and read in interleaved steps,
every answer against the reference adapter holding the same history.

The differential tests (:mod:`.differential`) check one query over a fresh dataset per
case, with values from small pools so that filters hit. Stored state goes wrong in other
ways: a replacement that merges instead of replacing, a delete by filter that misses a
record written two steps earlier, a namespace that leaks into another, an id or value
that survives the write but not the read, a patch that loses a key it did not name, a
scan resumed from its cursor that skips or repeats a record. Here a seeded sequence of
upserts (plain and bulk), patches (where declared), deletes (by id, by filter, whole
namespaces), queries (single and batched, with and without ``min_score``), counts,
fetches, scans and id listings runs against the adapter and against ``memory://`` (the
reference adapter) side by side, over three namespaces, with
values from the contract's edges: ints at and beyond 2^53 and at the int64 bounds, floats
from 5e-324 to 1e308 and ``-0.0``, strings with quotes, backslashes, SQL wildcards,
characters beyond the BMP and U+FFFF, metadata keys that engines commonly use for their
own columns (``id``, ``pk``, ``vector``, ``_distance``, ``metadata``…), and ids that need
escaping. Where the adapter sums dense and sparse scores, the dot-product sequence gives
half its records sparse vectors and queries dense, sparse and hybrid: a replacement
without a sparse vector (or a document) must drop the one stored.

Every refusal is checked too: a filter the adapter refuses with
:class:`UnsupportedFeatureError` must use an operator it does not declare or be one of
the binding's declared deviations (``filter_deviation``), and a declared deviation must
be refused. A write the adapter refuses is not applied to the reference either; a write
refused by one side only is a failure. Comparisons follow the contract: scores within
``score_tolerance`` (near ties at the cut in either order), metadata by value and kind
(``1``, ``1.0`` and ``True`` differ; ``-0.0`` equals ``0.0``), vectors as float32 to a
relative 1e-6 (a cosine engine may hand a normalised vector back a unit in the last
place off).

The sequence is the same on every run (one seed per metric); a failure prints the steps
that led to it as a self-contained reproduction.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
import pytest

import vectorport
from vectorport.conformance.base import (
    DIFFERENTIAL,
    SuiteBase,
    assert_same_matches,
    unique_name,
    with_kinds,
)
from vectorport.conformance.handles import outcome
from vectorport.conformance.reference import Expected
from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.ast import Filter, operators_used
from vectorport.core.filters.parse import parse_filter
from vectorport.core.store import Index, ListableIndex, PatchableIndex, Store
from vectorport.core.types import Match, Record, SparseVector

INTS = (0, 1, -1, 2, 3, 42, 2**53, 2**53 + 1, -(2**53) - 1, 10**15 + 7, -(2**63), 2**63 - 1)
FLOATS = (0.0, -0.0, 0.1, 0.5, 1.0, 1.5, -2.5, 3.0, 1e-7, 123456.789, 1e-300, 5e-324,
          1e308, -1e308, 2.0**53, 2.0**53 + 2, float(2**63))
STRINGS = ("", "a", "A", "b", "z", "é", "ß", "Ω", "ǅ", "😀", "\uffff", "\u00a0", " ", "a b",
           "\n", "\t\r", "a'b", 'a"b', "a\\b", "%", "_", "a%b", "${x}", "null", "true", "1",
           "1.0", "'; DROP TABLE t; --")
KEYS = ("a", "b", "c", "A", "_x", "id", "pk", "ns", "m", "meta", "metadata", "doc",
        "document", "text", "content", "tokens", "vector", "values", "embedding", "score",
        "_distance", "_v", "_ns", "_ri", "sparse_values")
IDS = ("a", "b", "A", "Z", "z", "0", "00", "1", "é", "ß", "ünï", "😀", "\u00a0x", "-", "%",
       "_", "x'y", 'q"r', "back\\slash", "a/b", "a:b", "a.b", "id with space", "long" * 60)
NAMESPACES = ("", "ns1", "N.s-2")
PREFIXES = (None, "", "a", "A", "0", "%", "_", "\\", "x'", "id ", "long", "😀", "ü", "a/", "-")
COMPONENTS = (0.0, 1.0, -1.0, 0.5, -0.5, 0.25, 2.0, 3.0)
SPARSE_VALUES = (0.5, 1.0, 2.0, -1.0, 3.0)
RANGES = ("$gt", "$gte", "$lt", "$lte")
MIN_SCORES = (-0.33052, 0.12534, 0.30879, 0.64689, 0.9016, 1.21875)
"""At least 6e-5 (hundreds of float32 roundings) from every score two vectors of
:data:`COMPONENTS` can give, dense (dot product, cosine, euclidean; every pair tried) or
summed with sparse scores (multiples of 1/16), so that whether a record reaches
``min_score`` never depends on an engine's rounding."""
DIMENSION = 4


class SequenceTests(SuiteBase):
    """Binding attribute: ``sequence_steps`` (default 90), the steps per metric the
    adapter declares."""

    sequence_steps: ClassVar[int] = 90
    search_loses_records: ClassVar[str | None] = None
    """Set by a binding whose engine is known to leave some live records unreachable by
    vector search after deletes and upserts (fetch and count still find them): the
    reason, naming the engine's own issue. Each query is then compared with the
    reference answer over the records an unfiltered search of the whole namespace still
    reaches (same ids, order and scores among those), and the unreachable ones are
    reported in a warning, never silently."""

    @pytest.mark.feature(DIFFERENTIAL)
    def test_sequences_against_the_reference(self, store: Store) -> None:
        caps = store.capabilities
        with vectorport.connect("memory://") as reference:
            for seed, metric in enumerate(sorted(caps.metrics)):
                # sparse vectors too where hybrid scores are sums (on dot product, as the
                # differential test): a replacement must drop a sparse vector it lacks
                sparse = caps.sparse and caps.hybrid == "sum" and metric == "dotproduct"
                name = unique_name("seq")
                index = store.create_index(name, DIMENSION, metric, sparse=sparse)
                oracle = reference.create_index(name, DIMENSION, metric, sparse=sparse)
                try:
                    _Run(self, index, oracle, random.Random(seed)).steps(
                        self.sequence_steps)
                finally:
                    store.delete_index(name, missing_ok=True)


class _Run:
    """One sequence: the adapter's index and the reference's, and the steps so far."""

    def __init__(self, suite: SequenceTests, index: Index, oracle: Index,
                 draw: random.Random) -> None:
        self.suite, self.index, self.oracle, self.draw = suite, index, oracle, draw
        self.caps = index.store.capabilities
        self.keys = draw.sample(KEYS, draw.randint(3, 6))
        self.sparse = index.spec.sparse
        self.log: list[str] = [f"index = store.create_index('repro', {DIMENSION}, "
                               f"{index.spec.metric!r}, sparse={self.sparse})"]

    def steps(self, count: int) -> None:
        actions: list[tuple[float, Callable[[str], None]]] = [
            (0.28, self.upsert), (0.26, self.query), (0.08, self.count), (0.07, self.fetch),
            (0.06, self.delete_ids), (0.05, self.delete_filter), (0.06, self.list_ids),
            (0.07, self.patch), (0.06, self.scan), (0.01, self.delete_namespace)]
        for _ in range(count):
            namespace = self.draw.choice(NAMESPACES)
            roll, chosen = self.draw.random(), actions[-1][1]
            for weight, action in actions:
                if roll < weight:
                    chosen = action
                    break
                roll -= weight
            chosen(namespace)
        self.same("list_namespaces()", lambda i: sorted(i.list_namespaces()))

    # -- drawing ----------------------------------------------------------------------

    def value(self) -> Any:
        roll = self.draw.random()
        if roll < 0.3:
            return self.draw.choice(INTS)
        if roll < 0.5:
            return self.draw.choice(FLOATS)
        if roll < 0.75:
            return self.draw.choice(STRINGS)
        if roll < 0.85:
            return self.draw.random() < 0.5
        return self.draw.sample(STRINGS, self.draw.randint(1, 3))

    def scalar(self) -> Any:
        roll = self.draw.random()
        if roll < 0.55:
            return self.draw.choice(INTS + FLOATS)
        return self.draw.choice(STRINGS) if roll < 0.9 else self.draw.random() < 0.5

    def operand_list(self) -> list[Any]:
        size, roll = self.draw.randint(1, 3), self.draw.random()
        pool: Sequence[Any] = (INTS + FLOATS if roll < 0.4 else STRINGS if roll < 0.9
                               else (True, False))
        return [self.draw.choice(pool) for _ in range(size)]

    def condition(self, field: str | None = None) -> dict[str, Any]:
        field = field or self.draw.choice(self.keys)
        op = self.draw.choice(("=", "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in",
                               "$nin", "$exists", "$all", "$not"))
        if op == "=":
            return {field: self.scalar()}
        if op in RANGES:
            return {field: {op: self.draw.choice(INTS + FLOATS + STRINGS)}}
        if op in ("$in", "$nin", "$all"):
            return {field: {op: self.operand_list()}}
        if op == "$exists":
            return {field: {op: self.draw.random() < 0.5}}
        if op == "$not":
            inner = self.condition(field)[field]
            return {field: {"$not": inner if isinstance(inner, dict) else {"$eq": inner}}}
        return {field: {op: self.scalar()}}

    def filter(self, depth: int = 0) -> dict[str, Any]:
        roll = self.draw.random()
        if depth >= 3 or roll < 0.5:
            return self.condition()
        if roll < 0.9:
            op = "$and" if roll < 0.65 else "$or" if roll < 0.8 else "$nor"
            return {op: [self.filter(depth + 1) for _ in range(self.draw.randint(1, 3))]}
        return {"$not": self.filter(depth + 1)}

    def sparse_vector(self) -> SparseVector:
        indices = sorted(self.draw.sample(range(13), self.draw.randint(1, 4)))
        return SparseVector(tuple(indices),
                            tuple(self.draw.choice(SPARSE_VALUES) for _ in indices))

    def vector(self) -> list[float]:
        while True:
            vector = [self.draw.choice(COMPONENTS) for _ in range(DIMENSION)]
            if any(vector):
                return vector

    # -- steps ------------------------------------------------------------------------

    def upsert(self, namespace: str) -> None:
        rows = []
        for record_id in self.draw.sample(IDS, self.draw.randint(1, 6)):
            row: dict[str, Any] = {
                "id": record_id, "vector": self.vector(),
                "metadata": {k: self.value() for k in
                             self.draw.sample(self.keys, self.draw.randint(0, len(self.keys)))}}
            if self.caps.documents and self.draw.random() < 0.3:
                row["document"] = self.draw.choice(STRINGS)
            if self.sparse and self.draw.random() < 0.5:
                row["sparse"] = self.sparse_vector()
            rows.append(row)
        if self.draw.random() < 0.15:  # the bulk path: COPY, bulk inserts, column writes
            self.write(f"upsert_bulk({rows!r}, namespace={namespace!r})",
                       lambda i: i.upsert_bulk(rows, namespace=namespace))
        else:
            self.write(f"upsert({rows!r}, namespace={namespace!r})",
                       lambda i: i.upsert(rows, namespace=namespace))

    def patch(self, namespace: str) -> None:
        index, oracle = self.index, self.oracle
        if not (isinstance(index, PatchableIndex) and isinstance(oracle, PatchableIndex)):
            return
        record_id = self.draw.choice(IDS)
        changes: dict[str, Any] = {}
        if self.draw.random() < 0.75:  # None removes a key
            changes["metadata"] = {
                key: None if self.draw.random() < 0.3 else self.value()
                for key in self.draw.sample(self.keys, self.draw.randint(1, 3))}
        if self.draw.random() < 0.3 or not changes:
            changes["vector"] = self.vector()
        if self.caps.documents and self.draw.random() < 0.2:
            changes["document"] = self.draw.choice(STRINGS)
        if self.sparse and self.draw.random() < 0.2:
            changes["sparse"] = self.sparse_vector()
        call = f"patch({record_id!r}, namespace={namespace!r}, **{changes!r})"
        found: dict[bool, bool] = {}  # adapter or reference: whether the record was there

        def patched(side: Index) -> None:
            assert isinstance(side, PatchableIndex)
            found[side is oracle] = side.patch(record_id, namespace=namespace, **changes)

        self.write(call, patched)
        assert len(set(found.values())) <= 1, (
            f"{self.context(call)}: returned {found.get(False)}, the reference "
            f"{found.get(True)}")

    def delete_namespace(self, namespace: str) -> None:
        self.write(f"delete_namespace({namespace!r})",
                   lambda i: i.delete_namespace(namespace))

    def delete_ids(self, namespace: str) -> None:
        ids = self.draw.sample(IDS, self.draw.randint(1, 4))
        self.write(f"delete({ids!r}, namespace={namespace!r})",
                   lambda i: i.delete(ids, namespace=namespace))

    def delete_filter(self, namespace: str) -> None:
        if not self.caps.delete_by_filter:
            return
        raw = self.filter()
        self.write(f"delete(filter={raw!r}, namespace={namespace!r})",
                   lambda i: i.delete(filter=raw, namespace=namespace), raw)

    def query(self, namespace: str) -> None:
        raw = None if self.draw.random() < 0.2 else self.filter()
        mode = self.draw.choice(("dense", "sparse", "hybrid")) if self.sparse else "dense"
        vector = self.vector() if mode != "sparse" else None
        sparse = self.sparse_vector() if mode != "dense" else None
        top_k, include_vectors = self.draw.randint(1, 12), self.draw.random() < 0.4
        min_score = self.draw.choice(MIN_SCORES) if self.draw.random() < 0.2 else None
        # a second dense vector sometimes: both through query_many (one pass where the
        # adapter answers many queries at once)
        vectors = ([vector, self.vector()] if mode == "dense" and self.draw.random() < 0.2
                   else [vector])
        options: dict[str, Any] = {"top_k": top_k, "filter": raw, "namespace": namespace,
                                   "include_vectors": include_vectors,
                                   "min_score": min_score}
        if len(vectors) > 1:
            call = f"query_many({vectors!r}, **{options!r})"
            run = lambda: self.index.query_many(vectors, **options)  # noqa: E731
        else:
            call = f"query({vector!r}, sparse={sparse!r}, **{options!r})"
            run = lambda: [self.index.query(vector, sparse=sparse, **options)]  # noqa: E731
        self.log.append(call)
        answers = self.refusable(call, raw, run)
        if answers is None:
            return
        tolerance = self.suite.score_tolerance
        for each, got in zip(vectors, answers, strict=True):
            expected = self.oracle.query(each, sparse=sparse, top_k=10_000, filter=raw,
                                         namespace=namespace, include_vectors=True,
                                         min_score=min_score)
            unreachable = self.unreachable(each, namespace) if each is not None else set()
            assert_same_matches(got, [Expected(m.id, m.score) for m in expected
                                      if m.id not in unreachable], tolerance,
                                self.context(call), top_k)
            by_id = {m.id: m for m in expected}
            for match in got:
                self.same_match(match, by_id[match.id], include_vectors, call)

    def unreachable(self, vector: list[float], namespace: str) -> set[str]:
        """The records of ``namespace`` an unfiltered search for ``vector`` over the whole
        namespace does not return, where the binding declares its engine loses some
        (:attr:`SequenceTests.search_loses_records`); else none."""
        reason = self.suite.search_loses_records
        if reason is None:
            return set()
        stored = self.oracle.count(namespace)
        if not stored:
            return set()
        reached = {m.id for m in self.index.query(vector, top_k=stored, namespace=namespace,
                                                  include_metadata=False)}
        lost = {m.id for m in self.oracle.query(vector, top_k=stored, namespace=namespace,
                                                include_metadata=False)} - reached
        if lost:
            warnings.warn(f"{len(lost)} of {stored} records of namespace {namespace!r} "
                          f"unreachable by search ({sorted(lost)!r}): {reason}", stacklevel=2)
        return lost

    def count(self, namespace: str) -> None:
        raw = self.filter() if self.caps.count_by_filter else None
        call = f"count({namespace!r}, filter={raw!r})"
        self.log.append(call)
        want = self.oracle.count(namespace, filter=raw)
        got = self.refusable(call, raw, lambda: self.index.count(namespace, filter=raw))
        assert got is None or got == want, f"{self.context(call)}: {got} records, expected {want}"

    def fetch(self, namespace: str) -> None:
        ids = self.draw.sample(IDS, self.draw.randint(1, 6))
        call = f"fetch({ids!r}, {namespace!r})"
        self.log.append(call)
        want, got = self.oracle.fetch(ids, namespace), self.index.fetch(ids, namespace)
        assert list(got) == list(want), f"{self.context(call)}: {list(got)} vs {list(want)}"
        for record_id, record in got.items():
            expected = want[record_id]
            self.same_record(record, expected, call)

    def same_record(self, record: Record, expected: Record, call: str) -> None:
        where = f"{self.context(call)}: record {record.id!r}"
        _same_parts(where, record, expected, vector=True)
        assert record.sparse == expected.sparse, (
            f"{where}: sparse vector {record.sparse!r}, expected {expected.sparse!r}")

    def scan(self, namespace: str) -> None:
        """Every page of a scan (a filter sometimes), then the same scan resumed from its
        first page's cursor: the pages hold the reference's records, each once. A scan
        takes every filter of declared operators (what the engine cannot express, the
        core matches with the oracle), so only undeclared operators may be refused."""
        raw = self.filter() if self.draw.random() < 0.4 else None
        page_size = self.draw.randint(1, 4)
        call = f"scan({namespace!r}, filter={raw!r}, page_size={page_size})  # every page"
        self.log.append(call)
        node = parse_filter(raw) if raw is not None else None
        if node is not None and self.undeclared(node):
            refused = outcome(lambda: list(self.index.scan(namespace, filter=raw)))
            assert refused == "UnsupportedFeatureError", (
                f"{self.context(call)}: {refused} for undeclared operators")
            self.log[-1] = f"# refused: {call}"
            return
        pages = list(self.index.scan(namespace, filter=raw, page_size=page_size))
        want = {r.id: r for page in self.oracle.scan(namespace, filter=raw)
                for r in page.records}
        ids = [r.id for page in pages for r in page.records]
        assert sorted(ids) == sorted(want), (
            f"{self.context(call)}: {sorted(ids)!r}, expected {sorted(want)!r}")
        for page in pages:
            assert len(page.records) <= page_size, f"{self.context(call)}: a page too long"
            for record in page.records:
                self.same_record(record, want[record.id], call)
        if len(pages) > 1:
            cursor = pages[0].next_cursor
            resumed = [r.id for page in self.index.scan(namespace, filter=raw,
                                                        page_size=page_size, cursor=cursor)
                       for r in page.records]
            first = [r.id for r in pages[0].records]
            assert sorted(first + resumed) == sorted(want), (
                f"{self.context(call)}: resumed after the first page: {sorted(resumed)!r} "
                f"after {first!r}, expected {sorted(want)!r}")

    def list_ids(self, namespace: str) -> None:
        if not (isinstance(self.index, ListableIndex) and isinstance(self.oracle, ListableIndex)):
            return
        prefix = self.draw.choice(PREFIXES)
        call = f"list_ids({namespace!r}, prefix={prefix!r})  # every page"

        def listing(index: Index) -> list[str]:
            assert isinstance(index, ListableIndex)
            ids: list[str] = []
            cursor = None
            while True:
                page = index.list_ids(namespace, prefix=prefix, limit=3, cursor=cursor)
                ids.extend(page.ids)
                cursor = page.next_cursor
                if cursor is None:
                    return sorted(ids)

        self.same(call, listing)

    # -- checking ---------------------------------------------------------------------

    def write(self, call: str, fn: Callable[[Index], object], raw: Any = None) -> None:
        """``fn`` on the adapter, then (unless the adapter refused it) on the reference:
        both succeed, or both refuse it with the same kind of error."""
        self.log.append(call)
        got = outcome(lambda: fn(self.index))
        if got == "UnsupportedFeatureError":
            if raw is not None:
                self.check_refusal(call, raw)
            # refused before any write: the reference does not apply it either
            self.log[-1] = f"# refused: {call}"
            return
        want = outcome(lambda: fn(self.oracle))
        assert got == want, f"{self.context(call)}: {got} (the reference: {want})"

    def refusable(self, call: str, raw: Any, fn: Callable[[], Any]) -> Any:
        """``fn()``, or None when the adapter refused the filter as it declared it would;
        a declared deviation that does not raise is a failure."""
        node = parse_filter(raw) if raw is not None else None
        refused = node is not None and self.refuses(node)
        try:
            result = fn()
        except UnsupportedFeatureError:
            self.check_refusal(call, raw)
            self.log[-1] = f"# refused: {call}"
            return None
        assert not refused, f"{self.context(call)}: a declared deviation did not raise"
        return result

    def undeclared(self, node: Filter) -> bool:
        """``node`` uses an operator the adapter does not declare."""
        return bool(operators_used(node) - self.caps.filter_operators)

    def refuses(self, node: Filter) -> bool:
        return self.undeclared(node) or self.suite.filter_deviation(node)

    def check_refusal(self, call: str, raw: Any) -> None:
        node = parse_filter(raw)
        assert node is not None and self.refuses(node), (
            f"{self.context(call)}: UnsupportedFeatureError for a filter of declared "
            "operators that the binding's filter_deviation does not name")

    def same(self, call: str, fn: Callable[[Index], object]) -> None:
        self.log.append(call)
        want, got = fn(self.oracle), fn(self.index)
        assert got == want, f"{self.context(call)}: {got!r}, expected {want!r}"

    def same_match(self, got: Match, expected: Match, include_vectors: bool, call: str) -> None:
        where = f"{self.context(call)}: match {got.id!r}"
        _same_parts(where, got, expected, vector=include_vectors)
        if not include_vectors:
            assert got.vector is None, f"{where}: a vector not asked for"

    def context(self, call: str) -> str:
        steps = "\n".join(line if i == 0 or line.startswith("#") else f"index.{line}"
                           for i, line in enumerate(self.log))
        return (f"{call}\nreproduction (vectorport.connect('memory://') answers otherwise; "
                f"SparseVector from vectorport):\n{steps}")


def _same_parts(where: str, got: Record | Match, expected: Record | Match, *,
                vector: bool) -> None:
    """What a fetched record and a match share, as the contract compares it: metadata by
    value and kind, the document, and (``vector``) the dense vector as float32 to a
    relative 1e-6."""
    assert with_kinds(got.metadata) == with_kinds(expected.metadata), (
        f"{where}: metadata {dict(got.metadata or {})!r}, expected "
        f"{dict(expected.metadata or {})!r}")
    assert got.document == expected.document, f"{where}: document"
    if vector:
        assert got.vector is not None, f"{where}: no vector"
        assert expected.vector is not None
        assert np.allclose(got.vector, expected.vector, rtol=1e-6, atol=0), (
            f"{where}: vector")
