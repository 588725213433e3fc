"""Chroma's remembered collection handles (the hot paths skip the lookup) never serve a
collection that is gone: another client dropping and re-creating the index is seen."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("chromadb")

import vectorport
from vectorport.conformance import handles as stale


def test_a_stale_handle_is_looked_up_afresh(tmp_path: Path) -> None:
    url = f"chroma://{tmp_path}"
    v = np.array([1.0, 0.0, 0.0, 0.0], np.float32)
    with vectorport.connect(url) as first, vectorport.connect(url) as second:
        index = first.create_index("handles", 4, "cosine")
        index.upsert([("old", v, {"n": 1})])
        assert [m.id for m in index.query(v, top_k=5)] == ["old"]  # handle remembered

        second.delete_index("handles")
        again = second.create_index("handles", 4, "cosine")
        again.upsert([("new", v, {"n": 2})])

        assert [m.id for m in index.query(v, top_k=5)] == ["new"]
        index.upsert([("more", v * 2, {"n": 3})])  # into the re-created collection
        assert sorted(again.fetch(["old", "new", "more"])) == ["more", "new"]

        second.delete_index("handles")
        with pytest.raises(vectorport.IndexNotFoundError):
            index.query(v, top_k=5)


@pytest.mark.parametrize("where", ["memory", "folder"])
def test_a_handle_of_a_dropped_index_reaches_no_new_one(where: str, tmp_path: Path) -> None:
    """An index dropped and created again with other settings, through the same store
    (memory) or another connection of the process (folder): the old handle answers as
    the reference adapter's does (``IndexNotFoundError``) instead of counting, fetching,
    deleting and patching in the new index, and the new index is untouched."""
    want = stale.oracle_outcomes()
    if where == "memory":
        with vectorport.connect("chroma+memory://") as store:
            stale.assert_like_oracle(stale.stale_handle_outcomes(store, store), want)
        return
    url = f"chroma://{tmp_path}"
    with vectorport.connect(url) as store, vectorport.connect(url) as again:
        stale.assert_like_oracle(stale.stale_handle_outcomes(store, again), want)


def test_the_creating_handle_stays_valid_with_tuples_among_options(tmp_path: Path) -> None:
    """A spec read back from Chroma's JSON holds lists where the created one held
    tuples: the handle that created the index is still its handle."""
    with vectorport.connect(f"chroma://{tmp_path}") as store:
        index = store.create_index("tuple_idx", 2, "cosine",
                                   backend_options={"other": {"tags": ("a", "b")}})
        index.upsert([("a", [1.0, 0.0])])
        assert index.count() == 1
        assert store.index("tuple_idx").count() == 1
        assert [m.id for m in index.query([1.0, 0.0])] == ["a"]
