"""The trust boundary of a copy (:mod:`vectorport.core.checked`): a page the core's own
scan issued is written without the contract's checks, but still through every rule that
can refuse it in the destination; anything a caller built — a hand-made
``CheckedRecords`` included — takes the whole validation and is refused as before."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
import pytest

import vectorport
from vectorport.core import checked, requests
from vectorport.core.capabilities import Limits
from vectorport.core.errors import UnsupportedFeatureError, ValidationError
from vectorport.core.store import Index, Store
from vectorport.core.types import Record

DIM = 4


@pytest.fixture
def store() -> Iterator[Store]:
    with vectorport.connect("memory://") as opened:
        yield opened


def _rows(count: int = 5, *, zero_first: bool = False) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for i in range(count):
        vector = [0.0] * DIM if zero_first and i == 0 else [float(i + 1), 1.0, 0.5, -0.25]
        rows.append({"id": f"r{i}", "vector": vector,
                     "metadata": {"n": i, "f": i + 0.5, "b": i % 2 == 0, "tags": ["a", "b"]},
                     "document": f"text {i}"})
    return rows


def _source(store: Store, metric: str = "cosine", *, zero_first: bool = False) -> Index:
    index = store.create_index(f"src_{metric}", DIM, metric)  # type: ignore[arg-type]
    index.upsert(_rows(zero_first=zero_first))
    return index


def _page(index: Index) -> checked.CheckedRecords:
    pages = list(checked.checked_scan(index, page_size=100))
    assert len(pages) == 1
    return pages[0]


def test_a_scanned_page_is_admitted_without_the_contract_checks(store: Store) -> None:
    source = _source(store)
    page = _page(source)
    assert checked.is_checked(page)
    destination = store.create_index("dst", DIM, "cosine")
    assert checked.admit(destination.target, page) is not None
    assert destination.upsert_bulk(page) == len(page)
    got = destination.fetch([r.id for r in page.records])
    assert [got[r.id] for r in page.records] == list(page.records)  # kinds kept: Record.__eq__
    assert {k: type(v) for k, v in got["r1"].metadata.items()} == {
        "n": int, "f": float, "b": bool, "tags": tuple}


def _bad_record() -> Record:
    # nothing the contract allows: an empty id, a NaN, a nested metadata value
    vector = np.array([np.nan, 1.0, 0.0, 0.0], dtype=np.float32)
    return Record(id="", vector=vector, metadata={"nested": {"a": 1}})  # type: ignore[dict-item]


def test_a_hand_built_checked_batch_is_not_trusted(store: Store) -> None:
    source = _source(store)
    destination = store.create_index("dst", DIM, "cosine")
    forged = checked.CheckedRecords((_bad_record(),), source.target, None)
    assert not checked.is_checked(forged)
    with pytest.raises(ValidationError):
        destination.upsert_bulk(forged)
    with pytest.raises(ValidationError):
        destination.upsert([_bad_record()])
    # the records of an issued page, taken out of it, are a caller's list again
    page = _page(source)
    with pytest.raises(ValidationError):
        destination.upsert_bulk([*page.records, _bad_record()])
    # a copy of an issued page is not the page the core issued
    copied = dataclasses.replace(page, records=(*page.records, _bad_record()))
    assert not checked.is_checked(copied)
    with pytest.raises(ValidationError):
        destination.upsert_bulk(copied)
    assert destination.count() == 0


def test_the_destination_index_still_refuses_what_it_cannot_hold(store: Store) -> None:
    source = _source(store)
    page = _page(source)
    other_dimension = store.create_index("wide", DIM + 1, "cosine")
    with pytest.raises(ValidationError):
        other_dimension.upsert_bulk(page)
    assert other_dimension.count() == 0


def test_a_zero_vector_held_under_euclidean_is_refused_under_cosine(store: Store) -> None:
    source = _source(store, "euclidean", zero_first=True)
    page = _page(source)
    cosine = store.create_index("dst", DIM, "cosine")
    assert checked.admit(cosine.target, page) is None
    with pytest.raises(ValidationError, match="zero"):
        cosine.upsert_bulk(page)
    assert cosine.count() == 0
    euclidean = store.create_index("dst_e", DIM, "euclidean")
    assert euclidean.upsert_bulk(page) == len(page)


def test_a_tighter_destination_rule_still_refuses(store: Store) -> None:
    source = _source(store)
    page = _page(source)
    destination = store.create_index("dst", DIM, "cosine")
    base = destination.target
    short_ids = dataclasses.replace(base.capabilities, limits=dataclasses.replace(
        base.capabilities.limits, max_id_bytes=1))
    tight = requests.Target(base.backend, short_ids, base.spec)
    assert checked.admit(tight, page) is None
    with pytest.raises(ValidationError, match="id"):
        requests.build_records(tight, page)
    no_documents = requests.Target(base.backend, dataclasses.replace(
        base.capabilities, documents=False, limits=Limits()), base.spec)
    with pytest.raises(UnsupportedFeatureError, match="documents"):
        requests.build_records(no_documents, page)
