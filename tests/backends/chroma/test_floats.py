"""Floats Chroma would read back (or, on a server, parse in a filter) inexactly.

The model of Chroma's parser (:func:`floats.parsed`) is checked against what raw
chromadb reads back; through the adapter any float (hypothesis) comes back exactly, and
so after replacing and patching; a server refuses filter operands outside that class, the embedded engine
takes them. (That every backend gives full-precision numbers back exactly is the
conformance suite's :mod:`vectorport.conformance.precision`.)
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

chromadb = pytest.importorskip("chromadb")

import vectorport  # noqa: E402
from vectorport.adapters.chroma import floats  # noqa: E402
from vectorport.core.errors import UnsupportedFeatureError  # noqa: E402
from vectorport.core.store import Index, PatchableIndex  # noqa: E402
from vectorport.testing.chroma import running_chroma_server  # noqa: E402

INEXACT = [-941989.5434327705, 90.33333333333333, -6.401753797853454e-156, 0.1 + 0.2]
"""Floats of 16-17 digits (the last one Chroma reads exactly: see the class test)."""


def _diverse_floats(count: int) -> list[float]:
    rng = random.Random(20261201)
    draws = (lambda: rng.uniform(-1e6, 1e6), rng.random,
             lambda: float(rng.randint(-2**53, 2**53)),
             lambda: rng.choice((1, -1)) * rng.random() * 10.0 ** rng.randint(-320, 308))
    return [rng.choice(draws)() for _ in range(count)]


def test_the_model_of_chromas_parser_gives_what_chroma_reads_back(tmp_path: Path) -> None:
    """The premise of :mod:`vectorport.adapters.chroma.floats`: raw chromadb reads each
    float back as :func:`floats.parsed` says, about one in five of these off. If Chroma
    fixes its parser, this fails, and the reserved field can go."""
    values = _diverse_floats(2_000)
    collection = chromadb.PersistentClient(path=str(tmp_path)).create_collection("model")
    for start in range(0, len(values), 500):
        part = values[start:start + 500]
        collection.add(ids=[str(start + i) for i in range(len(part))],
                       embeddings=[[1.0, 0.0]] * len(part), metadatas=[{"x": v} for v in part])
    got = collection.get(ids=[str(i) for i in range(len(values))], include=["metadatas"])
    back = {int(i): m["x"] for i, m in zip(got["ids"], got["metadatas"], strict=True)}
    assert [back[i] for i in range(len(values))] == [floats.parsed(v) for v in values]
    assert sum(back[i] != v for i, v in enumerate(values)) > len(values) // 10


def test_the_class_of_floats_read_exactly() -> None:
    assert all(floats.read_exactly(v) for v in (0.5, 3.14, 1e-3, 123456789012345.0, 1e22, 7.0,
                                                1e300, 0.1 + 0.2, 0.0))
    assert not any(floats.read_exactly(v) for v in [*INEXACT[:3], -0.0, 8459016230354207.0])


@pytest.fixture(scope="module")
def examples_index() -> Iterator[Index]:
    with vectorport.connect("chroma+memory://") as store:
        yield store.create_index("hyp_floats", 2, "cosine")


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=4))
def test_any_float_comes_back_exactly(examples_index: Index, values: list[float]) -> None:
    metadata = {f"k{i}": v for i, v in enumerate(values)}
    examples_index.upsert([{"id": "a", "vector": [1.0, 0.0], "metadata": metadata}])
    got = examples_index.fetch(["a"])["a"].metadata
    assert got == metadata and all(repr(got[k]) == repr(v) for k, v in metadata.items())


@pytest.fixture
def index() -> Iterator[Index]:
    with vectorport.connect("chroma+memory://") as store:
        yield store.create_index(f"f_{uuid.uuid4().hex[:8]}", 2, "cosine")


def test_inexact_floats_come_back_exactly_after_writes_and_patches(index: Index) -> None:
    index.upsert([{"id": f"r{i}", "vector": [1.0, float(i)], "metadata": {"x": v, "n": i}}
                  for i, v in enumerate(INEXACT)])
    assert {r.metadata["x"] for r in index.fetch([f"r{i}" for i in range(4)]).values()} == set(INEXACT)
    # replaced by a float read exactly, and by no float: no stale exact value survives
    index.upsert([{"id": "r0", "vector": [1.0, 0.0], "metadata": {"x": 0.5}},
                  {"id": "r1", "vector": [1.0, 1.0], "metadata": {"x": "text"}}])
    got = index.fetch(["r0", "r1"])
    assert got["r0"].metadata == {"x": 0.5} and got["r1"].metadata == {"x": "text"}
    assert isinstance(index, PatchableIndex)
    index.patch("r2", metadata={"n": 20})
    index.patch("r3", metadata={"y": 1 / 3})
    got = index.fetch(["r2", "r3"])
    assert got["r2"].metadata == {"x": INEXACT[2], "n": 20}
    assert got["r3"].metadata == {"x": INEXACT[3], "n": 3, "y": 1 / 3}
    assert index.count(filter={"x": INEXACT[2]}) == 1  # the embedded engine: exact operands


def test_a_server_refuses_filter_numbers_it_would_parse_as_others() -> None:
    with running_chroma_server() as url, vectorport.connect(url) as store:
        index = store.create_index("floats_srv", 2, "cosine")
        index.upsert([{"id": "a", "vector": [1.0, 0.0], "metadata": {"x": INEXACT[2]}},
                      {"id": "b", "vector": [1.0, 1.0], "metadata": {"x": 0.5}}])
        assert index.fetch(["a"])["a"].metadata["x"] == INEXACT[2]
        for flt in ({"x": INEXACT[2]}, {"x": {"$in": [0.5, INEXACT[0]]}},
                    {"$or": [{"n": 1}, {"x": {"$gte": INEXACT[1]}}]}):
            with pytest.raises(UnsupportedFeatureError, match="Chroma server"):
                index.count(filter=flt)
            with pytest.raises(UnsupportedFeatureError, match="chroma"):
                index.query([1.0, 0.0], filter=flt)
            with pytest.raises(UnsupportedFeatureError, match="chroma"):
                index.delete(filter=flt)
        assert index.count() == 2  # nothing deleted
        assert index.count(filter={"x": 0.5}) == 1 and index.count(filter={"x": {"$lt": 1}}) == 2
        assert index.count(filter={"x": -0.0}) == 0  # -0.0 compares as 0.0: not refused
