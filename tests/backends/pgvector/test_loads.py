"""``copy_index`` and ``import_index`` into a pgvector index they create: the ANN and
metadata indexes are put off while the pages arrive (each too small for ``upsert_bulk``
to drop and rebuild them itself) and built once at the end; a copy killed in between
leaves an index that answers exactly, and its resumed run builds them.

Expected answers come from the reference query over the records the index holds.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import pytest
from tests.support.jobs import kill_once_under_way, run_to_the_end

pytest.importorskip("pgvector")

import vectorport
from vectorport.adapters.pgvector.adapter import PgvectorAdapter
from vectorport.conformance.base import assert_same_matches
from vectorport.conformance.reference import reference_query
from vectorport.core.store import Store
from vectorport.transfer import copy_index, export_index, import_index

from .test_bulk import helper_indexes

DIM = 16
ALL_BUILT = {"pkey", "ann", "meta"}


def _rows(count: int) -> list[dict[str, object]]:
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(count, DIM)).astype(np.float32)
    return [{"id": f"r{i:05d}", "vector": vectors[i], "metadata": {"n": i, "even": i % 2 == 0},
             "document": f"text {i}"} for i in range(count)]


def _index_url(store_url: str, name: str) -> str:
    """The URL of index ``name`` in the store at ``store_url`` (its name after the
    database in the path)."""
    parts = urlsplit(store_url)
    return urlunsplit((parts.scheme, parts.netloc, f"{parts.path}/{name}", parts.query, ""))


def _adapter(store: Store) -> PgvectorAdapter:
    adapter = store.adapter
    assert isinstance(adapter, PgvectorAdapter)
    return adapter


def _assert_exact_answers(index: vectorport.Index) -> None:
    """The index answers as the reference does over what it holds (ef high enough to
    make an HNSW search exhaustive on this few)."""
    held = list(index.iter_records())
    for probe in (held[0], held[len(held) // 2]):
        want = reference_query(held, "cosine", vector=probe.vector.tolist(), top_k=10)
        assert_same_matches(index.query(probe.vector, top_k=10, ef=1000), want, 1e-4,
                            "exact")


def _memory_source(count: int) -> vectorport.Index:
    source = vectorport.connect("memory://").create_index("src", DIM, "cosine")
    source.upsert(_rows(count))
    return source


def _assert_all_built(pg_url: str, store: Store, name: str) -> None:
    """The ANN, metadata and key indexes of ``name`` exist, the catalog says the ANN
    index is built, and the index answers as the reference does."""
    assert helper_indexes(pg_url, store, name) == ALL_BUILT
    assert _adapter(store).ann_index_built(name)
    _assert_exact_answers(store.index(name))


PUT_OFF = "{}: its search structures are built once the records are in"
"""What copy and import log when they put off a new index's upkeep."""


def test_a_copy_builds_its_new_index_once_the_records_are_in(
        pg_url: str, store: Store, name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    source = _memory_source(3_000)
    with caplog.at_level(logging.INFO, logger="vectorport.transfer"):
        report = copy_index(source, store, destination_name=name, batch_size=500,
                            checkpoint=tmp_path / "copy.json", progress=False)
    assert report.verification is not None and report.verification.ok
    assert PUT_OFF.format(name) in caplog.text
    _assert_all_built(pg_url, store, name)


def test_a_copy_killed_while_it_fills_its_new_index_is_finished_by_its_resumed_run(
        pg_url: str, store: Store, name: str, tmp_path: Path) -> None:
    with vectorport.connect(f"local://{tmp_path}/src.db") as local:
        local.create_index("big", DIM, "cosine").upsert(_rows(6_000))
    checkpoint = tmp_path / "copy.json"
    command = [sys.executable, "-m", "vectorport.cli", "copy", f"local://{tmp_path}/src.db/big",
               _index_url(pg_url, name), "--batch-size", "50", "--workers", "2",
               "--checkpoint", str(checkpoint)]
    kill_once_under_way(command, checkpoint)
    # what the crash left: the indexes still put off, every answer exact (a scan)
    assert helper_indexes(pg_url, store, name) == {"pkey"}
    assert not _adapter(store).ann_index_built(name)
    index = store.index(name)
    assert 0 < index.count() < 6_000
    _assert_exact_answers(index)
    out = run_to_the_end(command)
    assert "verified: the destination holds exactly the source's records" in out
    assert index.count() == 6_000
    _assert_all_built(pg_url, store, name)


def test_an_import_builds_the_index_it_creates_once_the_records_are_in(
        pg_url: str, store: Store, name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    source = _memory_source(2_000)
    export_index(source, tmp_path / "dump", progress=False)
    with caplog.at_level(logging.INFO, logger="vectorport.transfer"):
        report = import_index(tmp_path / "dump", store, index_name=name, batch_size=300,
                              checkpoint=tmp_path / "import.json", progress=False)
    assert report.ok
    assert PUT_OFF.format(name) in caplog.text
    _assert_all_built(pg_url, store, name)


def test_a_load_into_an_index_that_existed_leaves_its_indexes_as_they_were(
        pg_url: str, store: Store, name: str, tmp_path: Path) -> None:
    """Only an index the job creates is put off: one created with ``defer_index``
    keeps its ANN index deferred through the copy and its ``optimize``, for the
    ``build_index`` its creator asked to call."""
    source = _memory_source(1_000)
    store.create_index(name, DIM, "cosine", backend_options={"pgvector": {"defer_index": True}})
    report = copy_index(source, store, destination_name=name, batch_size=250,
                        checkpoint=tmp_path / "copy.json", progress=False)
    assert report.verification is not None and report.verification.ok
    assert helper_indexes(pg_url, store, name) == {"pkey", "meta"}
    assert not _adapter(store).ann_index_built(name)
    _adapter(store).build_index(name)
    assert helper_indexes(pg_url, store, name) == ALL_BUILT
