"""Copying, verifying, exporting and importing indexes, between real engines.

The expected destination is always the source as written (compared record by record
through the public API, not through vectorport's own verify), so a copy that loses,
duplicates, widens or alters anything fails here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.support.backends import ALL, opened_store
from tests.support.records import assert_same_record

import vectorport
from vectorport.adapters.local.adapter import LocalAdapter
from vectorport.transfer import copy_index, export_index, import_index, plan_copy, verify_indexes

NAMESPACES = ("", "tenant-a", "tenant-b")
BY_NAME = {b.name: b for b in ALL}


def rows(namespace: str, count: int, *, sparse: bool, dimension: int = 8) -> list[dict[str, Any]]:
    """Records with metadata of every kind (1, 1.0 and True kept apart), documents, and
    sparse vectors when the index has them. Some hold a ``-0.0``, which PostgreSQL and
    Pinecone give back as ``0.0``: the contract counts the two as the same value, so a
    copy into them must still verify."""
    rng = np.random.default_rng(abs(hash(namespace)) % 2**32)
    out = []
    for i in range(count):
        meta: dict[str, Any] = {"n": i, "half": i / 2, "even": i % 2 == 0,
                                "word": f"w{i % 7}", "tags": [f"t{i % 3}", "all"],
                                "one_int": 1, "one_float": 1.0, "yes": True}
        if i % 5 == 0:
            del meta["word"]
        if i % 4 == 1:
            meta["signed_zero"] = -0.0
        row: dict[str, Any] = {"id": f"{namespace or 'default'}-{i:04d}",
                               "vector": rng.normal(size=dimension).astype(np.float32),
                               "metadata": meta, "document": f"text {i} of {namespace!r}"}
        if sparse:
            row["sparse"] = {"indices": [i % 11, 20 + i % 5], "values": [0.5, float(i % 4) + 0.25]}
        out.append(row)
    return out


def fill(store: vectorport.Store, name: str, *, metric: str = "cosine", sparse: bool = False,
         count: int = 40) -> tuple[vectorport.Index, dict[str, list[dict[str, Any]]]]:
    index = store.create_index(name, 8, metric, sparse=sparse)
    written = {}
    for ns in NAMESPACES:
        written[ns] = rows(ns, count, sparse=sparse)
        index.upsert(written[ns], namespace=ns)
    return index, written


def assert_holds_exactly(index: vectorport.Index, written: dict[str, list[dict[str, Any]]]) -> None:
    """``index`` holds exactly ``written``: same ids per namespace, same parts, kinds kept."""
    for ns, expected in written.items():
        assert index.count(ns) == len(expected), ns
        got = index.fetch([r["id"] for r in expected], namespace=ns)
        assert len(got) == len(expected), ns
        listed = sorted(r.id for r in index.iter_records(ns))
        assert listed == sorted(r["id"] for r in expected), ns
        for want in expected:
            assert_same_record(got[want["id"]], want)




def _pairs() -> list[tuple[str, str]]:
    others = [b.name for b in ALL if b.name not in ("memory", "local")]
    pairs = [("local", o) for o in others] + [(o, "local") for o in others]
    pairs += [("pgvector", "chroma"), ("chroma", "milvus"), ("milvus", "pinecone"),
              ("pinecone", "turbopuffer"), ("turbopuffer", "pgvector")]
    return pairs


@pytest.mark.parametrize(("src", "dst"), _pairs(), ids=lambda v: str(v))
def test_copy_between_backends(src: str, dst: str, tmp_path: Path) -> None:
    with opened_store(BY_NAME[src], tmp_path / "src") as source_store, \
            opened_store(BY_NAME[dst], tmp_path / "dst") as dest_store:
        both_sparse = source_store.capabilities.sparse and dest_store.capabilities.sparse
        # Pinecone scores sparse vectors on dotproduct indexes only
        metric = "dotproduct" if both_sparse and "pinecone" in (src, dst) else "cosine"
        name = f"cp_{src}_{dst}"
        source, written = fill(source_store, name, metric=metric, sparse=both_sparse)
        try:
            report = copy_index(source, dest_store, progress=False,
                                checkpoint=tmp_path / "ckpt.json")
            assert report.verification is not None and report.verification.ok
            assert sum(report.written.values()) == sum(len(v) for v in written.values())
            assert not (tmp_path / "ckpt.json").exists()
            assert_holds_exactly(dest_store.index(name), written)
        finally:
            source_store.delete_index(name, missing_ok=True)
            dest_store.delete_index(name, missing_ok=True)


def test_copy_from_a_source_under_faults_and_lag(tmp_path: Path) -> None:
    from vectorport.testing.emulators.http import Faults
    from vectorport.testing.emulators.pinecone import running

    os.environ.setdefault("VECTORPORT_TEST_EMULATOR_KEY", "emulator-key")
    faults = Faults(error_rate=0.2, lag_seconds=0.2, seed=7)
    with running(api_key=os.environ["VECTORPORT_TEST_EMULATOR_KEY"]) as server, \
            vectorport.connect(f"pinecone://?api_key_env=VECTORPORT_TEST_EMULATOR_KEY&host={server.url}"
                               ) as source_store, \
            vectorport.connect(f"local://{tmp_path / 'dst.db'}") as dest_store:
        source, written = fill(source_store, "faulty")
        server.faults = faults  # only the copy runs under faults
        report = copy_index(source, dest_store, progress=False, checkpoint=tmp_path / "c.json")
        server.faults = None
        assert report.verification is not None and report.verification.ok
        assert_holds_exactly(dest_store.index("faulty"), written)


def test_a_destination_that_cannot_hold_the_source_refuses_before_writing(tmp_path: Path) -> None:
    with opened_store(BY_NAME["local"], tmp_path / "src") as source_store, \
            opened_store(BY_NAME["turbopuffer"], tmp_path / "dst") as dest_store:
        assert "dotproduct" not in dest_store.capabilities.metrics
        source, _ = fill(source_store, "dots", metric="dotproduct", count=5)
        plan = plan_copy(source, dest_store)
        assert plan.problems and "dotproduct" in plan.problems[0]
        with pytest.raises(vectorport.UnsupportedFeatureError, match="dotproduct"):
            copy_index(source, dest_store, progress=False, checkpoint=tmp_path / "c.json")
        assert "dots" not in dest_store.list_indexes()


def test_records_the_destination_cannot_hold_are_named_before_any_write(tmp_path: Path) -> None:
    with opened_store(BY_NAME["local"], tmp_path / "src") as source_store, \
            opened_store(BY_NAME["pinecone"], tmp_path / "dst") as dest_store:
        limit = dest_store.capabilities.max_metadata_bytes
        assert limit < source_store.capabilities.max_metadata_bytes
        source = source_store.create_index("big_meta", 4, "cosine")
        source.upsert([{"id": f"ok-{i}", "vector": [1, i, 0, 0]} for i in range(50)]
                      + [{"id": "too-big", "vector": [0, 1, 0, 0],
                          "metadata": {"blob": "x" * (limit + 100)}}])
        with pytest.raises(vectorport.ValidationError, match="too-big"):
            copy_index(source, dest_store, progress=False, checkpoint=tmp_path / "c.json",
                       batch_size=10)
        assert "big_meta" not in dest_store.list_indexes()


def test_existing_destination_of_another_shape_is_refused(tmp_path: Path) -> None:
    with vectorport.connect("memory://") as a, vectorport.connect(f"local://{tmp_path}/b.db") as b:
        source, _ = fill(a, "shape", count=3)
        b.create_index("shape", 8, "euclidean")
        with pytest.raises(vectorport.UnsupportedFeatureError, match="existing index"):
            copy_index(source, b, progress=False, checkpoint=tmp_path / "c.json")
        assert b.index("shape").count() == 0


def test_verify_finds_a_changed_record(tmp_path: Path) -> None:
    with vectorport.connect("memory://") as a, vectorport.connect(f"local://{tmp_path}/b.db") as b:
        source, written = fill(a, "changed", count=10)
        copy_index(source, b, progress=False, checkpoint=tmp_path / "c.json")
        target = b.index("changed")
        assert verify_indexes(source, target).ok
        changed = dict(written["tenant-a"][3])
        changed["metadata"] = {**changed["metadata"], "one_float": 1}  # 1.0 → 1: another kind
        target.upsert([changed], namespace="tenant-a")
        report = verify_indexes(source, target)
        assert not report.ok
        assert [n.namespace for n in report.namespaces if not n.same] == ["tenant-a"]


@pytest.mark.parametrize("single_file", [False, True])
def test_export_import_round_trip(tmp_path: Path, single_file: bool) -> None:
    import pyarrow.parquet as pq

    path = tmp_path / ("dump.parquet" if single_file else "dump")
    with vectorport.connect(f"local://{tmp_path}/a.db") as a, \
            vectorport.connect(f"local://{tmp_path}/b.db") as b:
        source, written = fill(a, "roundtrip", sparse=True, count=30)
        report = export_index(source, path, batch_size=7, progress=False)
        assert report.records == {ns: 30 for ns in NAMESPACES}
        table = pq.read_table(path)
        assert table.num_rows == 90
        assert table.schema.field("vector").type.list_size == 8
        imported = import_index(path, b, index_name="copied", batch_size=11, progress=False,
                                checkpoint=tmp_path / "i.json")
        assert imported.ok and imported.records == 90
        target = b.index("copied")
        assert (target.dimension, target.metric, target.spec.sparse) == (8, "cosine", True)
        assert_holds_exactly(target, written)
        assert verify_indexes(source, target).ok


@pytest.mark.parametrize(("url", "store_url", "name"), [
    ("local:///data/store.db/docs", "local:///data/store.db", "docs"),
    ("pgvector://me@/app/docs?host=/run/pg", "pgvector://me@/app?host=/run/pg", "docs"),
    ("pinecone:///docs?api_key_env=KEY", "pinecone://?api_key_env=KEY", "docs"),
])
def test_index_from_the_url(url: str, store_url: str, name: str) -> None:
    from vectorport.transfer.cli import split_index_url

    assert split_index_url(url, None) == (store_url, name)
    assert split_index_url(url, "other") == (url, "other")
    with pytest.raises(vectorport.ValidationError, match="--index"):
        split_index_url("memory://", None)


def test_cli_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from vectorport.cli import main

    with vectorport.connect(f"local://{tmp_path}/a.db") as a:
        fill(a, "planned", metric="dotproduct", count=4)
    code = main(["copy", f"local://{tmp_path}/a.db/planned", f"local://{tmp_path}/b.db/planned",
                 "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert "create index 'planned': dimension 8, metric dotproduct" in out
    assert "12 records in 3 namespace(s)" in out
    with vectorport.connect(f"local://{tmp_path}/b.db") as b:
        assert b.list_indexes() == []


async def test_async_scan_gives_the_same_pages(tmp_path: Path) -> None:
    with vectorport.connect(f"local://{tmp_path}/a.db") as store:
        index, written = fill(store, "async_scan", count=25)
        handle = vectorport.AsyncIndex(index)
        pages = [page async for page in handle.scan("tenant-a", page_size=10)]
        assert [len(p.records) for p in pages] == [10, 10, 5]
        resumed = [r.id async for r in handle.iter_records("tenant-a")]
        assert sorted(resumed) == sorted(r["id"] for r in written["tenant-a"])
        rest = [r.id for p in [p async for p in handle.scan(
            "tenant-a", page_size=10, cursor=pages[0].next_cursor)] for r in p.records]
        assert sorted(rest) == sorted(r.id for p in pages[1:] for r in p.records)


class _PutsOffOnly(LocalAdapter):
    """The reference engine with ``defer_upkeep`` but no ``optimize``: nothing would
    build again what it put off, so a copy must never ask it to."""

    def __init__(self) -> None:
        super().__init__(None)
        self.asked: list[str] = []

    def defer_upkeep(self, name: str) -> None:
        self.asked.append(f"defer {name}")


class _PutsOffAndOptimizes(_PutsOffOnly):
    def optimize(self, name: str) -> None:
        self.asked.append(f"optimize {name}")


@pytest.mark.parametrize(("adapter_class", "asked"), [
    (_PutsOffOnly, []),
    (_PutsOffAndOptimizes, ["defer copied", "optimize copied"]),
])
def test_only_an_index_that_can_be_optimized_has_its_upkeep_put_off(
        adapter_class: type[_PutsOffOnly], asked: list[str], tmp_path: Path) -> None:
    source, written = fill(vectorport.connect("memory://"), "src")
    adapter = adapter_class()
    destination = vectorport.Store(adapter)
    report = copy_index(source, destination, destination_name="copied", progress=False,
                        checkpoint=tmp_path / "ckpt.json")
    assert report.verification is not None and report.verification.ok
    assert adapter.asked == asked
    assert_holds_exactly(destination.index("copied"), written)
