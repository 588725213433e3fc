"""Metadata numbers of full precision, shared by every adapter.

Engines that parse stored JSON or decimal text with a parser that is not correctly
rounded give some floats back one or two units in the last place off (Chroma's and
Qdrant Edge's Rust cores did, for about one float in eight with 17 significant digits),
and where the engine also compares the value it read, a filter on the value written
misses its record. Such floats are what applications store every day (scores,
timestamps, ``random.random()``), so every adapter must give them back exactly and
treat each one as an exact filter boundary (or refuse the filter, naming itself, as
a Chroma server does for operands it would parse as another number).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from vectorport.conformance.base import SuiteBase, unique_name
from vectorport.core.errors import UnsupportedFeatureError
from vectorport.core.filters.oracle import matches
from vectorport.core.filters.parse import parse_filter
from vectorport.core.store import Index, Store

PRECISION_NAMESPACE = "precision"
_EXACT_OPERAND_LIMIT = 2**53
"""Operands from here on are refused by engines comparing as float64 (declared)."""


def precise_numbers() -> list[int | float]:
    """Floats of 15 to 17 significant digits over the whole exponent range, the
    smallest and largest floats, and ints of every size (a fixed seed: the same values
    on every run and every backend)."""
    rng = random.Random(17)
    values: list[int | float] = [rng.uniform(-1e6, 1e6) for _ in range(24)]
    values += [rng.random() for _ in range(8)]
    values += [rng.choice((1, -1)) * rng.random() * 10.0 ** rng.randint(-300, 300)
               for _ in range(12)]
    values += [90.33333333333333, 0.1 + 0.2, 1 / 3, 5e-324, 2.2250738585072014e-308,
               1.7976931348623157e308, 0.0, 7.0, 7, -7, 2**53 - 1, -(2**62), 2**63 - 1]
    return values


class PrecisionTests(SuiteBase):
    @pytest.fixture(scope="class")
    @classmethod
    def precise(cls, store: Store) -> Iterator[tuple[Index, list[int | float]]]:
        name = unique_name("precise")
        index = store.create_index(name, 2, cls.a_metric(store))
        values = precise_numbers()
        index.upsert([{"id": f"p{i:02d}", "vector": [1.0, float(i)], "metadata": {"x": v}}
                      for i, v in enumerate(values)], namespace=PRECISION_NAMESPACE)
        yield index, values
        store.delete_index(name, missing_ok=True)

    def test_numbers_of_full_precision_come_back_exactly(
        self, precise: tuple[Index, list[int | float]]
    ) -> None:
        index, values = precise
        ids = [f"p{i:02d}" for i in range(len(values))]
        fetched = index.fetch(ids, namespace=PRECISION_NAMESPACE)
        ranked = {m.id: m.metadata for m in index.query(
            [1.0, 0.0], top_k=len(values), namespace=PRECISION_NAMESPACE)}
        for rid, value in zip(ids, values, strict=True):
            for source, metadata in (("fetch", fetched[rid].metadata), ("query", ranked[rid])):
                assert metadata is not None
                got = metadata["x"]
                assert got == value and type(got) is type(value), (
                    f"{source} gave {got!r} for {value!r}")

    @pytest.mark.parametrize("op", ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"])
    def test_each_stored_number_is_an_exact_filter_boundary(
        self, store: Store, precise: tuple[Index, list[int | float]], op: str
    ) -> None:
        if op not in store.capabilities.filter_operators:
            pytest.skip(f"{op} not declared")
        index, values = precise
        for operand in values:
            if abs(operand) >= _EXACT_OPERAND_LIMIT:
                continue
            flt = {"x": {op: operand}}
            node = parse_filter(flt)
            want = sorted(f"p{i:02d}" for i, v in enumerate(values) if matches(node, {"x": v}))
            try:
                got = sorted(m.id for m in index.query(
                    [1.0, 0.0], top_k=len(values), filter=flt, namespace=PRECISION_NAMESPACE))
            except UnsupportedFeatureError as refused:  # declared: exact or refused
                assert store.backend in str(refused), refused
                continue
            assert got == want, flt


__all__ = ["PRECISION_NAMESPACE", "PrecisionTests", "precise_numbers"]
